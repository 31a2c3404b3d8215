//! Error types: what a tool reports to the model, and what the registry refuses.

use serde_json::Value;

/// A tool failed; the message is written for the model and becomes an error result (R3).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    /// What went wrong and, where possible, what to do instead.
    pub message: String,
    /// Structured details to keep with the error result.
    pub details: Option<Value>,
}

impl ToolError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            details: None,
        }
    }

    /// The same error with structured details.
    #[must_use]
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }
}

/// Why the registry refused a tool.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// A tool with this name is already registered; built-ins and earlier tools win (R8).
    #[error("a tool named '{0}' is already registered")]
    Duplicate(String),
    /// The name is not usable in function calling.
    #[error(
        "invalid tool name '{name}': {reason} (names are 1-64 characters of A-Z, a-z, 0-9, '_' and '-')"
    )]
    InvalidName {
        /// The name as given.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The parameters schema is not a valid JSON Schema object.
    #[error("tool '{name}' has an invalid parameters schema: {reason}")]
    InvalidSchema {
        /// The tool.
        name: String,
        /// What the schema compiler said.
        reason: String,
    },
}

//! What starting the servers did: which started, which failed and why.

use std::fmt;

/// A server that did not start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpServerFailure {
    /// The configured name.
    pub server: String,
    /// Where it was configured (`path:line`).
    pub origin: String,
    /// Whether it was `required`: then the command must stop.
    pub required: bool,
    /// What went wrong, with the end of its stderr for a stdio server.
    pub message: String,
}

impl fmt::Display for McpServerFailure {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            formatter,
            "the MCP server '{}' ({}) did not start: {}",
            self.server, self.origin, self.message
        )
    }
}

/// What [`McpClients::start`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct McpStartReport {
    /// The servers that started, with how many tools each gave.
    pub started: Vec<(String, usize)>,
    /// The servers that did not.
    pub failures: Vec<McpServerFailure>,
    /// The servers skipped because `enabled = false`.
    pub disabled: Vec<String>,
}

impl McpStartReport {
    /// The first failure of a `required` server.
    pub fn required_failure(&self) -> Option<&McpServerFailure> {
        self.failures.iter().find(|failure| failure.required)
    }
}

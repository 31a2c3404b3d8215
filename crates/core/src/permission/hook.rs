//! PreToolUse hooks as the permission policy sees them: something that looks at a call before
//! the decision and may decide, rewrite the arguments or add context.
//!
//! Core defines the contract; `toolhost-agent` implements it with configured commands.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::session::SessionInfo;

use super::mode::PermissionMode;

/// A call as a PreToolUse hook sees it.
#[derive(Clone, Copy, Debug)]
pub struct HookCall<'a> {
    /// The id of the call.
    pub call_id: &'a str,
    /// The tool's name.
    pub tool: &'a str,
    /// The validated arguments.
    pub args: &'a Value,
    /// The session the call belongs to.
    pub session: &'a SessionInfo,
    /// The permission mode in force.
    pub mode: PermissionMode,
}

/// What a hook may decide.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HookDecision {
    /// Run without asking (deny rules and the command policy still refuse).
    Allow,
    /// Ask a person, even when rules would allow.
    Ask,
    /// Refuse; the reason goes to the model.
    Deny,
}

/// What the hooks of one call said, combined.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HookVerdict {
    /// The decision, when a hook made one (deny wins over ask, ask over allow).
    pub decision: Option<HookDecision>,
    /// Why, for the model (a blocking hook's stderr, a JSON `reason`).
    pub reason: Option<String>,
    /// Arguments to run the tool with instead; the pipeline validates them again.
    pub updated_args: Option<Value>,
    /// Text added to the result the model reads.
    pub context: Option<String>,
}

/// Runs before the permission decision of every call (the `PreToolUse` event).
///
/// A hook that fails must say so, usually with [`HookDecision::Deny`] and a reason: a guard
/// that crashed must not let the call through unnoticed.
#[async_trait::async_trait]
pub trait PreToolUseHook: Send + Sync {
    /// Looks at one call.
    async fn before(&self, call: HookCall<'_>) -> HookVerdict;
}

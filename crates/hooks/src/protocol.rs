//! The hook protocol: the JSON a hook reads on stdin and may print on stdout.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolhost_core::ContentBlock;

/// What a hook reads on stdin.
#[derive(Debug, Serialize)]
pub(crate) struct HookInput<'a> {
    /// `PreToolUse` or `PostToolUse`.
    pub hook_event_name: &'static str,
    pub call_id: &'a str,
    pub session_id: Option<&'a str>,
    /// The workspace root.
    pub cwd: &'a str,
    pub permission_mode: &'static str,
    pub tool_name: &'a str,
    pub tool_input: &'a Value,
    /// PostToolUse only: the result as the tool returned it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_response: Option<Value>,
}

/// What a hook may print on stdout (nothing at all is fine too). Unknown fields are ignored
/// so that hooks written for other agents keep working; known ones are type-checked.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct HookOutput {
    /// PreToolUse: `allow`, `deny` or `ask`; PostToolUse: `block`.
    #[serde(default, alias = "permissionDecision")]
    pub decision: Option<OutputDecision>,
    /// Why, for the model.
    #[serde(default, alias = "permissionDecisionReason")]
    pub reason: Option<String>,
    /// PreToolUse: the arguments to run the tool with instead.
    #[serde(default, alias = "updatedInput")]
    pub updated_input: Option<Value>,
    /// Text for the model, appended to the result.
    #[serde(default, alias = "additionalContext")]
    pub additional_context: Option<String>,
    /// PostToolUse: the result to return instead.
    #[serde(default, alias = "updatedResult")]
    pub updated_result: Option<UpdatedResult>,
}

/// A decision printed by a hook.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum OutputDecision {
    Allow,
    Ask,
    Deny,
    Block,
}

/// A result rewritten by a PostToolUse hook.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct UpdatedResult {
    /// Text, or content blocks.
    pub content: ResultContent,
    /// The error flag (default: unchanged).
    #[serde(default)]
    pub is_error: Option<bool>,
    /// Details (default: unchanged).
    #[serde(default)]
    pub details: Option<Value>,
}

/// `"text"` or `[{"type": "text", "text": "…"}]`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum ResultContent {
    Text(String),
    Blocks(Vec<ContentBlock>),
}

impl ResultContent {
    pub(crate) fn into_blocks(self) -> Vec<ContentBlock> {
        match self {
            Self::Text(text) => vec![ContentBlock::text(text)],
            Self::Blocks(blocks) => blocks,
        }
    }
}

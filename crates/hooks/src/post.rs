//! PostToolUse command hooks, as a [`ResultHandler`] (R6's external form).

use std::path::Path;
use std::sync::Arc;

use toolhost_core::permission::PermissionPolicy;
use toolhost_core::{CallRequest, ContentBlock, ResultHandler, ToolOutput};

use super::protocol::{HookInput, OutputDecision};
use super::{HookRun, HookRunner};
use toolhost_config::HookCommand;

/// The configured `[[hooks.PostToolUse]]` entries, run in order after every matching call.
///
/// Each may replace the result (`updated_result`), add context, or block (exit 2 or
/// `"decision": "block"`), which turns the result into an error carrying the reason. A hook
/// that fails leaves the result as it was and appends a note saying so.
#[derive(Debug)]
pub struct PostToolUseHooks {
    hooks: Vec<HookCommand>,
    runner: HookRunner,
    /// Where the mode in force is read.
    policy: Arc<PermissionPolicy>,
}

impl PostToolUseHooks {
    /// Hooks run in `workspace`, told the mode `policy` is in at each call.
    pub fn new(hooks: Vec<HookCommand>, workspace: &Path, policy: Arc<PermissionPolicy>) -> Self {
        Self {
            hooks,
            runner: HookRunner::new(workspace),
            policy,
        }
    }

    /// These hooks and then `more` (a sub-agent definition's own), told the mode of `policy`,
    /// run in `workspace` (the sub-agent's).
    pub fn with_more(
        &self,
        more: Vec<HookCommand>,
        policy: Arc<PermissionPolicy>,
        workspace: &Path,
    ) -> Self {
        Self {
            hooks: self.hooks.iter().cloned().chain(more).collect(),
            runner: HookRunner::new(workspace),
            policy,
        }
    }
}

#[async_trait::async_trait]
impl ResultHandler for PostToolUseHooks {
    async fn handle(&self, request: CallRequest<'_>, output: &mut ToolOutput) {
        let cwd = self.runner.workspace_text();
        let mode = self.policy.mode();
        for hook in self
            .hooks
            .iter()
            .filter(|hook| hook.matches(&request.spec.name))
        {
            let response = serde_json::to_value(&*output).unwrap_or_default();
            let input = HookInput {
                hook_event_name: "PostToolUse",
                call_id: request.call_id,
                session_id: request.session.session_id.as_deref(),
                cwd: &cwd,
                permission_mode: mode.as_str(),
                tool_name: &request.spec.name,
                tool_input: request.args,
                tool_response: Some(response),
            };
            match self.runner.run(hook, input.hook_event_name, &input).await {
                HookRun::Answered(answer) => {
                    if let Some(updated) = answer.updated_result {
                        output.content = updated.content.into_blocks();
                        if let Some(is_error) = updated.is_error {
                            output.is_error = is_error;
                        }
                        if updated.details.is_some() {
                            output.details = updated.details;
                        }
                    }
                    if answer.decision == Some(OutputDecision::Block) {
                        output.is_error = true;
                        output.content.push(ContentBlock::text(format!(
                            "The PostToolUse hook `{}` blocked this result: {}",
                            hook.command,
                            answer.reason.as_deref().unwrap_or("(no reason given)")
                        )));
                    }
                    if let Some(context) = answer.additional_context {
                        output.content.push(ContentBlock::text(context));
                    }
                }
                HookRun::Blocked(stderr) => {
                    output.is_error = true;
                    output.content.push(ContentBlock::text(format!(
                        "The PostToolUse hook `{}` blocked this result: {stderr}",
                        hook.command
                    )));
                }
                HookRun::Failed(problem) => {
                    tracing::warn!(hook = %hook.command, origin = %hook.origin, "PostToolUse hook failed: {problem}");
                    output.content.push(ContentBlock::text(format!(
                        "[The PostToolUse hook `{}` ({}) failed: {problem}. The result above \
                         is as the tool returned it.]",
                        hook.command, hook.origin
                    )));
                }
            }
        }
    }
}

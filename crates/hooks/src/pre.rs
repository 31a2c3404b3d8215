//! PreToolUse command hooks, as the permission policy's [`PreToolUseHook`].

use std::path::Path;

use toolhost_core::permission::{HookCall, HookDecision, HookVerdict, PreToolUseHook};

use super::protocol::{HookInput, OutputDecision};
use super::{HookRun, HookRunner};
use toolhost_config::HookCommand;

/// The configured `[[hooks.PreToolUse]]` entries, run in order on every matching call.
///
/// Each hook sees the arguments as the previous one left them. A block (exit 2), a `deny`,
/// or a failure stops the chain and refuses the call; otherwise `ask` wins over `allow`, and
/// contexts are joined.
#[derive(Debug)]
pub struct PreToolUseHooks {
    hooks: Vec<HookCommand>,
    runner: HookRunner,
}

impl PreToolUseHooks {
    /// Hooks run in `workspace`; each is told the mode in force at its call.
    pub fn new(hooks: Vec<HookCommand>, workspace: &Path) -> Self {
        Self {
            hooks,
            runner: HookRunner::new(workspace),
        }
    }

    /// These hooks and then `more` (a sub-agent definition's own), run in `workspace` (the
    /// sub-agent's).
    pub fn with_more(&self, more: Vec<HookCommand>, workspace: &Path) -> Self {
        Self {
            hooks: self.hooks.iter().cloned().chain(more).collect(),
            runner: HookRunner::new(workspace),
        }
    }
}

#[async_trait::async_trait]
impl PreToolUseHook for PreToolUseHooks {
    async fn before(&self, call: HookCall<'_>) -> HookVerdict {
        let mut verdict = HookVerdict::default();
        let cwd = self.runner.workspace_text();
        for hook in self.hooks.iter().filter(|hook| hook.matches(call.tool)) {
            let args = verdict.updated_args.as_ref().unwrap_or(call.args);
            let input = HookInput {
                hook_event_name: "PreToolUse",
                call_id: call.call_id,
                session_id: call.session.session_id.as_deref(),
                cwd: &cwd,
                permission_mode: call.mode.as_str(),
                tool_name: call.tool,
                tool_input: args,
                tool_response: None,
            };
            let output = match self.runner.run(hook, input.hook_event_name, &input).await {
                HookRun::Answered(output) => output,
                HookRun::Blocked(stderr) => {
                    return refused(format!(
                        "The PreToolUse hook `{}` blocked it: {stderr}",
                        hook.command
                    ));
                }
                HookRun::Failed(problem) => {
                    tracing::warn!(hook = %hook.command, origin = %hook.origin, "PreToolUse hook failed: {problem}");
                    return refused(format!(
                        "The PreToolUse hook `{}` failed, so the call was not run: {problem}. \
                         Tell the user; the hook is configured at {}.",
                        hook.command, hook.origin
                    ));
                }
            };
            if let Some(updated) = output.updated_input {
                if !updated.is_object() {
                    return refused(format!(
                        "The PreToolUse hook `{}` failed, so the call was not run: its \
                         `updated_input` is not a JSON object. Tell the user; the hook is \
                         configured at {}.",
                        hook.command, hook.origin
                    ));
                }
                verdict.updated_args = Some(updated);
            }
            if let Some(context) = output.additional_context {
                verdict.context = Some(match verdict.context.take() {
                    Some(earlier) => format!("{earlier}\n{context}"),
                    None => context,
                });
            }
            let decision = match output.decision {
                None => None,
                Some(OutputDecision::Allow) => Some(HookDecision::Allow),
                Some(OutputDecision::Ask) => Some(HookDecision::Ask),
                Some(OutputDecision::Deny | OutputDecision::Block) => Some(HookDecision::Deny),
            };
            if let Some(reason) = output.reason {
                verdict.reason = Some(reason);
            }
            if decision == Some(HookDecision::Deny) {
                verdict.decision = decision;
                return verdict;
            }
            if decision == Some(HookDecision::Ask) || verdict.decision.is_none() {
                verdict.decision = decision.or(verdict.decision);
            }
        }
        verdict
    }
}

fn refused(reason: String) -> HookVerdict {
    HookVerdict {
        decision: Some(HookDecision::Deny),
        reason: Some(reason),
        updated_args: None,
        context: None,
    }
}

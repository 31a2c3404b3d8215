//! PreCompact command hooks: run before a conversation is summarised, they may add
//! instructions for the summary ("keep the API names", "list the failing tests").

use std::path::Path;
use std::sync::Arc;

use serde::Serialize;
use toolhost_core::permission::PermissionPolicy;

use super::protocol::HookOutput;
use super::{HookRunner, RawHookRun};
use toolhost_config::HookCommand;

/// What a PreCompact hook reads on stdin.
#[derive(Debug, Serialize)]
struct PreCompactInput<'a> {
    hook_event_name: &'static str,
    session_id: Option<&'a str>,
    /// The workspace root.
    cwd: &'a str,
    permission_mode: &'static str,
    /// `manual` (`/compact`) or `auto` (the conversation neared the context window).
    trigger: &'static str,
    /// What `/compact` was given, if anything.
    custom_instructions: Option<&'a str>,
}

/// The configured `[[hooks.PreCompact]]` entries; a `matcher` matches the trigger (`manual`
/// or `auto`), as in Claude Code.
///
/// A hook that exits 0 adds its stdout to the summariser's instructions: plain text as it is,
/// or a JSON object's `additionalContext`. Any other outcome (exit 2 included: a compaction
/// that is due cannot be refused, the context would overflow) is logged and the compaction
/// goes on without that hook's words.
#[derive(Debug)]
pub struct PreCompactHooks {
    hooks: Vec<HookCommand>,
    runner: HookRunner,
    /// Where the mode in force is read.
    policy: Arc<PermissionPolicy>,
}

impl PreCompactHooks {
    /// Hooks run in `workspace`, told the mode `policy` is in.
    pub fn new(hooks: Vec<HookCommand>, workspace: &Path, policy: Arc<PermissionPolicy>) -> Self {
        Self {
            hooks,
            runner: HookRunner::new(workspace),
            policy,
        }
    }

    /// Runs the hooks matching `trigger`; the instructions to summarise with: `given` (from
    /// `/compact`) followed by what each hook added.
    pub async fn instructions(
        &self,
        trigger: &'static str,
        given: Option<&str>,
        session_id: Option<&str>,
    ) -> Option<String> {
        let cwd = self.runner.workspace_text();
        let input = PreCompactInput {
            hook_event_name: "PreCompact",
            session_id,
            cwd: &cwd,
            permission_mode: self.policy.mode().as_str(),
            trigger,
            custom_instructions: given,
        };
        let mut parts: Vec<String> = given
            .map(str::trim)
            .filter(|text| !text.is_empty())
            .map(str::to_owned)
            .into_iter()
            .collect();
        for hook in self.hooks.iter().filter(|hook| hook.matches(trigger)) {
            let problem = match self.runner.run_raw(hook, "PreCompact", &input).await {
                RawHookRun::Exited(stdout) => match added_instructions(&stdout) {
                    Ok(Some(text)) => {
                        parts.push(text);
                        continue;
                    }
                    Ok(None) => continue,
                    Err(problem) => problem,
                },
                RawHookRun::Blocked(stderr) => format!(
                    "it exited with status 2, but a compaction cannot be refused; it goes on \
                     ({stderr})"
                ),
                RawHookRun::Failed(problem) => problem,
            };
            tracing::warn!(hook = %hook.command, origin = %hook.origin, "PreCompact hook failed: {problem}");
        }
        (!parts.is_empty()).then(|| parts.join("\n\n"))
    }
}

/// A hook's stdout as instructions: a JSON object's `additionalContext`, or the text itself.
fn added_instructions(stdout: &str) -> Result<Option<String>, String> {
    let text = stdout.trim();
    if text.is_empty() {
        return Ok(None);
    }
    if !text.starts_with('{') {
        return Ok(Some(text.to_owned()));
    }
    let output: HookOutput = serde_json::from_str(text).map_err(|error| {
        format!(
            "its stdout starts like a JSON object but is not one ({error}); print plain text, or \
             {{\"additionalContext\": \"…\"}}"
        )
    })?;
    Ok(output
        .additional_context
        .map(|context| context.trim().to_owned())
        .filter(|context| !context.is_empty()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn stdout_is_plain_text_or_a_json_object_with_additional_context() {
        assert_eq!(
            added_instructions("  keep the API names\n")
                .unwrap()
                .as_deref(),
            Some("keep the API names")
        );
        assert_eq!(
            added_instructions(r#"{"additionalContext": "list the failing tests"}"#)
                .unwrap()
                .as_deref(),
            Some("list the failing tests")
        );
        assert_eq!(added_instructions("").unwrap(), None);
        assert_eq!(
            added_instructions(r#"{"decision": "allow"}"#).unwrap(),
            None
        );
        let error = added_instructions("{not json").unwrap_err();
        assert!(error.contains("additionalContext"), "{error}");
    }
}

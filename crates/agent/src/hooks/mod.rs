//! Command hooks (R37): `[[hooks.PreToolUse]]` and `[[hooks.PostToolUse]]` run through the
//! process helper of `toolhost-exec`.
//!
//! A hook is a shell command run with `bash -c` in the workspace, with the call as JSON on
//! stdin. Exit 0: its stdout, when not empty, is a JSON object that may decide, rewrite or add
//! context. Exit 2: the call is blocked and stderr goes to the model. Anything else (another
//! status, a timeout, a crash, output that is not JSON) is a failure that is reported: a
//! PreToolUse failure refuses the call, a PostToolUse failure is appended to the result.

mod post;
mod pre;
pub(crate) mod protocol;

use std::path::{Path, PathBuf};

use toolhost_core::permission::PermissionMode;
use toolhost_exec::{ProcessSpec, Termination};

use crate::config::HookCommand;
use protocol::{HookInput, HookOutput};

pub use post::PostToolUseHooks;
pub use pre::PreToolUseHooks;

/// How much of a hook's stdout and stderr is kept (R42).
pub const HOOK_OUTPUT_CAP_BYTES: usize = 64 * 1024;

/// The exit status with which a hook blocks a call.
pub const BLOCKING_EXIT_CODE: i32 = 2;

/// What one hook run came to.
#[derive(Debug)]
pub(crate) enum HookRun {
    /// Exit 0, with its parsed stdout (default when it printed nothing).
    Answered(Box<HookOutput>),
    /// Exit 2, with its stderr.
    Blocked(String),
    /// Anything else: what went wrong.
    Failed(String),
}

/// Where hooks run and what they are told.
#[derive(Clone, Debug)]
pub(crate) struct HookRunner {
    pub(crate) workspace: PathBuf,
    pub(crate) mode: PermissionMode,
}

impl HookRunner {
    pub(crate) fn new(workspace: &Path, mode: PermissionMode) -> Self {
        Self {
            workspace: workspace.to_owned(),
            mode,
        }
    }

    pub(crate) fn workspace_text(&self) -> String {
        self.workspace.display().to_string()
    }

    /// Runs one hook with `input` on stdin.
    pub(crate) async fn run(&self, hook: &HookCommand, input: &HookInput<'_>) -> HookRun {
        let stdin = match serde_json::to_vec(input) {
            Ok(bytes) => bytes,
            Err(error) => return HookRun::Failed(format!("cannot encode its input: {error}")),
        };
        let outcome = ProcessSpec::bash(&hook.command)
            .working_dir(&self.workspace)
            .env("TOOLHOST_WORKSPACE", &self.workspace)
            .env("TOOLHOST_HOOK_EVENT", input.hook_event_name)
            .timeout(hook.timeout)
            .output_cap(HOOK_OUTPUT_CAP_BYTES)
            .stdin_bytes(stdin)
            .run()
            .await;
        let outcome = match outcome {
            Ok(outcome) => outcome,
            Err(error) => return HookRun::Failed(error.to_string()),
        };
        let stderr = outcome.stderr.text.trim();
        match (outcome.termination, outcome.exit_code) {
            (Termination::TimedOut, _) => HookRun::Failed(format!(
                "it timed out after {} s (set `timeout` in seconds to give it longer)",
                hook.timeout.as_secs()
            )),
            (Termination::Cancelled, _) => HookRun::Failed("it was cancelled".to_owned()),
            (Termination::Exited, Some(0)) => parse_output(&outcome.stdout.text),
            (Termination::Exited, Some(BLOCKING_EXIT_CODE)) => {
                HookRun::Blocked(if stderr.is_empty() {
                    "(the hook gave no reason on stderr)".to_owned()
                } else {
                    stderr.to_owned()
                })
            }
            (Termination::Exited, Some(code)) => {
                HookRun::Failed(with_stderr(format!("it exited with status {code}"), stderr))
            }
            (Termination::Exited, None) => HookRun::Failed(with_stderr(
                format!(
                    "it was killed by signal {}",
                    outcome.signal.unwrap_or_default()
                ),
                stderr,
            )),
        }
    }
}

fn parse_output(stdout: &str) -> HookRun {
    let text = stdout.trim();
    if text.is_empty() {
        return HookRun::Answered(Box::default());
    }
    match serde_json::from_str::<HookOutput>(text) {
        Ok(output) => HookRun::Answered(Box::new(output)),
        Err(error) => HookRun::Failed(format!(
            "its stdout is not the JSON object hooks answer with ({error}); print nothing, or \
             an object such as {{\"decision\": \"deny\", \"reason\": \"…\"}}"
        )),
    }
}

fn with_stderr(what: String, stderr: &str) -> String {
    if stderr.is_empty() {
        what
    } else {
        format!("{what}: {stderr}")
    }
}

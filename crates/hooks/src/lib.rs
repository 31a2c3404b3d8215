//! Command hooks (R37): `[[hooks.PreToolUse]]`, `[[hooks.PostToolUse]]` and
//! `[[hooks.PreCompact]]` run through the process helper of `toolhost-exec`.
//!
//! A hook is a shell command run with `bash -c` in the workspace, with the call as JSON on
//! stdin. Exit 0: its stdout, when not empty, is a JSON object that may decide, rewrite or add
//! context. Exit 2: the call is blocked and stderr goes to the model. Anything else (another
//! status, a timeout, a crash, output that is not JSON) is a failure that is reported: a
//! PreToolUse failure refuses the call, a PostToolUse failure is appended to the result.

mod compact;
mod post;
mod pre;
pub(crate) mod protocol;

use std::path::{Path, PathBuf};

use serde::Serialize;
use toolhost_exec::{ProcessSpec, Termination};

use protocol::HookOutput;
use toolhost_config::HookCommand;

pub use compact::PreCompactHooks;
pub use post::PostToolUseHooks;
pub use pre::PreToolUseHooks;

/// How much of a hook's stdout and stderr is kept (R42).
pub const HOOK_OUTPUT_CAP_BYTES: usize = 64 * 1024;

/// The exit status with which a hook blocks a call.
pub const BLOCKING_EXIT_CODE: i32 = 2;

/// What one hook run came to, its stdout not yet read as JSON.
#[derive(Debug)]
pub(crate) enum RawHookRun {
    /// Exit 0, with its stdout.
    Exited(String),
    /// Exit 2, with its stderr.
    Blocked(String),
    /// Anything else: what went wrong.
    Failed(String),
}

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

/// Where hooks run. (The permission mode they are told is read at each run: `/mode` and
/// Shift-Tab change it while the hooks stay.)
#[derive(Clone, Debug)]
pub(crate) struct HookRunner {
    pub(crate) workspace: PathBuf,
}

impl HookRunner {
    pub(crate) fn new(workspace: &Path) -> Self {
        Self {
            workspace: workspace.to_owned(),
        }
    }

    pub(crate) fn workspace_text(&self) -> String {
        self.workspace.display().to_string()
    }

    /// Runs one hook with `input` on stdin; its stdout is the JSON object of the protocol.
    pub(crate) async fn run(
        &self,
        hook: &HookCommand,
        event: &'static str,
        input: &impl Serialize,
    ) -> HookRun {
        match self.run_raw(hook, event, input).await {
            RawHookRun::Exited(stdout) => parse_output(&stdout),
            RawHookRun::Blocked(stderr) => HookRun::Blocked(stderr),
            RawHookRun::Failed(problem) => HookRun::Failed(problem),
        }
    }

    /// Runs one hook for `event` with `input` on stdin.
    pub(crate) async fn run_raw(
        &self,
        hook: &HookCommand,
        event: &'static str,
        input: &impl Serialize,
    ) -> RawHookRun {
        let stdin = match serde_json::to_vec(input) {
            Ok(bytes) => bytes,
            Err(error) => return RawHookRun::Failed(format!("cannot encode its input: {error}")),
        };
        let mut spec = ProcessSpec::bash(&hook.command).working_dir(&self.workspace);
        for (name, value) in &hook.env {
            spec = spec.env(name, value);
        }
        let outcome = spec
            .env("TOOLHOST_WORKSPACE", &self.workspace)
            .env("TOOLHOST_HOOK_EVENT", event)
            .timeout(hook.timeout)
            .output_cap(HOOK_OUTPUT_CAP_BYTES)
            .stdin_bytes(stdin)
            .run()
            .await;
        let outcome = match outcome {
            Ok(outcome) => outcome,
            Err(error) => return RawHookRun::Failed(error.to_string()),
        };
        let stderr = outcome.stderr.text.trim();
        match (outcome.termination, outcome.exit_code) {
            (Termination::TimedOut, _) => RawHookRun::Failed(format!(
                "it timed out after {} s (set `timeout` in seconds to give it longer)",
                hook.timeout.as_secs()
            )),
            (Termination::Cancelled, _) => RawHookRun::Failed("it was cancelled".to_owned()),
            (Termination::Exited, Some(0)) => RawHookRun::Exited(outcome.stdout.text),
            (Termination::Exited, Some(BLOCKING_EXIT_CODE)) => {
                RawHookRun::Blocked(if stderr.is_empty() {
                    "(the hook gave no reason on stderr)".to_owned()
                } else {
                    stderr.to_owned()
                })
            }
            (Termination::Exited, Some(code)) => {
                RawHookRun::Failed(with_stderr(format!("it exited with status {code}"), stderr))
            }
            (Termination::Exited, None) => RawHookRun::Failed(with_stderr(
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

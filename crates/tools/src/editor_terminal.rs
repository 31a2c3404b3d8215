//! An editor's terminal, for a session an editor drives (`toolhost acp` with a client that
//! offers `terminal/*`, when `[shell] editor_terminal` is on): Bash runs its command there, so
//! that the user watches it live in the editor. The command is judged first exactly as for
//! toolhost's own process helper (the permission rules before the call, the deny list in
//! Bash); what changes is who runs it — the editor, outside toolhost's OS sandbox.

use std::path::PathBuf;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use toolhost_core::ToolContext;
pub use toolhost_exec::Termination;

/// A command for the editor to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TerminalCommand {
    /// The program: `bash`.
    pub program: String,
    /// Its arguments: `-c` and the command line.
    pub args: Vec<String>,
    /// The folder it runs in (the workspace root).
    pub cwd: PathBuf,
    /// Variables on top of the editor's environment.
    pub env: Vec<(String, String)>,
    /// The most output bytes the editor keeps (it drops the beginning beyond that).
    pub output_limit: usize,
    /// When the command is stopped.
    pub timeout: Duration,
}

/// What a command run in the editor's terminal came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TerminalRun {
    /// The terminal's id in the editor (its tool call shows that terminal).
    pub terminal_id: String,
    /// The output as the terminal kept it.
    pub output: String,
    /// Whether the editor dropped the beginning of the output to stay within the limit.
    pub truncated: bool,
    /// The exit code, when the command exited on its own.
    pub exit_code: Option<u32>,
    /// The signal that ended it, by name (`SIGKILL`), when one did.
    pub signal: Option<String>,
    /// Whether it ended on its own, timed out or was cancelled.
    pub termination: Termination,
    /// From the terminal's creation to the command's end.
    pub duration: Duration,
}

/// Runs commands in an editor's terminals.
#[async_trait::async_trait]
pub trait EditorTerminal: Send + Sync {
    /// Runs `command` in a new terminal for the call `ctx` until it ends, times out or the
    /// call is cancelled (then it is killed), and releases the terminal; `Err` says why it
    /// could not run.
    async fn run(&self, command: TerminalCommand, ctx: &ToolContext)
    -> Result<TerminalRun, String>;
}

/// The editor terminal of a session, kept in its [`toolhost_core::SessionState`]: set by the
/// face that runs the session, read by Bash.
#[derive(Default)]
pub struct SessionTerminal(RwLock<Option<Arc<dyn EditorTerminal>>>);

impl SessionTerminal {
    /// From now on the session's commands run in `terminal`.
    pub fn set(&self, terminal: Arc<dyn EditorTerminal>) {
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = Some(terminal);
    }

    /// The editor terminal of the session `ctx` belongs to, if it has one.
    pub fn of(ctx: &ToolContext) -> Option<Arc<dyn EditorTerminal>> {
        ctx.session()
            .state
            .get_or_default::<SessionTerminal>()
            .0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

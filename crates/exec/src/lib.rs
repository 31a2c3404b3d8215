//! Running processes safely for toolhost.
//!
//! Three pieces, used by every tool that starts a subprocess (the Bash tool, a custom tool's
//! `exec`, a stdio MCP server):
//!
//! - [`ProcessSpec`], the one process helper: its own process group, a clean environment,
//!   a null stdin, a timeout and a cancellation token that stop the whole process tree
//!   (SIGTERM, then SIGKILL after [`KILL_GRACE_PERIOD`]), output streamed to a callback as it
//!   arrives and captured head + tail within a cap, optionally written whole to a file.
//!
//! ```no_run
//! use std::time::Duration;
//! use toolhost_exec::ProcessSpec;
//!
//! # async fn example() -> Result<(), toolhost_exec::ProcessError> {
//! let outcome = ProcessSpec::bash("cargo test 2>&1")
//!     .working_dir("/work/project")
//!     .timeout(Duration::from_secs(120))
//!     .full_output_file("/tmp/session/bash-1.log")
//!     .on_output(|chunk| eprint!("{}", String::from_utf8_lossy(&chunk.bytes)))
//!     .run()
//!     .await?;
//! println!("exit {:?}: {}", outcome.exit_code, outcome.combined.text);
//! # Ok(())
//! # }
//! ```
//!
//! - [`CommandPolicy`], the command policy: a command line parsed with tree-sitter-bash into
//!   every [`SimpleCommand`] it runs (nested ones too), a [`Verdict`] from the deny list, the
//!   [`RiskWarning`]s, and the paths that lead outside the workspace. Permission rules such as
//!   `Bash(git status:*)` are matched per simple command ([`SimpleCommand::matches_prefix`]).
//!
//! ```
//! use toolhost_exec::{CommandPolicy, DenyRule, Verdict};
//!
//! let policy = CommandPolicy::new("/work/project");
//! let analysis = policy.analyze("echo ok && bash -c 'rm -rf ~'");
//! assert!(matches!(analysis.verdict, Verdict::Denied { rule: DenyRule::RecursiveDeleteOfRoot, .. }));
//! assert!(!policy.analyze("echo 'rm -rf /'").is_denied());
//! ```
//!
//! - [`SandboxPolicy`], the OS sandbox: Landlock rules built in the parent and applied in the
//!   child before `exec`, so a sandboxed run reads everywhere but writes only to its writable
//!   roots. [`ProcessOutcome::sandbox`] says whether the kernel enforced it.

mod policy;
mod process;
mod sandbox;

pub use process::{
    CapturedOutput, DEFAULT_OUTPUT_CAP_BYTES, DEFAULT_TIMEOUT, FIXED_VARIABLES,
    INHERITED_VARIABLES, KILL_GRACE_PERIOD, LeftoverProcesses, OUTPUT_DRAIN_TIMEOUT,
    OutputCallback, OutputChunk, OutputStream, PreparedCommand, ProcessError, ProcessGroup,
    ProcessOutcome, ProcessSpec, Termination,
};

pub use policy::{
    CommandAnalysis, CommandPolicy, DenyRule, MAX_NESTING_DEPTH, OutsidePath, Redirect,
    RedirectDirection, RiskKind, RiskWarning, SimpleCommand, Verdict, Word, command_matches_prefix,
    normalize as normalize_path,
};
pub use sandbox::{
    NetworkAccess, SandboxError, SandboxPolicy, SandboxStatus, WRITABLE_DEVICES, sandbox_support,
};

//! `[shell]`: the Bash tool's limits and kernel sandbox, with their defaults (R22, R38, R42).

use std::path::PathBuf;
use std::time::Duration;

/// Default time a command may run (R22: 2 minutes, `exec_timeout`).
pub const DEFAULT_BASH_TIMEOUT: Duration = Duration::from_secs(120);
/// The longest timeout a call may ask for.
pub const MAX_BASH_TIMEOUT: Duration = Duration::from_secs(600);
/// Output kept in the result (R22: 100 KB, head and tail); the rest is in the full-output file.
pub const BASH_OUTPUT_CAP: usize = 100 * 1024;

/// Whether and how commands are sandboxed by the kernel (R38).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ShellSandbox {
    /// Read everywhere, write nowhere.
    ReadOnly,
    /// Write only to the workspace, the temp folder and configured roots (the default).
    #[default]
    WorkspaceWrite,
    /// No kernel sandbox: the command policy alone.
    Off,
}

impl ShellSandbox {
    /// The name used in configuration: `read-only`, `workspace-write` or `off`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ReadOnly => "read-only",
            Self::WorkspaceWrite => "workspace-write",
            Self::Off => "off",
        }
    }
}

impl std::str::FromStr for ShellSandbox {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "read-only" => Ok(Self::ReadOnly),
            "workspace-write" => Ok(Self::WorkspaceWrite),
            "off" => Ok(Self::Off),
            other => Err(format!(
                "unknown sandbox mode '{other}': use \"workspace-write\", \"read-only\" or \"off\""
            )),
        }
    }
}

/// `[shell]`: overrides of the Bash tool's limits and sandbox (R22, R38, R42). Unset values
/// keep the tool's defaults.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShellConfig {
    /// `exec_timeout`: the timeout of a command whose call gives none (default 120 s).
    pub exec_timeout: Option<Duration>,
    /// `max_timeout`: the longest timeout a call may ask for (default 600 s).
    pub max_timeout: Option<Duration>,
    /// `max_output_bytes`: output kept in the result, head and tail (default 100 KB).
    pub max_output_bytes: Option<usize>,
    /// `sandbox`: `workspace-write` (default), `read-only` or `off`.
    pub sandbox: Option<ShellSandbox>,
    /// `network`: `false` denies TCP connections to sandboxed commands.
    pub network: Option<bool>,
    /// `writable_roots`: more folders writable under `workspace-write`; relative paths are
    /// resolved against the workspace, `~/` against `$HOME`. Lists concatenate across files.
    pub writable_roots: Vec<PathBuf>,
    /// `env`: variables every command gets on top of its clean environment (Claude Code's
    /// settings `env`, then `[shell.env]`; a later file's value wins for one name).
    pub env: std::collections::BTreeMap<String, String>,
    /// `editor_terminal`: in `toolhost acp`, with an editor that offers terminals, Bash runs
    /// its commands in the editor's terminal (outside toolhost's OS sandbox). Default off.
    pub editor_terminal: Option<bool>,
}

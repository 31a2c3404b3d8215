//! Bash (R22): runs a shell command in the workspace, through the command policy, the process
//! helper and the OS sandbox of `toolhost-exec` — or, in a session an editor drives with its
//! terminal offered, in that terminal ([`crate::editor_terminal`]) after the same checks.
//!
//! What a model gets back is what it needs to carry on: the combined output (head and tail
//! kept within [`BASH_OUTPUT_CAP`], the whole output in a file whose path is given), the exit
//! code, and in words why a command was refused, timed out or was cancelled.

use std::fmt::{self, Write as _};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolhost_core::{
    PermissionFamily, PermissionSubject, ShellSubject, ToolAnnotations, ToolContext, ToolError,
    ToolOutput, ToolSpec, ToolUpdate, TypedTool,
};
pub use toolhost_exec::NetworkAccess;
use toolhost_exec::{
    CommandAnalysis, CommandPolicy, OutputChunk, ProcessOutcome, ProcessSpec, RiskKind,
    SandboxPolicy, SandboxStatus, Termination, Verdict,
};

use crate::editor_terminal::{SessionTerminal, TerminalCommand, TerminalRun};
use crate::workspace::Workspace;

use toolhost_config::shell::ShellConfig;
pub use toolhost_config::shell::{
    BASH_OUTPUT_CAP, DEFAULT_BASH_TIMEOUT, MAX_BASH_TIMEOUT, ShellSandbox,
};

/// Characters beyond the output cap for warnings, the exit status and the full-output path.
const STATUS_ALLOWANCE: usize = 4 * 1024;

/// Variables a command gets on top of its clean environment. Bash asks each time it runs a
/// command rather than when it is made, so that whatever provides them can start on first
/// use: the CLI starts its MCP bridge for the built-in providers only once a command runs.
#[async_trait::async_trait]
pub trait CommandEnvironment: Send + Sync + fmt::Debug {
    /// The variables to add for the command of the call `ctx` (whose
    /// [`ToolContext::authorizer`] says whose permissions apply: a sub-agent's may be
    /// stricter). `Err` says why they are missing; the command then runs without them and its
    /// result says so.
    async fn variables(&self, ctx: &ToolContext) -> Result<Vec<(String, String)>, String>;
}

/// The Bash tool's limits and sandbox, each overridable by configuration (R42).
#[derive(Clone, Debug)]
pub struct BashSettings {
    /// Timeout when the call gives none.
    pub default_timeout: Duration,
    /// The largest timeout a call may ask for.
    pub max_timeout: Duration,
    /// Bytes of output kept in the result.
    pub output_cap: usize,
    /// The kernel sandbox.
    pub sandbox: ShellSandbox,
    /// Whether sandboxed commands may open TCP connections.
    pub network: NetworkAccess,
    /// Folders writable under [`ShellSandbox::WorkspaceWrite`] besides the workspace and the
    /// temp folder.
    pub writable_roots: Vec<PathBuf>,
    /// Where full outputs are kept: the session's temp folder.
    pub output_dir: PathBuf,
    /// Variables added to every command's environment (`None`: the clean environment only).
    pub extra_environment: Option<Arc<dyn CommandEnvironment>>,
    /// Configured variables every command gets (`[shell.env]`, Claude Code's `env`).
    pub fixed_environment: Vec<(String, String)>,
}

impl BashSettings {
    /// The defaults with the overrides of `[shell]`.
    pub fn configured(shell: &ShellConfig) -> Self {
        let defaults = Self::default();
        Self {
            default_timeout: shell.exec_timeout.unwrap_or(defaults.default_timeout),
            max_timeout: shell.max_timeout.unwrap_or(defaults.max_timeout),
            output_cap: shell.max_output_bytes.unwrap_or(defaults.output_cap),
            sandbox: shell.sandbox.unwrap_or(defaults.sandbox),
            network: match shell.network {
                Some(false) => NetworkAccess::Denied,
                Some(true) | None => NetworkAccess::Allowed,
            },
            writable_roots: shell.writable_roots.clone(),
            fixed_environment: shell
                .env
                .iter()
                .map(|(name, value)| (name.clone(), value.clone()))
                .collect(),
            ..defaults
        }
    }
}

impl Default for BashSettings {
    fn default() -> Self {
        Self {
            default_timeout: DEFAULT_BASH_TIMEOUT,
            max_timeout: MAX_BASH_TIMEOUT,
            output_cap: BASH_OUTPUT_CAP,
            sandbox: ShellSandbox::default(),
            network: NetworkAccess::Allowed,
            writable_roots: Vec::new(),
            output_dir: std::env::temp_dir().join(format!("toolhost-{}", std::process::id())),
            extra_environment: None,
            fixed_environment: Vec::new(),
        }
    }
}

/// Parameters of Bash.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct BashParams {
    /// The command to run with `bash -c`, in the workspace root. Use `&&` to chain commands;
    /// avoid interactive programs (there is no standard input).
    pub command: String,
    /// Timeout in seconds (default 120, at most 600).
    #[schemars(range(min = 1, max = 600))]
    pub timeout: Option<u64>,
    /// What the command does, in 5–10 words, for the person watching.
    pub description: Option<String>,
}

/// The Bash tool.
pub struct Bash {
    workspace: Arc<Workspace>,
    policy: CommandPolicy,
    settings: BashSettings,
    runs: AtomicU64,
}

impl Bash {
    /// Bash in `workspace` with default settings.
    pub fn new(workspace: Arc<Workspace>) -> Self {
        Self::with_settings(workspace, BashSettings::default())
    }

    /// Bash in `workspace` with these settings.
    pub fn with_settings(workspace: Arc<Workspace>, settings: BashSettings) -> Self {
        Self {
            policy: CommandPolicy::new(workspace.root()),
            workspace,
            settings,
            runs: AtomicU64::new(0),
        }
    }

    fn sandbox_policy(&self) -> SandboxPolicy {
        match self.settings.sandbox {
            ShellSandbox::Off => SandboxPolicy::Off,
            ShellSandbox::ReadOnly => SandboxPolicy::ReadOnly {
                network: self.settings.network,
            },
            ShellSandbox::WorkspaceWrite => {
                let mut writable_roots =
                    vec![self.workspace.root().to_path_buf(), std::env::temp_dir()];
                writable_roots.extend(self.settings.writable_roots.iter().cloned());
                SandboxPolicy::WorkspaceWrite {
                    writable_roots,
                    network: self.settings.network,
                }
            }
        }
    }

    fn timeout_for(&self, params: &BashParams) -> Duration {
        params
            .timeout
            .map_or(self.settings.default_timeout, Duration::from_secs)
            .min(self.settings.max_timeout)
    }
}

impl TypedTool for Bash {
    type Params = BashParams;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new(
            "Bash",
            "Runs a bash command in the workspace and returns its combined stdout and stderr \
             with the exit code. Output over 100 KB keeps its beginning and end; the whole \
             output is saved to a file whose path is given. Commands on the deny list (such as \
             `rm -rf /`) are refused. Default timeout 120 s, at most 600 s.",
        )
        .with_label("Run shell command")
        .with_family(PermissionFamily::Shell)
        // The output is already cut head + tail with the full-output path; room for the
        // warnings and status lines around it.
        .with_max_result_chars(self.settings.output_cap + STATUS_ALLOWANCE)
        .with_annotations(ToolAnnotations {
            read_only: false,
            destructive: true,
            idempotent: false,
            open_world: true,
        })
    }

    fn permission_subject(&self, args: &Value) -> PermissionSubject {
        let command = args
            .get("command")
            .and_then(Value::as_str)
            .unwrap_or_default();
        PermissionSubject::Shell(shell_subject(&self.policy.analyze(command)))
    }

    async fn run(&self, params: BashParams, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        if params.command.trim().is_empty() {
            return Err(ToolError::new(
                "The command is empty: give the shell command to run in `command`.",
            ));
        }
        let analysis = self.policy.analyze(&params.command);
        if let Verdict::Denied { reason, .. } = &analysis.verdict {
            return Err(ToolError::new(format!(
                "Refused: {reason}. This command is on toolhost's deny list and never runs; \
                 do the task another way, limited to the workspace."
            ))
            .with_details(json!({ "denied": reason })));
        }
        let timeout = self.timeout_for(&params);
        let mut notes = Vec::new();
        let mut variables = self.settings.fixed_environment.clone();
        if let Some(extra) = &self.settings.extra_environment {
            match extra.variables(&ctx).await {
                Ok(more) => variables.extend(more),
                Err(problem) => notes.push(problem),
            }
        }
        if let Some(terminal) = SessionTerminal::of(&ctx) {
            let command = TerminalCommand {
                program: "bash".to_owned(),
                args: vec!["-c".to_owned(), params.command.clone()],
                cwd: self.workspace.root().to_path_buf(),
                env: variables,
                output_limit: self.settings.output_cap,
                timeout,
            };
            let run = terminal.run(command, &ctx).await.map_err(|error| {
                ToolError::new(format!(
                    "The editor's terminal could not run the command: {error}"
                ))
            })?;
            return Ok(render_terminal_run(&analysis, &notes, &run, timeout));
        }
        std::fs::create_dir_all(&self.settings.output_dir).map_err(|error| {
            ToolError::new(format!(
                "Cannot create the folder for command output {}: {error}",
                self.settings.output_dir.display()
            ))
        })?;
        let run = self.runs.fetch_add(1, Ordering::Relaxed) + 1;
        let output_file = self.settings.output_dir.join(format!("bash-{run}.log"));

        let mut spec = ProcessSpec::bash(&params.command)
            .working_dir(self.workspace.root())
            .timeout(timeout)
            .cancellation(ctx.cancellation().clone())
            .output_cap(self.settings.output_cap)
            .full_output_file(&output_file)
            .sandbox(self.sandbox_policy());
        for (name, value) in variables {
            spec = spec.env(name, value);
        }
        if ctx.wants_updates() {
            let updates = ctx.clone();
            spec = spec.on_output(move |chunk: OutputChunk| {
                updates.on_update(ToolUpdate::text(String::from_utf8_lossy(&chunk.bytes)));
            });
        }
        let outcome = spec.run().await.map_err(|error| {
            ToolError::new(format!("The command could not be started: {error}"))
        })?;

        // The process writes the file only when the result has to leave part of the output out.
        let full_output = outcome.full_output_path.clone();
        Ok(render_outcome(
            &analysis,
            &notes,
            &outcome,
            timeout,
            full_output,
        ))
    }
}

/// `notes`: what went wrong around the command (such as variables that could not be given),
/// shown like the policy's warnings.
fn render_outcome(
    analysis: &CommandAnalysis,
    notes: &[String],
    outcome: &ProcessOutcome,
    timeout: Duration,
    full_output: Option<PathBuf>,
) -> ToolOutput {
    let mut text = String::new();
    for warning in &analysis.warnings {
        let _ = writeln!(text, "[warning: {}]", warning.message);
    }
    for note in notes {
        let _ = writeln!(text, "[warning: {note}]");
    }
    text.push_str(&outcome.combined.text);
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    let (status, is_error) = status_line(
        outcome.termination,
        outcome.exit_code.map(i64::from),
        outcome.signal.map(|signal| signal.to_string()),
        outcome.duration,
        timeout,
    );
    text.push_str(&status);
    if let Some(path) = &full_output {
        let _ = write!(text, "\n[full output: {}]", path.display());
    }
    let details = json!({
        "exit_code": outcome.exit_code,
        "signal": outcome.signal,
        "termination": termination_label(outcome.termination),
        "duration_ms": u64::try_from(outcome.duration.as_millis()).unwrap_or(u64::MAX),
        "truncated": outcome.combined.is_truncated(),
        "total_bytes": outcome.combined.total_bytes,
        "full_output_path": full_output,
        "warnings": analysis.warnings.iter().map(|w| w.message.clone()).collect::<Vec<_>>(),
        "sandbox": sandbox_label(&outcome.sandbox),
    });
    ToolOutput {
        is_error,
        ..ToolOutput::text(text).with_details(details)
    }
}

/// The line that ends a result: how the command ended, and whether that is an error.
fn status_line(
    termination: Termination,
    exit_code: Option<i64>,
    signal: Option<String>,
    duration: Duration,
    timeout: Duration,
) -> (String, bool) {
    let seconds = duration.as_secs_f64();
    match termination {
        Termination::TimedOut => (
            format!(
                "[timed out: the command was stopped after {} s. Run it with a larger `timeout` \
                 (at most {} s), make it faster, or run it in the background with its output \
                 sent to a file]",
                timeout.as_secs(),
                MAX_BASH_TIMEOUT.as_secs()
            ),
            true,
        ),
        Termination::Cancelled => ("[cancelled: the command was stopped]".to_owned(), true),
        Termination::Exited => match (exit_code, signal) {
            (Some(0), _) => (format!("[exit code 0 after {seconds:.1} s]"), false),
            (Some(code), _) => (format!("[exit code {code} after {seconds:.1} s]"), true),
            (None, Some(signal)) => (
                format!("[killed by signal {signal} after {seconds:.1} s]"),
                true,
            ),
            (None, None) => (format!("[ended after {seconds:.1} s]"), true),
        },
    }
}

/// A command the editor's terminal ran, as the model reads it: the same warnings and status
/// line as [`render_outcome`]; the output is what the terminal kept (its end, when it dropped
/// the beginning), and there is no full-output file: the terminal has it all.
fn render_terminal_run(
    analysis: &CommandAnalysis,
    notes: &[String],
    run: &TerminalRun,
    timeout: Duration,
) -> ToolOutput {
    let mut text = String::new();
    for warning in &analysis.warnings {
        let _ = writeln!(text, "[warning: {}]", warning.message);
    }
    for note in notes {
        let _ = writeln!(text, "[warning: {note}]");
    }
    if run.truncated {
        text.push_str(
            "[the beginning of the output was cut: the editor's terminal keeps its end]\n",
        );
    }
    text.push_str(&run.output);
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    let (status, is_error) = status_line(
        run.termination,
        run.exit_code.map(i64::from),
        run.signal.clone(),
        run.duration,
        timeout,
    );
    text.push_str(&status);
    let details = json!({
        "exit_code": run.exit_code,
        "signal": run.signal,
        "termination": termination_label(run.termination),
        "duration_ms": u64::try_from(run.duration.as_millis()).unwrap_or(u64::MAX),
        "truncated": run.truncated,
        "warnings": analysis.warnings.iter().map(|w| w.message.clone()).collect::<Vec<_>>(),
        "sandbox": "off: the editor's terminal ran it",
        "terminal_id": run.terminal_id,
    });
    ToolOutput {
        is_error,
        ..ToolOutput::text(text).with_details(details)
    }
}

fn termination_label(termination: Termination) -> &'static str {
    match termination {
        Termination::Exited => "exited",
        Termination::TimedOut => "timed_out",
        Termination::Cancelled => "cancelled",
    }
}

fn sandbox_label(status: &SandboxStatus) -> String {
    match status {
        SandboxStatus::Off => "off".to_owned(),
        SandboxStatus::Enforced => "enforced".to_owned(),
        SandboxStatus::PartiallyEnforced => "partially enforced".to_owned(),
        SandboxStatus::Unavailable { reason } => format!("unavailable: {reason}"),
    }
}

/// The policy's analysis in the shape permission rules match: one argv per simple command.
/// A command with a word only known at run time, or with variable assignments, makes the
/// analysis partial, so that a prefix rule can never auto-allow it.
fn shell_subject(analysis: &CommandAnalysis) -> ShellSubject {
    let mut fully_analysed = !analysis
        .warnings
        .iter()
        .any(|warning| warning.kind == RiskKind::Unparsed);
    let commands = analysis
        .commands
        .iter()
        .map(|command| {
            if !command.assignments.is_empty() || command.argv().is_none() {
                fully_analysed = false;
            }
            command
                .words
                .iter()
                .map(|word| word.text().to_owned())
                .collect()
        })
        .collect();
    ShellSubject {
        commands,
        fully_analysed,
        denied: match &analysis.verdict {
            Verdict::Denied { reason, .. } => Some(reason.clone()),
            Verdict::Risky | Verdict::Ordinary => None,
        },
        warnings: analysis
            .warnings
            .iter()
            .map(|w| w.message.clone())
            .collect(),
        outside_workspace: analysis
            .outside_workspace
            .iter()
            .map(|path| path.resolved.display().to_string())
            .collect(),
    }
}

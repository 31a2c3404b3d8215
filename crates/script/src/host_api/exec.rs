//! `api.exec`: a custom tool runs a program through the same door as Bash — the command
//! policy's deny list (always), the embedder's [`ExecGate`] (the permission system), and the
//! process helper of `toolhost-exec` (process group, clean environment, timeout, cancellation,
//! output cap, OS sandbox).

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::Callers;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolhost_exec::{CommandPolicy, ProcessSpec, SandboxPolicy, Termination, Verdict};

/// The longest timeout `exec` may be given, as for Bash.
pub const MAX_EXEC_TIMEOUT: Duration = Duration::from_secs(600);
/// Bytes of stdout and of stderr kept (head and tail), as for Bash's output.
pub const EXEC_OUTPUT_CAP: usize = 100 * 1024;

/// One program a custom tool asks to run.
#[derive(Clone, Debug)]
pub struct ExecRequest {
    /// The custom tool module asking.
    pub module: PathBuf,
    /// The program.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// The command line, shell-quoted, as permission rules and the deny list see it
    /// (`git ls-files '*.ts'`).
    pub command_line: String,
    /// The folder it runs in.
    pub working_dir: PathBuf,
    /// Whom the module's tools are running for: ask each of them (see [`Callers`]).
    pub callers: Callers,
}

/// Decides whether a custom tool may run a program, after the deny list allowed it.
///
/// The embedding program implements it with its permission system, so that `exec` asks exactly
/// what Bash would for the same command line (`toolhost` asks its `PermissionPolicy` as a
/// `Bash` call). The default, [`DenyListOnly`], allows what the deny list allows — the same as a
/// registry without a permission policy.
#[async_trait::async_trait]
pub trait ExecGate: Send + Sync {
    /// `Ok(())` to run; `Err(reason)` to refuse, the reason written for the model.
    async fn authorize(&self, request: &ExecRequest) -> Result<(), String>;
}

/// Runs whatever the command policy's deny list does not refuse.
#[derive(Clone, Copy, Debug, Default)]
pub struct DenyListOnly;

#[async_trait::async_trait]
impl ExecGate for DenyListOnly {
    async fn authorize(&self, _request: &ExecRequest) -> Result<(), String> {
        Ok(())
    }
}

/// `exec`'s options as the JavaScript side sends them.
#[derive(Debug, Deserialize)]
pub(crate) struct ExecCall {
    command: String,
    #[serde(default)]
    args: Vec<String>,
    cwd: Option<String>,
    /// Milliseconds, as in Node.
    timeout: Option<f64>,
    /// Bytes for the program's stdin (`input` of Node's sync forms).
    input: Option<String>,
    /// Variables set on top of the clean environment.
    #[serde(default)]
    env: std::collections::BTreeMap<String, String>,
    /// `command` is a shell command line (Node's `exec`, `shell: true`): judged and run as
    /// Bash would, instead of as one program with its arguments.
    #[serde(default)]
    shell: bool,
}

/// Everything `exec` needs from the host.
pub(crate) struct ExecEnvironment<'a> {
    pub module: &'a Path,
    pub cwd: &'a Path,
    pub gate: &'a dyn ExecGate,
    pub callers: Callers,
    pub sandbox: SandboxPolicy,
    pub default_timeout: Duration,
}

/// Runs one `exec` call; the JSON is `{ok: {stdout, stderr, code, killed}}` or `{error}`.
pub(crate) async fn run_exec(
    environment: ExecEnvironment<'_>,
    call: ExecCall,
    cancel: CancellationToken,
) -> Value {
    match run(environment, call, cancel).await {
        Ok(value) => json!({ "ok": value }),
        Err(message) => json!({ "error": message }),
    }
}

async fn run(
    environment: ExecEnvironment<'_>,
    call: ExecCall,
    cancel: CancellationToken,
) -> Result<Value, String> {
    if call.command.trim().is_empty() {
        return Err("exec needs a program to run: exec(\"git\", [\"status\"])".to_owned());
    }
    if let Some(bad) = call.env.keys().find(|name| !is_variable_name(name)) {
        return Err(format!(
            "exec: '{bad}' is not an environment variable name (letters, digits and _)"
        ));
    }
    let working_dir = match &call.cwd {
        Some(dir) => environment.cwd.join(dir),
        None => environment.cwd.to_path_buf(),
    };
    // Variables come first, as `NAME=value program args` in Bash, so that rules see them too.
    let assignments = call
        .env
        .iter()
        .map(|(name, value)| format!("{name}={}", shell_quote(value)));
    // A shell command line is its own words, as Node joins them (`[command, ...args]`).
    let words: Vec<String> = if call.shell {
        std::iter::once(call.command.clone())
            .chain(call.args.iter().cloned())
            .collect()
    } else {
        std::iter::once(&call.command)
            .chain(&call.args)
            .map(|word| shell_quote(word))
            .collect()
    };
    let command_line = assignments.chain(words).collect::<Vec<_>>().join(" ");
    let analysis = CommandPolicy::new(environment.cwd)
        .working_dir(&working_dir)
        .analyze(&command_line);
    if let Verdict::Denied { reason, .. } = &analysis.verdict {
        return Err(format!(
            "Refused: {reason}. This command is on toolhost's deny list and never runs."
        ));
    }
    let request = ExecRequest {
        module: environment.module.to_path_buf(),
        program: call.command.clone(),
        args: call.args.clone(),
        command_line,
        working_dir: working_dir.clone(),
        callers: environment.callers.clone(),
    };
    environment.gate.authorize(&request).await?;
    let timeout = call
        .timeout
        .filter(|ms| ms.is_finite() && *ms > 0.0)
        .map_or(environment.default_timeout, |ms| {
            Duration::from_secs_f64(ms / 1000.0)
        })
        .min(MAX_EXEC_TIMEOUT);
    let mut spec = if call.shell {
        let script = std::iter::once(call.command.as_str())
            .chain(call.args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ");
        ProcessSpec::bash(script)
    } else {
        ProcessSpec::new(&call.command).args(&call.args)
    };
    for (name, value) in &call.env {
        spec = spec.env(name, value);
    }
    if let Some(input) = &call.input {
        spec = spec.stdin_bytes(input.as_bytes());
    }
    let outcome = spec
        .working_dir(&working_dir)
        .timeout(timeout)
        .cancellation(cancel)
        .output_cap(EXEC_OUTPUT_CAP)
        .sandbox(environment.sandbox)
        .run()
        .await
        .map_err(|error| format!("exec could not start `{}`: {error}", call.command))?;
    Ok(json!({
        "stdout": outcome.stdout.text,
        "stderr": outcome.stderr.text,
        "code": outcome.exit_code,
        "killed": outcome.termination != Termination::Exited,
    }))
}

fn is_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A word quoted for bash when it needs it, so the policy sees the argv the program gets.
fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

//! The one process helper: every subprocess in toolhost starts through [`ProcessSpec`].

mod capture;
mod environment;
mod full_output;
mod group;
mod output;

use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

pub use capture::{CapturedOutput, DEFAULT_OUTPUT_CAP_BYTES};
pub use environment::{FIXED_VARIABLES, INHERITED_VARIABLES};
pub use group::{KILL_GRACE_PERIOD, ProcessGroup};
pub use output::{OutputCallback, OutputChunk, OutputStream};

use crate::sandbox::{self, SandboxError, SandboxPolicy, SandboxStatus};
use full_output::FullOutputFile;
use output::{OutputSinks, collect_output};

/// The timeout when the caller sets none: the shell's `exec_timeout` default (SPEC R22).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// After the leader exits, how long its output pipes may stay open (held by a background
/// grandchild) before the helper stops reading.
pub const OUTPUT_DRAIN_TIMEOUT: Duration = Duration::from_millis(500);

/// Why starting or supervising a process failed. A process that runs and fails is not an
/// error: it is a [`ProcessOutcome`] with a non-zero exit code.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    /// The working folder does not exist or is not a folder.
    #[error("the working folder {path} does not exist or is not a folder; pass an existing folder")]
    WorkingDir {
        /// The folder that was asked for.
        path: PathBuf,
    },
    /// The program could not be started (not found, not executable, …).
    #[error("could not start `{program}`: {source}; check the program name and PATH")]
    Spawn {
        /// The program that was asked for.
        program: String,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The OS sandbox could not be set up.
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    /// Waiting for the process failed.
    #[error("lost track of `{program}` while waiting for it: {source}")]
    Wait {
        /// The program being waited for.
        program: String,
        /// What the operating system said.
        source: std::io::Error,
    },
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Termination {
    /// The process exited (or was killed by a signal) on its own.
    Exited,
    /// The timeout ran out and the process tree was stopped.
    TimedOut,
    /// The cancellation token fired and the process tree was stopped.
    Cancelled,
}

/// What happens to processes still in the group after the leader exits on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LeftoverProcesses {
    /// Stop them like a timeout would (TERM, grace, KILL): nothing outlives the call.
    #[default]
    Terminate,
    /// Leave them running (a server started in the background on purpose).
    KeepRunning,
}

/// The result of a finished run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessOutcome {
    /// The exit code, when the process exited normally.
    pub exit_code: Option<i32>,
    /// The signal that ended the process, when one did.
    pub signal: Option<i32>,
    /// Whether it ended on its own, timed out or was cancelled.
    pub termination: Termination,
    /// Wall time from spawn to the end of output.
    pub duration: Duration,
    /// Standard output, head + tail within the cap.
    pub stdout: CapturedOutput,
    /// Standard error, head + tail within the cap.
    pub stderr: CapturedOutput,
    /// Both streams interleaved in the order they were read, head + tail within the cap.
    pub combined: CapturedOutput,
    /// The file holding the whole combined output, when one was asked for and the output
    /// outgrew the cap (so the capture had to leave part of it out).
    pub full_output_path: Option<PathBuf>,
    /// Whether the OS sandbox was enforced for this run.
    pub sandbox: SandboxStatus,
}

/// What [`ProcessSpec::run`] spawns: the command and its sandbox, apart.
struct Spawnable {
    command: tokio::process::Command,
    restriction: Option<sandbox::Restriction>,
    sandbox: SandboxStatus,
}

/// A configured command from [`ProcessSpec::to_command`], and whether its sandbox is enforced.
#[derive(Debug)]
pub struct PreparedCommand {
    /// The command, ready to spawn.
    pub command: tokio::process::Command,
    /// Whether the OS sandbox will be enforced in the child.
    pub sandbox: SandboxStatus,
}

impl ProcessOutcome {
    /// Whether the process exited on its own with code 0.
    pub fn success(&self) -> bool {
        self.termination == Termination::Exited && self.exit_code == Some(0)
    }
}

/// A process to run: program, arguments and every knob of the helper, built step by step.
///
/// Every child gets its own process group, a clean environment (see [`INHERITED_VARIABLES`]
/// and [`FIXED_VARIABLES`]) and a null stdin unless [`Self::stdin_bytes`] gives it input.
#[derive(Clone)]
pub struct ProcessSpec {
    program: OsString,
    args: Vec<OsString>,
    working_dir: Option<PathBuf>,
    env: Vec<(OsString, OsString)>,
    timeout: Option<Duration>,
    cancel: CancellationToken,
    output_cap: usize,
    full_output_path: Option<PathBuf>,
    on_output: Option<OutputCallback>,
    kill_grace: Duration,
    leftovers: LeftoverProcesses,
    sandbox: SandboxPolicy,
    stdin: Option<Arc<[u8]>>,
}

impl std::fmt::Debug for ProcessSpec {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("ProcessSpec")
            .field("program", &self.program)
            .field("args", &self.args)
            .field("working_dir", &self.working_dir)
            .field("timeout", &self.timeout)
            .field("output_cap", &self.output_cap)
            .field("sandbox", &self.sandbox)
            .finish_non_exhaustive()
    }
}

impl ProcessSpec {
    /// A process running `program` (looked up on the child's PATH) with defaults: the
    /// [`DEFAULT_TIMEOUT`], the [`DEFAULT_OUTPUT_CAP_BYTES`] and no cancellation.
    pub fn new(program: impl Into<OsString>) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            working_dir: None,
            env: Vec::new(),
            timeout: Some(DEFAULT_TIMEOUT),
            cancel: CancellationToken::new(),
            output_cap: DEFAULT_OUTPUT_CAP_BYTES,
            full_output_path: None,
            on_output: None,
            kill_grace: KILL_GRACE_PERIOD,
            leftovers: LeftoverProcesses::default(),
            sandbox: SandboxPolicy::Off,
            stdin: None,
        }
    }

    /// `bash -c <command>`: a shell command line.
    pub fn bash(command: impl Into<OsString>) -> Self {
        Self::new("bash").arg("-c").arg(command)
    }

    /// Appends one argument.
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Appends arguments.
    pub fn args<I, A>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = A>,
        A: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// The folder the process starts in (default: the caller's current folder).
    pub fn working_dir(mut self, folder: impl Into<PathBuf>) -> Self {
        self.working_dir = Some(folder.into());
        self
    }

    /// Sets a variable in the child's environment, over the inherited and fixed ones.
    pub fn env(mut self, name: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((name.into(), value.into()));
        self
    }

    /// Stops the process tree after `timeout`.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// No timeout: only cancellation stops the process.
    pub fn without_timeout(mut self) -> Self {
        self.timeout = None;
        self
    }

    /// Stops the process tree when `cancel` fires.
    pub fn cancellation(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }

    /// Keeps at most `bytes` of each captured stream (half head, half tail).
    pub fn output_cap(mut self, bytes: usize) -> Self {
        self.output_cap = bytes;
        self
    }

    /// Also writes the whole combined output to `path` (created or truncated) once it outgrows
    /// the output cap; an output that fits creates no file.
    pub fn full_output_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.full_output_path = Some(path.into());
        self
    }

    /// Calls `callback` with every chunk of output as it is read.
    pub fn on_output(mut self, callback: impl Fn(OutputChunk) + Send + Sync + 'static) -> Self {
        self.on_output = Some(Arc::new(callback));
        self
    }

    /// The time between SIGTERM and SIGKILL when the tree is stopped (default
    /// [`KILL_GRACE_PERIOD`]).
    pub fn kill_grace(mut self, grace: Duration) -> Self {
        self.kill_grace = grace;
        self
    }

    /// What happens to background processes left in the group when the leader exits.
    pub fn leftover_processes(mut self, leftovers: LeftoverProcesses) -> Self {
        self.leftovers = leftovers;
        self
    }

    /// Runs the process inside the OS sandbox (default [`SandboxPolicy::Off`]). When the
    /// kernel cannot sandbox, the run goes ahead and [`ProcessOutcome::sandbox`] says so.
    pub fn sandbox(mut self, policy: SandboxPolicy) -> Self {
        self.sandbox = policy;
        self
    }

    /// Feeds `bytes` to the child's standard input, then closes it (default: a null stdin).
    /// A child that exits without reading it all is not an error.
    pub fn stdin_bytes(mut self, bytes: impl Into<Vec<u8>>) -> Self {
        self.stdin = Some(Arc::from(bytes.into()));
        self
    }

    /// The program as text, for messages.
    fn program_name(&self) -> String {
        self.program.to_string_lossy().into_owned()
    }

    /// A configured command (process group, clean environment, working folder, null stdin,
    /// killed when dropped) for callers that drive the child themselves, such as a stdio MCP
    /// server: they set stdout/stdin pipes and keep the child. Timeout, cancellation and
    /// output capture are then theirs to handle.
    pub fn to_command(&self) -> Result<PreparedCommand, ProcessError> {
        let mut command = self.base_command(&self.program)?;
        let sandbox = sandbox::install(&self.sandbox, &mut command)?;
        let mut command = tokio::process::Command::from(command);
        command.kill_on_drop(true);
        Ok(PreparedCommand { command, sandbox })
    }

    /// The command without its sandbox: arguments, working folder, clean environment, own
    /// process group, null stdin.
    fn base_command(
        &self,
        program: &std::ffi::OsStr,
    ) -> Result<std::process::Command, ProcessError> {
        let mut command = std::process::Command::new(program);
        std::os::unix::process::CommandExt::arg0(&mut command, &self.program);
        command.args(&self.args);
        if let Some(folder) = &self.working_dir {
            if !folder.is_dir() {
                return Err(ProcessError::WorkingDir {
                    path: folder.clone(),
                });
            }
            command.current_dir(folder);
        }
        command.env_clear();
        command.envs(self.child_environment());
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        command.stdin(Stdio::null());
        Ok(command)
    }

    fn child_environment(&self) -> std::collections::BTreeMap<OsString, OsString> {
        environment::clean_environment(std::env::vars_os(), &self.env)
    }

    /// The command for [`run`](Self::run), to start without forking this process: the program
    /// is looked up on the child's PATH here, so that the standard library can use
    /// `posix_spawn`, and the sandbox comes apart, to apply to the thread that spawns it.
    fn spawnable(&self) -> Result<Spawnable, ProcessError> {
        let program = environment::find_program(
            &self.program,
            self.child_environment().get(std::ffi::OsStr::new("PATH")),
        );
        let command = self.base_command(
            program
                .as_ref()
                .map_or(self.program.as_os_str(), |found| found.as_os_str()),
        )?;
        let (sandbox, restriction) = sandbox::prepare(&self.sandbox)?;
        let mut command = tokio::process::Command::from(command);
        command
            .kill_on_drop(true)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if self.stdin.is_some() {
            command.stdin(Stdio::piped());
        }
        Ok(Spawnable {
            command,
            restriction,
            sandbox,
        })
    }

    /// Runs the process to the end, the timeout or cancellation, whichever comes first.
    pub async fn run(self) -> Result<ProcessOutcome, ProcessError> {
        let Spawnable {
            mut command,
            restriction,
            sandbox,
        } = self.spawnable()?;
        let full_output = self
            .full_output_path
            .clone()
            .map(|path| FullOutputFile::new(path, self.output_cap));
        let started = Instant::now();
        let spawned = match restriction {
            Some(restriction) => sandbox::spawn_restricted(&mut command, restriction),
            None => command.spawn(),
        };
        let mut child = spawned.map_err(|source| ProcessError::Spawn {
            program: self.program_name(),
            source,
        })?;
        let group = ProcessGroup::led_by(&child);
        if let (Some(mut pipe), Some(bytes)) = (child.stdin.take(), self.stdin.clone()) {
            // Written concurrently with the output reader, so a child that answers before it
            // has read all of its input cannot deadlock; a closed pipe just ends the write.
            tokio::spawn(async move {
                let _ = tokio::io::AsyncWriteExt::write_all(&mut pipe, &bytes).await;
            });
        }
        // If this future is dropped mid-run (its caller gave up on it), the whole tree dies
        // with it rather than lingering: `kill_on_drop` alone reaches only the leader.
        let drop_guard = group.map(ProcessGroup::kill_on_drop);
        let stop_reading = CancellationToken::new();
        let mut reader = tokio::spawn(collect_output(
            child.stdout.take(),
            child.stderr.take(),
            OutputSinks {
                cap: self.output_cap,
                callback: self.on_output.clone(),
                full_output,
            },
            stop_reading.clone(),
        ));
        let wait_error = |source| ProcessError::Wait {
            program: self.program_name(),
            source,
        };

        let stop = tokio::select! {
            status = child.wait() => Err(status.map_err(wait_error)?),
            () = sleep_until(self.timeout.map(|timeout| started + timeout)) => Ok(Termination::TimedOut),
            () = self.cancel.cancelled() => Ok(Termination::Cancelled),
        };
        // From here the run stops the group itself, in order (TERM, grace, KILL).
        if let Some(guard) = drop_guard {
            guard.disarm();
        }
        let (status, termination) = match (stop, group) {
            (Err(status), group) => {
                if let (Some(group), LeftoverProcesses::Terminate) = (group, self.leftovers) {
                    group.stop(self.kill_grace).await;
                }
                (status, Termination::Exited)
            }
            (Ok(termination), Some(group)) => {
                let status = group
                    .terminate(&mut child, self.kill_grace)
                    .await
                    .map_err(wait_error)?;
                (status, termination)
            }
            (Ok(termination), None) => {
                // The child was already reaped elsewhere; only its own kill is left to try.
                let _ = child.start_kill();
                (child.wait().await.map_err(wait_error)?, termination)
            }
        };

        // Output still in flight is read; a pipe held open by a survivor is given up on.
        let collected = match tokio::time::timeout(OUTPUT_DRAIN_TIMEOUT, &mut reader).await {
            Ok(collected) => collected,
            Err(_) => {
                stop_reading.cancel();
                reader.await
            }
        };
        // The reader only fails when the caller's callback panicked; the run itself finished.
        let collected = collected.unwrap_or_default();
        Ok(ProcessOutcome {
            exit_code: status.code(),
            signal: status.signal(),
            termination,
            duration: started.elapsed(),
            stdout: collected.stdout,
            stderr: collected.stderr,
            combined: collected.combined,
            full_output_path: collected.full_output_path,
            sandbox,
        })
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

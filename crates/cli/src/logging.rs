//! Logs on stderr, for a person to read: by default only warnings and errors, each one plain
//! line (`warning: message key=value…`); with `TOOLHOST_LOG` tracing's full format (time,
//! level, target) at the levels it selects. Colour only when stderr is a terminal and
//! `NO_COLOR` is not set.

use std::fmt;
use std::fs::File;
use std::io::IsTerminal as _;
use std::path::Path;
use std::sync::{Mutex, PoisonError};

use tracing::{Event, Level, Subscriber};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// The variable holding an `EnvFilter` (`debug`, `toolhost_mcp=trace`): what to log beyond
/// the warnings, in the full format.
const LOG_FILTER_VARIABLE: &str = "TOOLHOST_LOG";

/// What is logged without `TOOLHOST_LOG`: warnings and errors, except rmcp's. rmcp logs
/// a failed connection in Rust's debug format (`Client(reqwest::Error { kind: Request, … })`)
/// before toolhost says in one line what failed and what to do; `TOOLHOST_LOG=debug` shows
/// its lines too.
///
/// The ACP SDK logs every error it sends back to the editor as a warning: the editor has the
/// error already, so only its own errors are shown.
const DEFAULT_FILTER: &str = "warn,rmcp=off,agent_client_protocol=error";

/// Where logs go instead of stderr while the full-screen chat owns the terminal.
static LOG_FILE: Mutex<Option<File>> = Mutex::new(None);

/// Sends logs to `path` (appending) until [`to_stderr`]: a full-screen UI must not have
/// warnings written over it.
pub fn to_file(path: &Path) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let file = File::options().create(true).append(true).open(path)?;
    *LOG_FILE.lock().unwrap_or_else(PoisonError::into_inner) = Some(file);
    Ok(())
}

/// Sends logs to stderr again.
pub fn to_stderr() {
    LOG_FILE
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
}

/// Writes a log line to the log file when one is set, else to stderr.
struct LogWriter;

impl std::io::Write for LogWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        match &mut *LOG_FILE.lock().unwrap_or_else(PoisonError::into_inner) {
            Some(file) => file.write(bytes),
            None => std::io::stderr().write(bytes),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut *LOG_FILE.lock().unwrap_or_else(PoisonError::into_inner) {
            Some(file) => file.flush(),
            None => std::io::stderr().flush(),
        }
    }
}

/// Installs the global subscriber; logs go to stderr, so stdout carries only results and MCP
/// messages.
pub fn init() {
    let builder = tracing_subscriber::fmt()
        .with_writer(|| LogWriter)
        .with_ansi(stderr_takes_colour());
    match EnvFilter::try_from_env(LOG_FILTER_VARIABLE) {
        Ok(filter) => builder.with_env_filter(filter).init(),
        Err(_) => builder
            .with_env_filter(EnvFilter::new(DEFAULT_FILTER))
            .event_format(PlainLine)
            .init(),
    }
}

/// Whether stderr is a terminal and the user did not opt out (<https://no-color.org>: a
/// `NO_COLOR` that is set and not empty).
fn stderr_takes_colour() -> bool {
    std::io::stderr().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty())
}

/// `warning: message key=value…`: the level as a word, then the event's fields, without the
/// time, the target or the spans a person does not need to act on a warning.
struct PlainLine;

impl<S, N> FormatEvent<S, N> for PlainLine
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let (label, colour) = match *event.metadata().level() {
            Level::ERROR => ("error", "1;31"),
            Level::WARN => ("warning", "1;33"),
            Level::INFO => ("info", "1;32"),
            Level::DEBUG => ("debug", "1;34"),
            Level::TRACE => ("trace", "1;35"),
        };
        if writer.has_ansi_escapes() {
            write!(writer, "\x1b[{colour}m{label}\x1b[0m: ")?;
        } else {
            write!(writer, "{label}: ")?;
        }
        ctx.field_format().format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}

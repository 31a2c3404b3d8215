//! Logs on stderr, for a person to read: by default only warnings and errors, each one plain
//! line (`warning: message key=value…`); with `TOOLHOST_LOG` tracing's full format (time,
//! level, target) at the levels it selects. Colour only when stderr is a terminal and
//! `NO_COLOR` is not set.

use std::fmt;
use std::io::IsTerminal as _;

use tracing::{Event, Level, Subscriber};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// The variable holding an `EnvFilter` (`debug`, `toolhost_mcp=trace`): what to log beyond
/// the warnings, in the full format.
const LOG_FILTER_VARIABLE: &str = "TOOLHOST_LOG";

/// Installs the global subscriber; logs go to stderr, so stdout carries only results and MCP
/// messages.
pub fn init() {
    let builder = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(stderr_takes_colour());
    match EnvFilter::try_from_env(LOG_FILTER_VARIABLE) {
        Ok(filter) => builder.with_env_filter(filter).init(),
        Err(_) => builder
            .with_env_filter(EnvFilter::new("warn"))
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

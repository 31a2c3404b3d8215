//! Turning what JavaScript threw into text for the model or the log, built here on the Rust
//! side: the whole message, where it was thrown (the function and the line, mapped back
//! through the TypeScript strip), the module's own path left out because the caller names it,
//! and for a call of something that is not a function, the expression that was called.

use std::path::Path;
use std::sync::Arc;

use rquickjs::{Ctx, Error, Value};

use crate::source_maps::SourceMaps;

/// Describes errors of one engine's module.
#[derive(Clone, Debug)]
pub(crate) struct Describer {
    pub maps: SourceMaps,
    pub module: Arc<Path>,
}

impl Describer {
    /// The message of an error from running JavaScript.
    pub(crate) fn error(&self, ctx: &Ctx<'_>, error: Error) -> String {
        match error {
            Error::Exception => self.value(&ctx.catch()),
            other => other.to_string(),
        }
    }

    /// The message of a thrown value: a plain `Error`'s message as the tool wrote it; any other
    /// error with its name and where it was thrown.
    pub(crate) fn value(&self, value: &Value<'_>) -> String {
        if let Some(exception) = value.as_exception() {
            let message = exception.message().unwrap_or_default();
            let name: Option<String> = exception.get("name").ok();
            return self.parts(name.as_deref(), &message, exception.stack().as_deref());
        }
        if let Some(text) = value.as_string().and_then(|text| text.to_string().ok()) {
            return text;
        }
        value
            .ctx()
            .json_stringify(value.clone())
            .ok()
            .flatten()
            .and_then(|text| text.to_string().ok())
            .unwrap_or_else(|| format!("{value:?}"))
    }

    /// An error from its name, message and stack (as `api.js` reports what it caught).
    pub(crate) fn parts(&self, name: Option<&str>, message: &str, stack: Option<&str>) -> String {
        match name {
            Some("Error") | None => message.to_owned(),
            Some("InternalError") if message == "interrupted" => message.to_owned(),
            Some(name) => {
                // The message first: it is what a tool throwing on purpose meant to say.
                let Some(frame) = stack.and_then(first_frame) else {
                    return format!("{message} ({name})");
                };
                let message = self.name_the_callee(message, &frame);
                format!("{message} ({name} at {})", self.location(&frame))
            }
        }
    }

    fn location(&self, frame: &Frame) -> String {
        let (line, _) = self.maps.lookup(&frame.file, frame.line);
        let place = if Path::new(&frame.file) == &*self.module {
            format!("line {line}")
        } else {
            format!("{}:{line}", frame.file)
        };
        match &frame.function {
            Some(function) => format!("{place}, in {function}"),
            None => place,
        }
    }

    /// QuickJS says only "not a function"; the code at the frame says what was called.
    fn name_the_callee(&self, message: &str, frame: &Frame) -> String {
        if message != "not a function" {
            return message.to_owned();
        }
        let (_, generated) = self.maps.lookup(&frame.file, frame.line);
        let code = match generated {
            Some(code) => Some(code.to_string()),
            None if frame.file.starts_with('/') => std::fs::read_to_string(&frame.file).ok(),
            None => None,
        };
        code.and_then(|code| callee_at(&code, frame.line, frame.column))
            .map_or_else(
                || message.to_owned(),
                |callee| {
                    format!(
                        "{callee} is not a function: the host may not provide it; check the \
                         name, or test for it before calling"
                    )
                },
            )
    }
}

/// One stack frame: `at function (file:line:column)`.
#[derive(Debug, PartialEq, Eq)]
struct Frame {
    function: Option<String>,
    file: String,
    line: u32,
    column: u32,
}

fn first_frame(stack: &str) -> Option<Frame> {
    let line = stack
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("at "))?;
    let rest = line.strip_prefix("at ")?;
    let (function, place) = match rest.strip_suffix(')').and_then(|r| r.rsplit_once(" (")) {
        Some((function, place)) => (Some(function.to_owned()), place),
        None => (None, rest),
    };
    let mut parts = place.rsplitn(3, ':');
    let column = parts.next()?.parse().ok()?;
    let line = parts.next()?.parse().ok()?;
    let file = parts.next()?.to_owned();
    let function = function.filter(|name| !name.is_empty() && name != "<anonymous>");
    Some(Frame {
        function,
        file,
        line,
        column,
    })
}

/// The dotted expression called at `line:column` (1-based): `api.pi.missing` in
/// `api.pi.missing(1)`.
fn callee_at(code: &str, line: u32, column: u32) -> Option<String> {
    let text = code
        .lines()
        .nth(usize::try_from(line).ok()?.checked_sub(1)?)?;
    let chars: Vec<char> = text.chars().collect();
    let start = usize::try_from(column)
        .ok()?
        .saturating_sub(1)
        .min(chars.len());
    let is_part = |c: char| c.is_alphanumeric() || c == '_' || c == '$' || c == '.';
    // The column points at the callee, its call parenthesis, or (QuickJS, in some statements)
    // inside the arguments: the nearest parenthesis after it, else the last one before it.
    let open = (start..chars.len())
        .find(|&at| chars[at] == '(')
        .or_else(|| (0..start).rev().find(|&at| chars[at] == '('))?;
    let mut begin = open;
    while begin > 0 && is_part(chars[begin - 1]) {
        begin -= 1;
    }
    let callee: String = chars[begin..open].iter().collect();
    let callee = callee.trim_matches('.');
    (!callee.is_empty()).then(|| callee.to_owned())
}

/// Drops an exception left pending by work that nobody awaited (a job interrupted after its
/// call had already ended), so that it cannot fail the next call.
pub(crate) fn clear_stale_exception(ctx: &Ctx<'_>) {
    if ctx.has_exception() {
        let stale = ctx.catch();
        tracing::debug!("dropped a stale exception: {stale:?}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_gives_function_file_line_and_column() {
        assert_eq!(
            first_frame("    at factory (/t/a.js:12:7)\n    at loadTools (toolhost:api:90:3)"),
            Some(Frame {
                function: Some("factory".to_owned()),
                file: "/t/a.js".to_owned(),
                line: 12,
                column: 7
            })
        );
        assert_eq!(
            first_frame("at /t/a.js:3:1").map(|frame| frame.function),
            Some(None)
        );
    }

    #[test]
    fn the_callee_is_found_in_transpiled_typescript() {
        let source = "type X = { a: number };\nexport default (api: any) => {\n  const x: X = { a: 1 };\n  return api.pi.getNoSuchThing(x);\n};\n";
        let out = crate::transpile::transpile_typescript(Path::new("/t/e.ts"), source).unwrap();
        let line = out
            .code
            .lines()
            .position(|l| l.contains("getNoSuchThing"))
            .unwrap();
        assert_eq!(out.line_map[line], 4, "{:?} {}", out.line_map, out.code);
        let column = out.code.lines().nth(line).unwrap().find("getNo").unwrap() + 1;
        let callee = callee_at(
            &out.code,
            u32::try_from(line + 1).unwrap(),
            u32::try_from(column).unwrap(),
        );
        assert_eq!(
            callee.as_deref(),
            Some("api.pi.getNoSuchThing"),
            "{}",
            out.code
        );
    }

    #[test]
    fn the_callee_is_read_from_the_code() {
        let code = "const a = 1;\n  const t = api.pi.getThing(1);\n";
        assert_eq!(callee_at(code, 2, 13).as_deref(), Some("api.pi.getThing"));
        assert_eq!(callee_at(code, 2, 27).as_deref(), Some("api.pi.getThing"));
    }
}

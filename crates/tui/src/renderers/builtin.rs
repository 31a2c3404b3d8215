//! The built-in tools' renderers. Each reads the call's arguments and the result's `details`
//! (the schema-shaped JSON tools return for exactly this) and says in one title line what
//! the call is, with the body a person wants below it.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use serde_json::Value;

use super::{BoxView, EXPANDED_LINES, THEME, ViewOptions, arg, bold, default_title, output_lines};
use crate::text::{clean, one_line};
use crate::transcript::ToolBox;

/// Lines of a Grep or Glob result listed under its counts.
const FIRST_MATCHES: usize = 5;

/// The view of a built-in or MCP tool; `None` for other tools.
pub fn view(tool: &ToolBox, _options: ViewOptions) -> Option<BoxView> {
    let name = tool.call.name.as_str();
    if let Some(rest) = name.strip_prefix("mcp__") {
        return Some(mcp(tool, rest));
    }
    Some(match name {
        "Read" => read(tool),
        "Write" => write(tool),
        "Edit" => edit(tool),
        "Bash" => bash(tool),
        "Grep" => search(tool, "Grep", "matches"),
        "Glob" => search(tool, "Glob", "total"),
        "WebFetch" => titled(tool, "WebFetch", arg(&tool.args, "url")),
        "ListDir" => titled(tool, "ListDir", arg(&tool.args, "path")),
        _ => return None,
    })
}

fn title(name: &str, subject: &str, extra: Option<String>) -> Line<'static> {
    let mut spans = vec![
        Span::styled(name.to_owned(), bold(THEME.accent)),
        Span::raw(" "),
        Span::raw(one_line(subject, 160)),
    ];
    if let Some(extra) = extra {
        spans.push(Span::styled(
            format!(" · {extra}"),
            Style::default().fg(THEME.muted),
        ));
    }
    Line::from(spans)
}

fn details(tool: &ToolBox) -> Option<&Value> {
    tool.result
        .as_ref()
        .and_then(|result| result.details.as_ref())
}

fn number(value: Option<&Value>, key: &str) -> Option<u64> {
    value?.get(key)?.as_u64()
}

fn muted(text: String) -> Line<'static> {
    Line::from(Span::styled(text, Style::default().fg(THEME.muted)))
}

/// Read: the path and the line range read (of how many).
fn read(tool: &ToolBox) -> BoxView {
    let details = details(tool);
    let range = match (number(details, "first_line"), number(details, "last_line")) {
        (Some(first), Some(last)) => Some(match number(details, "total_lines") {
            Some(total) => format!("lines {first}–{last} of {total}"),
            None => format!("lines {first}–{last}"),
        }),
        _ => match (tool.args.get("offset"), tool.args.get("limit")) {
            (Some(offset), Some(limit)) => Some(format!("from line {offset}, {limit} lines")),
            (Some(offset), None) => Some(format!("from line {offset}")),
            _ => None,
        },
    };
    let body = match &tool.result {
        Some(result) if !result.is_error => result
            .text()
            .lines()
            .map(|line| Line::from(clean(line)))
            .collect(),
        _ => output_lines(tool),
    };
    BoxView {
        title: title("Read", arg(&tool.args, "path"), range),
        body,
        tail_first: false,
        skipped: 0,
    }
}

/// Write: the path, created or overwritten and how many lines; the content's first lines.
fn write(tool: &ToolBox) -> BoxView {
    let details = details(tool);
    let extra = number(details, "lines").map(|lines| {
        let created = details
            .and_then(|d| d.get("created"))
            .and_then(Value::as_bool);
        let what = if created == Some(true) {
            "created"
        } else {
            "written"
        };
        format!("{what}, {lines} lines")
    });
    let mut body: Vec<Line<'static>> = arg(&tool.args, "content")
        .lines()
        .map(|line| {
            Line::from(Span::styled(
                format!("+ {}", clean(line)),
                Style::default().fg(THEME.success),
            ))
        })
        .collect();
    if let Some(result) = tool.result.as_ref().filter(|result| result.is_error) {
        body = vec![Line::from(Span::styled(
            result.text(),
            Style::default().fg(THEME.error),
        ))];
    }
    BoxView {
        title: title("Write", arg(&tool.args, "path"), extra),
        body,
        tail_first: false,
        skipped: 0,
    }
}

/// Edit: the path and a coloured diff of the replaced text.
fn edit(tool: &ToolBox) -> BoxView {
    let extra = number(details(tool), "replacements")
        .map(|n| format!("{n} replacement{}", if n == 1 { "" } else { "s" }));
    let mut body: Vec<Line<'static>> =
        line_diff(arg(&tool.args, "old_string"), arg(&tool.args, "new_string"))
            .into_iter()
            .map(|(mark, line)| {
                let style = match mark {
                    '-' => Style::default().fg(THEME.error),
                    '+' => Style::default().fg(THEME.success),
                    _ => Style::default().fg(THEME.muted),
                };
                Line::from(Span::styled(format!("{mark} {}", clean(line)), style))
            })
            .collect();
    if let Some(result) = tool.result.as_ref().filter(|result| result.is_error) {
        body.insert(
            0,
            Line::from(Span::styled(
                result.text(),
                Style::default().fg(THEME.error),
            )),
        );
    }
    BoxView {
        title: title("Edit", arg(&tool.args, "path"), extra),
        body,
        tail_first: false,
        skipped: 0,
    }
}

/// Bash: the command, its output (the tail while it runs) and the exit code.
fn bash(tool: &ToolBox) -> BoxView {
    let command = arg(&tool.args, "command");
    let mut body: Vec<Line<'static>> = Vec::new();
    let mut skipped = 0;
    match &tool.result {
        None => {
            // Output that ends in a newline leaves an empty last piece: not a line yet.
            let shown = match tool.partial.split_last() {
                Some((last, before)) if last.is_empty() => before,
                _ => &tool.partial[..],
            };
            // A running box shows its tail: no more than an expanded box would.
            skipped = shown.len().saturating_sub(EXPANDED_LINES);
            body.extend(shown[skipped..].iter().map(|line| Line::from(clean(line))));
        }
        Some(result) => {
            let text = result.text();
            // The result ends with the tool's own status line; the exit code goes below.
            body.extend(text.lines().map(|line| Line::from(clean(line))));
            let details = result.details.as_ref();
            let code = details
                .and_then(|d| d.get("exit_code"))
                .and_then(Value::as_i64);
            let termination = details
                .and_then(|d| d.get("termination"))
                .and_then(Value::as_str)
                .unwrap_or("exited");
            let (text, color) = match (termination, code) {
                ("timed_out", _) => ("timed out".to_owned(), THEME.error),
                ("cancelled", _) => ("cancelled".to_owned(), THEME.warning),
                (_, Some(0)) => ("exit 0".to_owned(), THEME.success),
                (_, Some(code)) => (format!("exit {code}"), THEME.error),
                (_, None) if result.is_error => ("failed".to_owned(), THEME.error),
                (_, None) => ("done".to_owned(), THEME.muted),
            };
            body.push(Line::from(Span::styled(text, bold(color))));
        }
    }
    BoxView {
        title: Line::from(vec![
            Span::styled("Bash", bold(THEME.accent)),
            Span::styled(" $ ", Style::default().fg(THEME.muted)),
            Span::raw(one_line(command, 200)),
        ]),
        body,
        tail_first: true,
        skipped,
    }
}

/// Grep and Glob: the pattern, the counts, and the first matches.
fn search(tool: &ToolBox, name: &str, count_key: &str) -> BoxView {
    let pattern = arg(&tool.args, "pattern");
    let path = arg(&tool.args, "path");
    let subject = if path.is_empty() {
        pattern.to_owned()
    } else {
        format!("{pattern} in {path}")
    };
    let details = details(tool);
    let files = details.and_then(|d| d.get("files")).map(|files| {
        files
            .as_array()
            .map_or_else(|| files.as_u64().unwrap_or(0), |a| a.len() as u64)
    });
    let extra = match (number(details, count_key), files) {
        (Some(matches), Some(files)) if name == "Grep" => {
            Some(format!("{matches} matches in {files} files"))
        }
        (Some(total), _) => Some(format!("{total} files")),
        _ => None,
    };
    let mut body = Vec::new();
    if let Some(result) = &tool.result {
        let text = result.text();
        let mut lines = text.lines();
        for line in lines.by_ref().take(FIRST_MATCHES) {
            body.push(Line::from(clean(line)));
        }
        let rest = lines.count();
        if rest > 0 {
            body.push(muted(format!("… {rest} more lines")));
        }
    }
    BoxView {
        title: title(name, &subject, extra),
        body,
        tail_first: false,
        skipped: 0,
    }
}

/// An MCP tool: server › tool, and the arguments one per line.
fn mcp(tool: &ToolBox, rest: &str) -> BoxView {
    let (server, name) = rest.split_once("__").unwrap_or((rest, ""));
    let mut body: Vec<Line<'static>> = match &tool.args {
        Value::Object(map) => map
            .iter()
            .map(|(key, value)| {
                let value = match value {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                };
                Line::from(vec![
                    Span::styled(format!("{} ", clean(key)), Style::default().fg(THEME.muted)),
                    Span::raw(one_line(&value, 200)),
                ])
            })
            .collect(),
        _ => Vec::new(),
    };
    body.extend(output_lines(tool));
    BoxView {
        title: Line::from(vec![
            Span::styled("MCP ", Style::default().fg(THEME.muted)),
            Span::styled(clean(server), bold(THEME.accent)),
            Span::styled(" › ", Style::default().fg(THEME.muted)),
            Span::styled(clean(name), bold(THEME.accent)),
        ]),
        body,
        tail_first: tool.is_running(),
        skipped: 0,
    }
}

fn titled(tool: &ToolBox, name: &str, subject: &str) -> BoxView {
    let title = if subject.is_empty() {
        default_title(tool)
    } else {
        title(name, subject, None)
    };
    BoxView {
        title,
        body: output_lines(tool),
        tail_first: tool.is_running(),
        skipped: 0,
    }
}

/// Lines of `before` and `after` longer than this are diffed as a whole block (removed, then
/// added): the table below grows with the product of the two.
const DIFF_LINES: usize = 400;

/// A line diff (longest common subsequence): `' '` for a kept line, `'-'` removed, `'+'` added.
fn line_diff<'a>(before: &'a str, after: &'a str) -> Vec<(char, &'a str)> {
    let old: Vec<&str> = before.lines().collect();
    let new: Vec<&str> = after.lines().collect();
    if old.len() > DIFF_LINES || new.len() > DIFF_LINES {
        let removed = old.iter().map(|line| ('-', *line));
        return removed.chain(new.iter().map(|line| ('+', *line))).collect();
    }
    // common[i][j]: the longest common subsequence of old[i..] and new[j..].
    let mut common = vec![vec![0usize; new.len() + 1]; old.len() + 1];
    for i in (0..old.len()).rev() {
        for j in (0..new.len()).rev() {
            common[i][j] = if old[i] == new[j] {
                common[i + 1][j + 1] + 1
            } else {
                common[i + 1][j].max(common[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut diff) = (0, 0, Vec::new());
    while i < old.len() || j < new.len() {
        if i < old.len() && j < new.len() && old[i] == new[j] {
            diff.push((' ', old[i]));
            i += 1;
            j += 1;
        } else if i < old.len() && (j == new.len() || common[i + 1][j] >= common[i][j + 1]) {
            diff.push(('-', old[i]));
            i += 1;
        } else {
            diff.push(('+', new[j]));
            j += 1;
        }
    }
    diff
}

//! Re-indenting Edit's `new_string` when its `old_string` matched lines of the file only with
//! their indentation ignored: the replacement takes the file's indentation and style.

fn leading_whitespace(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

/// The indentation step of `lines` (the gcd of their space indentations), 4 when unknown.
fn indent_unit(lines: &[&str]) -> usize {
    fn gcd(a: usize, b: usize) -> usize {
        if b == 0 { a } else { gcd(b, a % b) }
    }
    let unit = lines
        .iter()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            leading_whitespace(line)
                .chars()
                .filter(|c| *c == ' ')
                .count()
        })
        .filter(|width| *width > 0)
        .fold(0, gcd);
    if (2..=8).contains(&unit) { unit } else { 4 }
}

/// The indentation of the first line of `lines` that is not blank.
fn first_indent<'a>(lines: impl IntoIterator<Item = &'a str>) -> &'a str {
    lines
        .into_iter()
        .find(|line| !line.trim().is_empty())
        .map_or("", leading_whitespace)
}

/// `new` re-indented from the indentation of `old_lines` to that of the matched `file_lines`:
/// the first line's indentation is replaced, relative indentation converted between tabs and
/// spaces when the two styles differ.
///
/// Blank lines stay empty (no trailing whitespace), and a `new` that already carries the
/// file's indentation (a model that indented `new_string` but not `old_string`) is kept as
/// it is instead of being indented twice.
pub(crate) fn reindent(new: &str, old_lines: &[&str], file_lines: &[&str]) -> String {
    let old_indent = first_indent(old_lines.iter().copied());
    let file_indent = first_indent(file_lines.iter().copied());
    let new_indent = first_indent(new.split('\n'));
    if new_indent == file_indent && new_indent != old_indent {
        return blank_lines_emptied(new);
    }
    let uses_tabs = |lines: &[&str]| {
        lines
            .iter()
            .any(|line| leading_whitespace(line).contains('\t'))
    };
    let (old_tabs, file_tabs) = (uses_tabs(old_lines), uses_tabs(file_lines));
    let (old_unit, file_unit) = (indent_unit(old_lines), indent_unit(file_lines));
    new.split('\n')
        .map(|line| {
            if line.trim().is_empty() {
                return String::new();
            }
            let lead = leading_whitespace(line);
            let Some(relative) = lead.strip_prefix(old_indent) else {
                return line.to_owned();
            };
            let body = &line[lead.len()..];
            let relative = match (old_tabs, file_tabs) {
                (false, true) => {
                    let width = relative.chars().filter(|c| *c == ' ').count()
                        + relative.chars().filter(|c| *c == '\t').count() * old_unit;
                    format!(
                        "{}{}",
                        "\t".repeat(width / old_unit),
                        " ".repeat(width % old_unit)
                    )
                }
                (true, false) => {
                    let width = relative.chars().filter(|c| *c == ' ').count()
                        + relative.chars().filter(|c| *c == '\t').count() * file_unit;
                    " ".repeat(width)
                }
                _ => relative.to_owned(),
            };
            format!("{file_indent}{relative}{body}")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` with the whitespace of its blank lines removed (a `\r` before a `\n` is kept).
fn blank_lines_emptied(text: &str) -> String {
    text.split('\n')
        .map(|line| match line.strip_suffix('\r') {
            Some(rest) if rest.trim().is_empty() => "\r",
            None if line.trim().is_empty() => "",
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn reindent_converts_spaces_to_the_files_tabs() {
        let old = ["    if x {", "        y();", "    }"];
        let file = ["\tif x {", "\t\ty();", "\t}"];
        let new = "    if x {\n        z();\n    }";
        assert_eq!(reindent(new, &old, &file), "\tif x {\n\t\tz();\n\t}");
    }

    #[test]
    fn reindent_leaves_blank_lines_empty() {
        let old = ["a", "", "b"];
        let file = ["  a", "", "  b"];
        assert_eq!(reindent("x\n\ny", &old, &file), "  x\n\n  y");
    }

    #[test]
    fn reindent_keeps_a_new_string_already_in_the_files_indentation() {
        let old = ["a", "", "b"];
        let file = ["  a", "", "  b"];
        assert_eq!(reindent("  x\n\n  y", &old, &file), "  x\n\n  y");
        assert_eq!(reindent("  x\n  \n  y", &old, &file), "  x\n\n  y");
    }
}

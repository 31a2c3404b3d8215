//! Expanding a slash command's body. The rules (the README repeats them):
//!
//! 1. `$ARGUMENTS` is the raw argument string, trimmed, exactly as typed.
//! 2. `$1` … `$9` are the arguments split like a shell splits words ([`split_arguments`]);
//!    a missing one is the empty string. `$10` is `$1` followed by `0`.
//! 3. When the body holds no `$ARGUMENTS` and no `$1`…`$9` and arguments were given, they are
//!    appended on a line of their own as `ARGUMENTS: <raw string>` (as Claude Code does), so
//!    they are never lost.
//! 4. `` !`command` `` (on one line) runs `command` with the Bash tool, through the registry's
//!    pipeline and permissions, before the prompt is sent; its output replaces it. Arguments
//!    are substituted into the command first. A refused or failing command stops the
//!    expansion.
//! 5. `@path` — at the start of the body or after whitespace, up to the next whitespace, less
//!    trailing `.,;:!?)'"` — is read with the Read tool (workspace rules and permissions
//!    apply) and replaced by `<file path="path">…</file>`. As in Claude Code, an `@` inside a
//!    code span (`` `@dataclass` ``) or a fenced code block is text, and an `@word` that
//!    cannot be read (`@redocly/cli`, a refused file) stays as written, with a warning.
//!    A fenced block runs no `` !`command` `` either.
//! 6. A backslash before `$`, `@` or `!` makes that character literal (the backslash goes);
//!    every other backslash stays. Any other `$` (`$HOME`, `$0`) stays as written.
//! 7. Substituted text is never scanned again: an argument holding `@x` or `` !`x` `` is only
//!    text.

use serde::Serialize;
use serde_json::json;
use toolhost_core::{CallOptions, ToolRegistry};

/// Why a body could not be expanded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExpandError {
    /// The arguments open a quote they never close.
    #[error(
        "the arguments open a {quote} quote that is never closed: close it or escape it with a backslash"
    )]
    UnterminatedQuote {
        /// `'` or `"`.
        quote: char,
    },
    /// A `` !`command` `` was refused or failed.
    #[error("the command `{command}` did not run cleanly: {message}")]
    Command {
        /// The command.
        command: String,
        /// Bash's result.
        message: String,
    },
}

/// One piece of a parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Text, arguments already substituted.
    Text(String),
    /// `@path`: a file to inline.
    File(String),
    /// `` !`command` ``: a command to run.
    Command(String),
}

/// An expanded body.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Expansion {
    /// The prompt.
    pub prompt: String,
    /// The files inlined, in order.
    pub files: Vec<String>,
    /// The commands run, in order.
    pub commands: Vec<String>,
    /// The `@word`s that could not be read and were left as text, in order.
    pub unresolved: Vec<String>,
}

/// Splits the raw argument string into words like a POSIX shell (without expansions):
/// whitespace separates words; `'…'` keeps everything literally; `"…"` keeps everything but
/// `\"` and `\\`, which become `"` and `\`; outside quotes a backslash makes the next
/// character literal; quoted and unquoted parts next to each other form one word; `""` is an
/// empty word.
pub fn split_arguments(raw: &str) -> Result<Vec<String>, ExpandError> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if let Some(done) = word.take() {
                    words.push(done);
                }
            }
            '\'' => {
                let current = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => current.push(c),
                        None => return Err(ExpandError::UnterminatedQuote { quote: '\'' }),
                    }
                }
            }
            '"' => {
                let current = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') if matches!(chars.peek(), Some('"' | '\\')) => {
                            current.extend(chars.next());
                        }
                        Some(c) => current.push(c),
                        None => return Err(ExpandError::UnterminatedQuote { quote: '"' }),
                    }
                }
            }
            '\\' => {
                let current = word.get_or_insert_with(String::new);
                current.push(chars.next().unwrap_or('\\'));
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Ok(words)
}

/// Parses `body` with the raw argument string `raw_args` into pieces (rules 1–3 and 5–7 of
/// the module; the files and commands are only named, not read or run).
pub fn parse_template(body: &str, raw_args: &str) -> Result<Vec<Piece>, ExpandError> {
    let raw = raw_args.trim();
    let words = split_arguments(raw)?;
    let mut arguments = Arguments {
        raw,
        words: &words,
        used: false,
    };
    let mut pieces = Vec::new();
    let mut text = String::new();
    let chars: Vec<char> = body.chars().collect();
    let mut at = 0;
    while at < chars.len() {
        let c = chars[at];
        let previous_is_space = at == 0 || chars[at - 1].is_whitespace();
        let line_start = at == 0 || chars[at - 1] == '\n';
        if line_start && let Some(fence) = fence_at(&chars[at..]) {
            // A fenced code block, to its closing fence (or the end): text, placeholders only.
            let length = fenced_block_length(&chars[at..], &fence);
            let block: String = chars[at..at + length].iter().collect();
            text.push_str(&arguments.substitute(&block));
            at += length;
        } else if c == '`' && (at == 0 || chars[at - 1] != '!') {
            // A code span: text up to the closing run of as many backticks, placeholders only.
            let length = code_span_length(&chars[at..]);
            let span: String = chars[at..at + length].iter().collect();
            text.push_str(&arguments.substitute(&span));
            at += length;
        } else if c == '\\' && matches!(chars.get(at + 1), Some('$' | '@' | '!')) {
            text.push(chars[at + 1]);
            at += 2;
        } else if c == '$'
            && let Some((value, length)) = arguments.placeholder(&chars[at..])
        {
            text.push_str(&value);
            at += length;
        } else if c == '!'
            && chars.get(at + 1) == Some(&'`')
            && let Some(end) = chars[at + 2..]
                .iter()
                .take_while(|c| **c != '\n')
                .position(|c| *c == '`')
        {
            let command: String = chars[at + 2..at + 2 + end].iter().collect();
            flush(&mut text, &mut pieces);
            pieces.push(Piece::Command(arguments.substitute(&command)));
            at += end + 3;
        } else if c == '@' && previous_is_space {
            let token: String = chars[at + 1..]
                .iter()
                .take_while(|c| !c.is_whitespace())
                .collect();
            let path = token.trim_end_matches(['.', ',', ';', ':', '!', '?', ')', '\'', '"']);
            if path.is_empty() {
                text.push('@');
                at += 1;
            } else {
                flush(&mut text, &mut pieces);
                pieces.push(Piece::File(arguments.substitute(path)));
                at += 1 + path.chars().count();
            }
        } else {
            text.push(c);
            at += 1;
        }
    }
    if !arguments.used && !raw.is_empty() {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!("\nARGUMENTS: {raw}"));
    }
    flush(&mut text, &mut pieces);
    Ok(pieces)
}

/// The fence (three or more backticks or tildes, after at most three spaces) that opens a code
/// block at the start of `line`.
fn fence_at(line: &[char]) -> Option<String> {
    let indent = line.iter().take_while(|c| **c == ' ').count();
    if indent > 3 {
        return None;
    }
    let mark = *line.get(indent)?;
    if mark != '`' && mark != '~' {
        return None;
    }
    let run = line[indent..].iter().take_while(|c| **c == mark).count();
    (run >= 3).then(|| std::iter::repeat_n(mark, run).collect())
}

/// How many chars the fenced block at the start of `chars` takes, its closing fence line
/// included (all of `chars` when it is never closed).
fn fenced_block_length(chars: &[char], fence: &str) -> usize {
    let mut at = chars
        .iter()
        .position(|c| *c == '\n')
        .map_or(chars.len(), |end| end + 1);
    while at < chars.len() {
        let end = chars[at..]
            .iter()
            .position(|c| *c == '\n')
            .map_or(chars.len(), |end| at + end + 1);
        let line: String = chars[at..end].iter().collect();
        let trimmed = line.trim();
        if trimmed.len() >= fence.len() && trimmed.chars().all(|c| fence.starts_with(c)) {
            return end;
        }
        at = end;
    }
    chars.len()
}

/// How many chars the code span at the start of `chars` (which starts with a backtick) takes:
/// to the next run of as many backticks on the same line, or the opening run alone when there
/// is none.
fn code_span_length(chars: &[char]) -> usize {
    let run = chars.iter().take_while(|c| **c == '`').count();
    let mut at = run;
    while at < chars.len() && chars[at] != '\n' {
        if chars[at] == '`' {
            let closing = chars[at..].iter().take_while(|c| **c == '`').count();
            if closing == run {
                return at + closing;
            }
            at += closing;
        } else {
            at += 1;
        }
    }
    run
}

fn flush(text: &mut String, pieces: &mut Vec<Piece>) {
    if !text.is_empty() {
        pieces.push(Piece::Text(std::mem::take(text)));
    }
}

struct Arguments<'a> {
    raw: &'a str,
    words: &'a [String],
    used: bool,
}

impl Arguments<'_> {
    /// The value of the placeholder at the start of `chars` (which starts with `$`) and its
    /// length in chars.
    fn placeholder(&mut self, chars: &[char]) -> Option<(String, usize)> {
        const ARGUMENTS: &str = "ARGUMENTS";
        if chars.len() > ARGUMENTS.len()
            && chars[1..=ARGUMENTS.len()]
                .iter()
                .copied()
                .eq(ARGUMENTS.chars())
        {
            self.used = true;
            return Some((self.raw.to_owned(), ARGUMENTS.len() + 1));
        }
        let digit = chars.get(1)?.to_digit(10).filter(|digit| *digit >= 1)?;
        self.used = true;
        let word = self
            .words
            .get(digit as usize - 1)
            .cloned()
            .unwrap_or_default();
        Some((word, 2))
    }

    /// `text` with its placeholders replaced and `\$` unescaped (inside a command or a path).
    fn substitute(&mut self, text: &str) -> String {
        let chars: Vec<char> = text.chars().collect();
        let mut out = String::new();
        let mut at = 0;
        while at < chars.len() {
            if chars[at] == '\\' && chars.get(at + 1) == Some(&'$') {
                out.push('$');
                at += 2;
            } else if chars[at] == '$'
                && let Some((value, length)) = self.placeholder(&chars[at..])
            {
                out.push_str(&value);
                at += length;
            } else {
                out.push(chars[at]);
                at += 1;
            }
        }
        out
    }
}

/// The output of a Bash call that succeeded, without the `[exit code 0 after … s]` line Bash
/// ends it with (the prompt wants what the command printed).
fn command_output(text: &str) -> String {
    let text = text.trim_end();
    match text.rsplit_once('\n') {
        Some((output, last)) if last.starts_with("[exit code 0 after ") => output.to_owned(),
        None if text.starts_with("[exit code 0 after ") => String::new(),
        _ => text.to_owned(),
    }
}

/// Expands `body` with `raw_args`: parses it, then reads each `@path` with Read and runs each
/// `` !`command` `` with Bash, in order, through `registry`.
pub async fn expand(
    body: &str,
    raw_args: &str,
    registry: &ToolRegistry,
    options: CallOptions,
) -> Result<Expansion, ExpandError> {
    let mut expansion = Expansion::default();
    for (index, piece) in parse_template(body, raw_args)?.into_iter().enumerate() {
        match piece {
            Piece::Text(text) => expansion.prompt.push_str(&text),
            Piece::File(path) => {
                let result = registry
                    .execute_with(
                        &format!("slash-command-read-{index}"),
                        "Read",
                        json!({ "path": path }),
                        options.clone(),
                    )
                    .await;
                if result.is_error {
                    // Not a file (a package name, an address) or not readable: the `@word`
                    // stays as the author wrote it.
                    tracing::warn!(
                        "slash command: @{path} is left as text: {}",
                        result.text().lines().next().unwrap_or_default()
                    );
                    expansion.prompt.push('@');
                    expansion.prompt.push_str(&path);
                    expansion.unresolved.push(path);
                    continue;
                }
                expansion.prompt.push_str(&format!(
                    "<file path=\"{path}\">\n{}\n</file>",
                    result.text().trim_end()
                ));
                expansion.files.push(path);
            }
            Piece::Command(command) => {
                let result = registry
                    .execute_with(
                        &format!("slash-command-bash-{index}"),
                        "Bash",
                        json!({ "command": command }),
                        options.clone(),
                    )
                    .await;
                if result.is_error {
                    return Err(ExpandError::Command {
                        command,
                        message: result.text(),
                    });
                }
                expansion.prompt.push_str(&command_output(&result.text()));
                expansion.commands.push(command);
            }
        }
    }
    Ok(expansion)
}

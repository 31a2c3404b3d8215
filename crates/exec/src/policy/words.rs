//! Shell words after unquoting, where their value is known before the command runs.

use tree_sitter::Node;

/// One word of a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Word {
    /// The value is known statically: quotes removed, escapes resolved (`'a b'` → `a b`,
    /// `\rm` → `rm`). Tildes and globs are left as written (`~`, `*.rs`).
    Static(String),
    /// The value depends on an expansion (`$HOME`, `"$x/y"`, `$(date)`); holds the source text.
    Dynamic(String),
}

impl Word {
    /// The value when it is statically known.
    pub fn as_static(&self) -> Option<&str> {
        match self {
            Word::Static(value) => Some(value),
            Word::Dynamic(_) => None,
        }
    }

    /// The static value, or the source text of a dynamic word.
    pub fn text(&self) -> &str {
        match self {
            Word::Static(text) | Word::Dynamic(text) => text,
        }
    }
}

pub(crate) fn node_text<'s>(node: Node<'_>, source: &'s str) -> &'s str {
    source.get(node.byte_range()).unwrap_or_default()
}

/// The word a syntax node stands for.
pub(crate) fn word_of(node: Node<'_>, source: &str) -> Word {
    let text = node_text(node, source);
    match node.kind() {
        "word" | "number" => Word::Static(unescape_bare(text)),
        "raw_string" => Word::Static(strip_delimiters(text, "'", "'").to_owned()),
        "ansi_c_string" => Word::Static(unescape_ansi_c(strip_delimiters(text, "$'", "'"))),
        "string" => {
            let mut cursor = node.walk();
            let plain = node
                .named_children(&mut cursor)
                .all(|child| child.kind() == "string_content");
            if plain {
                Word::Static(unescape_double_quoted(strip_delimiters(text, "\"", "\"")))
            } else {
                Word::Dynamic(text.to_owned())
            }
        }
        "concatenation" | "command_name" => {
            let mut cursor = node.walk();
            let mut value = String::new();
            for child in node.named_children(&mut cursor) {
                match word_of(child, source) {
                    Word::Static(part) => value.push_str(&part),
                    Word::Dynamic(_) => return Word::Dynamic(text.to_owned()),
                }
            }
            Word::Static(value)
        }
        _ => Word::Dynamic(text.to_owned()),
    }
}

fn strip_delimiters<'t>(text: &'t str, open: &str, close: &str) -> &'t str {
    let text = text.strip_prefix(open).unwrap_or(text);
    text.strip_suffix(close).unwrap_or(text)
}

/// Outside quotes a backslash keeps the next character literally; `\<newline>` joins lines.
fn unescape_bare(text: &str) -> String {
    let mut value = String::with_capacity(text.len());
    let mut characters = text.chars();
    while let Some(character) = characters.next() {
        if character != '\\' {
            value.push(character);
            continue;
        }
        match characters.next() {
            Some('\n') | None => {}
            Some(next) => value.push(next),
        }
    }
    value
}

/// Inside double quotes a backslash only escapes `$`, `` ` ``, `"`, `\` and newline.
fn unescape_double_quoted(text: &str) -> String {
    let mut value = String::with_capacity(text.len());
    let mut characters = text.chars().peekable();
    while let Some(character) = characters.next() {
        if character == '\\' {
            match characters.peek() {
                Some('\n') => {
                    characters.next();
                    continue;
                }
                Some(&next @ ('$' | '`' | '"' | '\\')) => {
                    value.push(next);
                    characters.next();
                    continue;
                }
                _ => {}
            }
        }
        value.push(character);
    }
    value
}

/// `$'…'` strings: the common escapes; others are kept as written.
fn unescape_ansi_c(text: &str) -> String {
    let mut value = String::with_capacity(text.len());
    let mut characters = text.chars();
    while let Some(character) = characters.next() {
        if character != '\\' {
            value.push(character);
            continue;
        }
        match characters.next() {
            Some('n') => value.push('\n'),
            Some('t') => value.push('\t'),
            Some('r') => value.push('\r'),
            Some(next @ ('\\' | '\'' | '"')) => value.push(next),
            Some(other) => {
                value.push('\\');
                value.push(other);
            }
            None => value.push('\\'),
        }
    }
    value
}

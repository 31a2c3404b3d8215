//! Markdown files that open with YAML front matter, as Claude Code writes skills (`SKILL.md`)
//! and slash commands (`.claude/commands/*.md`):
//!
//! ```text
//! ---
//! name: pdf
//! description: Fill in PDF forms.
//! ---
//! The body: instructions for the model.
//! ```
//!
//! A file without the opening `---` line has no front matter: all of it is the body. Fields
//! the caller's type does not know are ignored, so files written for Claude Code, with keys
//! toolhost has no use for, load unchanged.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde::de::DeserializeOwned;

/// Why a file's front matter cannot be used; names the file and the line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}:{line}: {message}", path.display())]
pub struct FrontMatterError {
    /// The file.
    pub path: PathBuf,
    /// The line of the problem, 1-based, in the whole file.
    pub line: usize,
    /// What is wrong and what to write instead.
    pub message: String,
}

/// A file split into its parsed front matter and its body.
#[derive(Debug, Clone, PartialEq)]
pub struct Document<T> {
    /// The front matter; `T::default()` when the file has none.
    pub fields: T,
    /// Everything after the closing `---` line.
    pub body: String,
}

/// Parses `text` (the content of `path`, which only names it in errors).
pub fn parse<T: DeserializeOwned + Default>(
    path: &Path,
    text: &str,
) -> Result<Document<T>, FrontMatterError> {
    parse_with_literal_keys(path, text, &[])
}

/// As [`parse`], but the plain (unquoted, one-line) values of the top-level `keys` are taken
/// as written rather than as YAML: Claude Code reads `argument-hint: [pr] [priority]` and
/// `description: Review: the diff` as text, where YAML sees a broken list and a nested map.
pub fn parse_with_literal_keys<T: DeserializeOwned + Default>(
    path: &Path,
    text: &str,
    keys: &[&str],
) -> Result<Document<T>, FrontMatterError> {
    let error = |line: usize, message: String| FrontMatterError {
        path: path.to_owned(),
        line,
        message,
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let Some(first) = lines.next() else {
        return Ok(Document {
            fields: T::default(),
            body: String::new(),
        });
    };
    if first.trim_end() != "---" {
        return Ok(Document {
            fields: T::default(),
            body: text.to_owned(),
        });
    }
    let mut yaml_end = first.len();
    let mut body_start = None;
    for line in lines {
        if matches!(line.trim_end(), "---" | "...") {
            body_start = Some(yaml_end + line.len());
            break;
        }
        yaml_end += line.len();
    }
    let Some(body_start) = body_start else {
        return Err(error(
            1,
            "the front matter opened here is never closed: end it with a line holding only ---"
                .to_owned(),
        ));
    };
    let yaml = quote_literal_values(&text[first.len()..yaml_end], keys);
    let yaml = yaml.as_str();
    let fields = if yaml.trim().is_empty() {
        T::default()
    } else {
        serde_yaml_ng::from_str::<Option<T>>(yaml)
            .map_err(|problem| {
                // The YAML starts on the file's second line.
                let line = problem.location().map_or(1, |at| at.line() + 1);
                let message = problem.to_string();
                // serde_yaml_ng appends " at line L column C", counted inside the YAML.
                let message = message
                    .split(" at line ")
                    .next()
                    .unwrap_or(&message)
                    .to_owned();
                error(line, format!("invalid front matter: {message}"))
            })?
            .unwrap_or_default()
    };
    Ok(Document {
        fields,
        body: text[body_start..].to_owned(),
    })
}

/// The head of the file `path`: its front matter, up to and with the line that closes it, and
/// nothing of its body (which may be long and is not needed to know what the file defines).
/// A file that does not open with `---` gives its first line only; one whose front matter is
/// never closed gives it all, so that parsing it names the problem.
pub fn read_head(path: &Path) -> std::io::Result<String> {
    use std::io::BufRead as _;

    let mut reader = std::io::BufReader::new(std::fs::File::open(path)?);
    let mut head = String::new();
    let mut line = String::new();
    let mut first = true;
    while reader.read_line(&mut line)? > 0 {
        head.push_str(&line);
        let trimmed = line.trim_start_matches('\u{feff}').trim_end();
        if first && trimmed != "---" {
            break;
        }
        if !first && matches!(trimmed, "---" | "...") {
            break;
        }
        first = false;
        line.clear();
    }
    Ok(head)
}

/// `yaml` with the plain values of `keys` single-quoted, line for line (so lines keep their
/// numbers).
fn quote_literal_values(yaml: &str, keys: &[&str]) -> String {
    yaml.split_inclusive('\n')
        .map(|line| {
            let Some((key, value)) = line.split_once(':') else {
                return line.to_owned();
            };
            let value = value.trim();
            let plain = !value.is_empty()
                && !value.starts_with(['\'', '"', '|', '>', '&', '*', '!'])
                && !value.starts_with('#');
            if !keys.contains(&key) || !plain {
                return line.to_owned();
            }
            let ending = if line.ends_with('\n') { "\n" } else { "" };
            format!("{key}: '{}'{ending}", value.replace('\'', "''"))
        })
        .collect()
}

/// A front-matter value written either as one comma-separated string (`Read, Grep`) or as a
/// YAML list (`[Read, Grep]`), as Claude Code accepts both for `allowed-tools`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum StringOrList {
    /// `allowed-tools: Read, Bash(git add:*)`.
    String(String),
    /// `allowed-tools: [Read, "Bash(git add:*)"]`.
    List(Vec<String>),
}

impl StringOrList {
    /// The entries; a string is split at commas outside parentheses.
    pub fn entries(&self) -> Vec<String> {
        match self {
            Self::List(entries) => entries
                .iter()
                .map(|entry| entry.trim().to_owned())
                .filter(|entry| !entry.is_empty())
                .collect(),
            Self::String(line) => {
                let mut entries = Vec::new();
                let mut depth = 0usize;
                let mut current = String::new();
                for c in line.chars() {
                    match c {
                        '(' => depth += 1,
                        ')' => depth = depth.saturating_sub(1),
                        _ => {}
                    }
                    if c == ',' && depth == 0 {
                        entries.push(std::mem::take(&mut current));
                    } else {
                        current.push(c);
                    }
                }
                entries.push(current);
                entries
                    .into_iter()
                    .map(|entry| entry.trim().to_owned())
                    .filter(|entry| !entry.is_empty())
                    .collect()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[derive(Debug, Default, Deserialize, PartialEq)]
    struct Fields {
        name: Option<String>,
        #[serde(rename = "allowed-tools")]
        allowed_tools: Option<StringOrList>,
    }

    #[test]
    fn front_matter_and_body_split_at_the_closing_line() {
        let doc: Document<Fields> = parse(
            Path::new("SKILL.md"),
            "---\nname: pdf\nextra: ignored\n---\nBody line\n",
        )
        .unwrap();
        assert_eq!(doc.fields.name.as_deref(), Some("pdf"));
        assert_eq!(doc.body, "Body line\n");
    }

    #[test]
    fn a_file_without_front_matter_is_all_body() {
        let doc: Document<Fields> = parse(Path::new("a.md"), "Just text\n").unwrap();
        assert_eq!(doc.fields, Fields::default());
        assert_eq!(doc.body, "Just text\n");
    }

    #[test]
    fn bad_yaml_names_the_file_line() {
        let error = parse::<Fields>(
            Path::new("x/SKILL.md"),
            "---\nname: pdf\nallowed-tools: [Read\n---\nbody",
        )
        .unwrap_err();
        assert_eq!(error.path, Path::new("x/SKILL.md"));
        assert!(error.line >= 3, "{error}");
        assert!(error.to_string().starts_with("x/SKILL.md:"), "{error}");
    }

    #[test]
    fn unclosed_front_matter_is_refused_at_line_one() {
        let error = parse::<Fields>(Path::new("a.md"), "---\nname: x\n").unwrap_err();
        assert_eq!(error.line, 1);
        assert!(error.message.contains("never closed"));
    }

    #[derive(Debug, Default, Deserialize, PartialEq)]
    struct Hinted {
        description: Option<String>,
        #[serde(rename = "argument-hint")]
        argument_hint: Option<String>,
    }

    #[test]
    fn literal_keys_keep_claude_code_style_values_as_text() {
        let doc: Document<Hinted> = parse_with_literal_keys(
            Path::new("c.md"),
            "---\nargument-hint: [pr-number] [priority]\ndescription: Review: the 'diff'\n---\n",
            &["argument-hint", "description"],
        )
        .unwrap();
        assert_eq!(
            doc.fields.argument_hint.as_deref(),
            Some("[pr-number] [priority]")
        );
        assert_eq!(
            doc.fields.description.as_deref(),
            Some("Review: the 'diff'")
        );
        let quoted: Document<Hinted> = parse_with_literal_keys(
            Path::new("c.md"),
            "---\ndescription: \"quoted\"\n---\n",
            &["description"],
        )
        .unwrap();
        assert_eq!(quoted.fields.description.as_deref(), Some("quoted"));
    }

    #[test]
    fn allowed_tools_as_a_string_or_a_list() {
        let line = StringOrList::String("Read, Bash(git add:*, x), Grep".into());
        assert_eq!(line.entries(), ["Read", "Bash(git add:*, x)", "Grep"]);
        let list = StringOrList::List(vec!["Read".into(), " Grep ".into()]);
        assert_eq!(list.entries(), ["Read", "Grep"]);
    }
}

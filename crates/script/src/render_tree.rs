//! What a render hook returns, once `api.js` has normalised it: a declarative tree of lines of
//! styled spans and collapsible sections (R5). A hook never writes terminal escapes: the UI
//! draws the tree, and strips control characters from every text it draws, so a tool cannot
//! repaint the screen or hide text.
//!
//! A hook may return, and `api.js` turns into this tree:
//! - a string (split into lines), or an array of lines;
//! - a line: a string, an array of spans, or `{ spans: [...] }`;
//! - a span: a string, or `{ text, fg?, bg?, bold?, italic?, underline?, dim? }` where a colour
//!   is a theme role (`accent`, `success`, `error`, `warning`, `muted`, `text`), a colour name
//!   (`red`, `cyan`, …) or `#rrggbb`;
//! - a section: `{ section: "title", collapsed?: true, lines: [...] }`, drawn folded to its
//!   title until the user expands the tool boxes.

use serde::Deserialize;

/// A rendering: its blocks, top to bottom.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct RenderTree {
    /// The lines and sections.
    pub blocks: Vec<RenderBlock>,
}

/// A line, or a section of lines under a title.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RenderBlock {
    /// One line.
    Line(RenderLine),
    /// Lines under a title, folded when `collapsed` until the user expands.
    Section {
        /// The title, always shown.
        title: RenderLine,
        /// Whether it starts folded.
        #[serde(default)]
        collapsed: bool,
        /// Its lines.
        lines: Vec<RenderLine>,
    },
}

/// A line of spans.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct RenderLine {
    /// The spans, left to right.
    pub spans: Vec<RenderSpan>,
}

/// Text in one style.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct RenderSpan {
    /// The text (drawn with control characters removed).
    pub text: String,
    /// The foreground: a theme role, a colour name or `#rrggbb`.
    #[serde(default)]
    pub fg: Option<String>,
    /// The background, as `fg`.
    #[serde(default)]
    pub bg: Option<String>,
    /// Bold.
    #[serde(default)]
    pub bold: bool,
    /// Italic.
    #[serde(default)]
    pub italic: bool,
    /// Underlined.
    #[serde(default)]
    pub underline: bool,
    /// Dimmed.
    #[serde(default)]
    pub dim: bool,
}

impl RenderTree {
    /// Unstyled lines, one per text line.
    pub fn plain(text: &str) -> Self {
        Self {
            blocks: text
                .lines()
                .map(|line| RenderBlock::Line(RenderLine::plain(line)))
                .collect(),
        }
    }

    /// Its text, sections unfolded, one line per line (tests, and what a plain front end
    /// would print).
    pub fn text(&self) -> String {
        let mut lines = Vec::new();
        for block in &self.blocks {
            match block {
                RenderBlock::Line(line) => lines.push(line.text()),
                RenderBlock::Section {
                    title,
                    lines: inner,
                    ..
                } => {
                    lines.push(title.text());
                    lines.extend(inner.iter().map(RenderLine::text));
                }
            }
        }
        lines.join("\n")
    }
}

impl RenderLine {
    /// One unstyled span.
    pub fn plain(text: &str) -> Self {
        Self {
            spans: vec![RenderSpan {
                text: text.to_owned(),
                ..RenderSpan::default()
            }],
        }
    }

    /// Its spans' text.
    pub fn text(&self) -> String {
        self.spans.iter().map(|span| span.text.as_str()).collect()
    }
}

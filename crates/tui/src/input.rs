//! The input box: multi-line text with a cursor, and the history of what was sent (kept in
//! `~/.toolhost/chat_history`, the file the line mode uses).

use std::path::Path;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Entries of history kept.
const HISTORY_LIMIT: usize = 1_000;

/// What a key did to the input.
#[derive(Debug, PartialEq, Eq)]
pub enum InputOutcome {
    /// The text changed or the cursor moved (or nothing happened).
    Edited,
    /// Enter: the text is sent.
    Submitted(String),
    /// The key is not the input's.
    Ignored,
}

/// The text being typed.
#[derive(Debug, Default)]
pub struct InputBox {
    text: String,
    /// The cursor, a byte offset on a character boundary.
    cursor: usize,
    history: Vec<String>,
    /// Where Up/Down are in the history (`None`: at the text being typed).
    browsing: Option<usize>,
    /// The text being typed, kept while browsing the history.
    draft: String,
}

impl InputBox {
    /// The text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The cursor's line and column (in characters).
    pub fn cursor_position(&self) -> (usize, usize) {
        let before = &self.text[..self.cursor];
        let line = before.matches('\n').count();
        let column = before.rsplit('\n').next().unwrap_or_default();
        (line, unicode_width::UnicodeWidthStr::width(column))
    }

    /// Replaces the text.
    pub fn set_text(&mut self, text: &str) {
        self.text = text.to_owned();
        self.cursor = self.text.len();
    }

    /// Inserts pasted text at the cursor (newlines stay newlines).
    pub fn paste(&mut self, text: &str) {
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        self.text.insert_str(self.cursor, &text);
        self.cursor += text.len();
    }

    /// Reads the history file (the line mode's format: a `#V2` line, then one entry a line
    /// with `\` and newlines escaped).
    pub fn load_history(&mut self, path: &Path) {
        let Ok(content) = std::fs::read_to_string(path) else {
            return;
        };
        self.history = content
            .lines()
            .filter(|line| !line.starts_with("#V"))
            .map(unescape)
            .filter(|entry| !entry.trim().is_empty())
            .collect();
    }

    /// Writes the history file.
    pub fn save_history(&self, path: &Path) -> std::io::Result<()> {
        let start = self.history.len().saturating_sub(HISTORY_LIMIT);
        let mut content = String::from("#V2\n");
        for entry in &self.history[start..] {
            content.push_str(&escape(entry));
            content.push('\n');
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, content)
    }

    /// Handles a key.
    pub fn key(&mut self, key: KeyEvent) -> InputOutcome {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        match key.code {
            KeyCode::Enter if alt || shift => return self.insert('\n'),
            KeyCode::Char('j') if ctrl => return self.insert('\n'),
            KeyCode::Enter => {
                // A line ending in `\` continues on the next one.
                if self.cursor == self.text.len() && self.text.ends_with('\\') {
                    self.text.pop();
                    self.cursor -= 1;
                    return self.insert('\n');
                }
                return self.submit();
            }
            KeyCode::Char('u') if ctrl => {
                self.text.clear();
                self.cursor = 0;
            }
            KeyCode::Char('a') if ctrl => self.cursor = self.line_start(),
            KeyCode::Char('e') if ctrl => self.cursor = self.line_end(),
            KeyCode::Char(c) if !ctrl => return self.insert(c),
            KeyCode::Backspace => {
                if let Some(c) = self.text[..self.cursor].chars().next_back() {
                    self.cursor -= c.len_utf8();
                    self.text.remove(self.cursor);
                }
            }
            KeyCode::Delete => {
                if self.cursor < self.text.len() {
                    self.text.remove(self.cursor);
                }
            }
            KeyCode::Left => {
                if let Some(c) = self.text[..self.cursor].chars().next_back() {
                    self.cursor -= c.len_utf8();
                }
            }
            KeyCode::Right => {
                if let Some(c) = self.text[self.cursor..].chars().next() {
                    self.cursor += c.len_utf8();
                }
            }
            KeyCode::Home => self.cursor = self.line_start(),
            KeyCode::End => self.cursor = self.line_end(),
            KeyCode::Up if self.line_start() > 0 => self.vertical(-1),
            KeyCode::Down if self.line_end() < self.text.len() => self.vertical(1),
            KeyCode::Up => self.history_step(-1),
            KeyCode::Down => self.history_step(1),
            _ => return InputOutcome::Ignored,
        }
        InputOutcome::Edited
    }

    fn insert(&mut self, c: char) -> InputOutcome {
        self.text.insert(self.cursor, c);
        self.cursor += c.len_utf8();
        InputOutcome::Edited
    }

    fn submit(&mut self) -> InputOutcome {
        let text = std::mem::take(&mut self.text);
        self.cursor = 0;
        self.browsing = None;
        if !text.trim().is_empty() && self.history.last() != Some(&text) {
            self.history.push(text.clone());
        }
        InputOutcome::Submitted(text)
    }

    fn line_start(&self) -> usize {
        self.text[..self.cursor].rfind('\n').map_or(0, |at| at + 1)
    }

    fn line_end(&self) -> usize {
        self.text[self.cursor..]
            .find('\n')
            .map_or(self.text.len(), |at| self.cursor + at)
    }

    /// Moves the cursor a line up or down, keeping its column where the line allows.
    fn vertical(&mut self, direction: i32) {
        let column = self.text[self.line_start()..self.cursor].chars().count();
        let target_start = if direction < 0 {
            let previous_end = self.line_start() - 1;
            self.text[..previous_end].rfind('\n').map_or(0, |at| at + 1)
        } else {
            self.line_end() + 1
        };
        let line = &self.text[target_start..];
        let line = line.split('\n').next().unwrap_or_default();
        let offset: usize = line.chars().take(column).map(char::len_utf8).sum();
        self.cursor = target_start + offset;
    }

    fn history_step(&mut self, direction: i32) {
        if self.history.is_empty() {
            return;
        }
        let next = match (self.browsing, direction < 0) {
            (None, true) => {
                self.draft = self.text.clone();
                Some(self.history.len() - 1)
            }
            (None, false) => return,
            (Some(at), true) => Some(at.saturating_sub(1)),
            (Some(at), false) if at + 1 < self.history.len() => Some(at + 1),
            (Some(_), false) => None,
        };
        self.browsing = next;
        let text = match next {
            Some(at) => self.history[at].clone(),
            None => std::mem::take(&mut self.draft),
        };
        self.set_text(&text);
    }
}

fn escape(entry: &str) -> String {
    entry.replace('\\', "\\\\").replace('\n', "\\n")
}

fn unescape(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some(other) => out.push(other),
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn typed(input: &mut InputBox, text: &str) {
        for c in text.chars() {
            input.key(key(KeyCode::Char(c)));
        }
    }

    #[test]
    fn enter_sends_alt_enter_and_a_trailing_backslash_continue_the_line() {
        let mut input = InputBox::default();
        typed(&mut input, "one");
        input.key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT));
        typed(&mut input, "two\\");
        input.key(key(KeyCode::Enter));
        typed(&mut input, "three");
        assert_eq!(input.cursor_position(), (2, 5));
        assert_eq!(
            input.key(key(KeyCode::Enter)),
            InputOutcome::Submitted("one\ntwo\nthree".into())
        );
        assert_eq!(input.text(), "");
    }

    #[test]
    fn up_and_down_walk_the_history_and_come_back_to_the_draft() {
        let mut input = InputBox::default();
        for line in ["first", "second"] {
            typed(&mut input, line);
            input.key(key(KeyCode::Enter));
        }
        typed(&mut input, "dra");
        input.key(key(KeyCode::Up));
        assert_eq!(input.text(), "second");
        input.key(key(KeyCode::Up));
        assert_eq!(input.text(), "first");
        input.key(key(KeyCode::Down));
        input.key(key(KeyCode::Down));
        assert_eq!(input.text(), "dra");
    }

    #[test]
    fn history_survives_in_the_line_modes_file_format() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("chat_history");
        let mut input = InputBox::default();
        input.paste("two\nlines \\ here");
        input.key(key(KeyCode::Enter));
        input.save_history(&path).unwrap();
        let mut again = InputBox::default();
        again.load_history(&path);
        again.key(key(KeyCode::Up));
        assert_eq!(again.text(), "two\nlines \\ here");
    }
}

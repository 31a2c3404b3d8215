//! Head + tail output capture within a byte cap.

use std::collections::VecDeque;
use std::path::Path;

/// The default cap on captured output: the Bash tool's 100 KB (SPEC R22). Callers pass their
/// own cap through [`ProcessSpec::output_cap`](crate::ProcessSpec::output_cap).
pub const DEFAULT_OUTPUT_CAP_BYTES: usize = 100 * 1024;

/// Output kept within a cap: the whole text when it fits, otherwise its head and its tail
/// joined by a marker that says how much was cut (and where the full output is, if known).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CapturedOutput {
    /// The kept text (lossy UTF-8), including the truncation marker when something was cut.
    pub text: String,
    /// Bytes the process wrote to this stream in total.
    pub total_bytes: u64,
    /// Lines the process wrote in total (a final line without a newline counts).
    pub total_lines: u64,
    /// Bytes left out of `text`.
    pub omitted_bytes: u64,
    /// Whole or partial lines left out of `text`.
    pub omitted_lines: u64,
}

impl CapturedOutput {
    /// Whether some output was cut to stay within the cap.
    pub fn is_truncated(&self) -> bool {
        self.omitted_bytes > 0
    }
}

/// Accumulates a stream, keeping at most `cap / 2` bytes of head and `cap - cap / 2` of tail.
#[derive(Debug)]
pub(crate) struct HeadTailCapture {
    head_budget: usize,
    tail_budget: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total_bytes: u64,
    newlines: u64,
    ends_with_newline: bool,
}

impl HeadTailCapture {
    pub(crate) fn new(cap: usize) -> Self {
        let head_budget = cap / 2;
        Self {
            head_budget,
            tail_budget: cap - head_budget,
            head: Vec::new(),
            tail: VecDeque::new(),
            total_bytes: 0,
            newlines: 0,
            ends_with_newline: false,
        }
    }

    pub(crate) fn push(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        self.total_bytes += bytes.len() as u64;
        self.newlines += count_newlines(bytes);
        self.ends_with_newline = bytes.last() == Some(&b'\n');
        let to_head = self
            .head_budget
            .saturating_sub(self.head.len())
            .min(bytes.len());
        self.head.extend_from_slice(&bytes[..to_head]);
        let rest = &bytes[to_head..];
        // Only the last `tail_budget` bytes of `rest` can survive.
        let rest = &rest[rest.len().saturating_sub(self.tail_budget)..];
        self.tail.extend(rest);
        let excess = self.tail.len().saturating_sub(self.tail_budget);
        self.tail.drain(..excess);
    }

    /// The kept text; `full_output` is named in the marker when the caller wrote it.
    pub(crate) fn finish(self, full_output: Option<&Path>) -> CapturedOutput {
        let total_lines =
            self.newlines + u64::from(self.total_bytes > 0 && !self.ends_with_newline);
        let kept = self.head.len() + self.tail.len();
        let (head, tail) = (self.head, Vec::from(self.tail));
        if kept as u64 == self.total_bytes {
            let mut all = head;
            all.extend_from_slice(&tail);
            return CapturedOutput {
                text: String::from_utf8_lossy(&all).into_owned(),
                total_bytes: self.total_bytes,
                total_lines,
                omitted_bytes: 0,
                omitted_lines: 0,
            };
        }
        let head = trim_head(&head);
        let tail = trim_tail(&tail);
        let kept_lines = count_newlines(head)
            + count_newlines(tail)
            + u64::from(!tail.is_empty() && !self.ends_with_newline);
        let omitted_bytes = self.total_bytes - (head.len() + tail.len()) as u64;
        let omitted_lines = total_lines.saturating_sub(kept_lines);
        let mut text = String::from_utf8_lossy(head).into_owned();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!(
            "[... {omitted_bytes} bytes ({omitted_lines} lines) omitted"
        ));
        if let Some(path) = full_output {
            text.push_str(&format!("; full output in {}", path.display()));
        }
        text.push_str(" ...]\n");
        text.push_str(&String::from_utf8_lossy(tail));
        CapturedOutput {
            text,
            total_bytes: self.total_bytes,
            total_lines,
            omitted_bytes,
            omitted_lines,
        }
    }
}

fn count_newlines(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&byte| byte == b'\n').count() as u64
}

/// The head up to its last complete line; when it holds no newline at all (one huge line), up
/// to the last complete UTF-8 character.
fn trim_head(head: &[u8]) -> &[u8] {
    if let Some(last) = head.iter().rposition(|&byte| byte == b'\n') {
        return &head[..=last];
    }
    match std::str::from_utf8(head) {
        Ok(_) => head,
        Err(error) => &head[..error.valid_up_to()],
    }
}

/// The tail from its first complete line; without a newline, from the first character start.
fn trim_tail(tail: &[u8]) -> &[u8] {
    if let Some(first) = tail.iter().position(|&byte| byte == b'\n')
        && first + 1 < tail.len()
    {
        return &tail[first + 1..];
    }
    let start = tail
        .iter()
        .position(|&byte| byte & 0b1100_0000 != 0b1000_0000)
        .unwrap_or(tail.len());
    &tail[start..]
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn small_output_is_kept_whole() {
        let mut capture = HeadTailCapture::new(100);
        capture.push(b"one\ntwo\n");
        capture.push(b"three");
        let output = capture.finish(None);
        assert_eq!(
            output,
            CapturedOutput {
                text: "one\ntwo\nthree".into(),
                total_bytes: 13,
                total_lines: 3,
                omitted_bytes: 0,
                omitted_lines: 0,
            }
        );
    }

    #[test]
    fn large_output_keeps_whole_lines_of_head_and_tail() {
        let mut capture = HeadTailCapture::new(40);
        for line in 0..100 {
            capture.push(format!("line {line:03}\n").as_bytes());
        }
        let output = capture.finish(Some(Path::new("/tmp/full.log")));
        assert_eq!(
            output.text,
            "line 000\nline 001\n[... 864 bytes (96 lines) omitted; full output in \
             /tmp/full.log ...]\nline 098\nline 099\n"
        );
        assert_eq!(output.total_lines, 100);
        assert_eq!(output.omitted_lines, 96);
        assert!(output.is_truncated());
    }

    #[test]
    fn one_huge_line_is_cut_on_character_boundaries() {
        let mut capture = HeadTailCapture::new(9);
        capture.push("ééééééééééé".as_bytes());
        let output = capture.finish(None);
        assert_eq!(output.text, "éé\n[... 14 bytes (0 lines) omitted ...]\néé");
        assert_eq!(output.total_lines, 1);
    }
}

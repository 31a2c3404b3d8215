//! Server-sent events, decoded incrementally from the bytes of a response body.
//!
//! Written here rather than taken from a crate because model servers bend the format in ways
//! a strict decoder fails on, and the failure would hide the server's message: llama.cpp
//! builds of 2025 report errors in a non-standard `error:` field, some servers end with
//! `data: [DONE]` and no blank line. The decoder follows the WHATWG rules otherwise: lines end
//! in LF, CRLF or CR (which may fall on either side of a chunk boundary), `:` starts a comment,
//! one space after the colon is dropped, `data` lines join with `\n`, a blank line dispatches.

/// One event of a stream.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// The `event:` field; empty when the server gave none (a plain message).
    pub event: String,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

/// The field name llama.cpp used for errors before it moved them into `data:`; an event
/// carrying it is reported with [`SseEvent::event`] `error`.
const NONSTANDARD_ERROR_FIELD: &str = "error";

/// Turns chunks of bytes into events; keeps the unfinished line between chunks.
#[derive(Debug, Default)]
pub(crate) struct SseDecoder {
    line: Vec<u8>,
    event: Option<String>,
    data: Option<String>,
    /// The last chunk ended in CR: an LF starting the next one belongs to it.
    after_cr: bool,
    started: bool,
}

impl SseDecoder {
    /// Feeds one chunk; returns the events it completed, in order.
    pub fn push(&mut self, mut bytes: &[u8]) -> Vec<SseEvent> {
        let mut events = Vec::new();
        if self.after_cr && !bytes.is_empty() {
            self.after_cr = false;
            if bytes[0] == b'\n' {
                bytes = &bytes[1..];
            }
        }
        while let Some(end) = bytes.iter().position(|&b| b == b'\n' || b == b'\r') {
            self.line.extend_from_slice(&bytes[..end]);
            let line = std::mem::take(&mut self.line);
            self.process_line(&line, &mut events);
            let ended_with_cr = bytes[end] == b'\r';
            bytes = &bytes[end + 1..];
            if ended_with_cr {
                match bytes.first() {
                    Some(b'\n') => bytes = &bytes[1..],
                    None => self.after_cr = true,
                    Some(_) => {}
                }
            }
        }
        self.line.extend_from_slice(bytes);
        events
    }

    /// The body ended: returns the event whose lines were complete but whose blank line never
    /// came. An unterminated last line is dropped — it is the sign of a cut stream.
    pub fn finish(&mut self) -> Option<SseEvent> {
        self.line.clear();
        self.dispatch()
    }

    fn process_line(&mut self, mut line: &[u8], events: &mut Vec<SseEvent>) {
        if !self.started {
            self.started = true;
            line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        }
        if line.is_empty() {
            events.extend(self.dispatch());
            return;
        }
        let text = String::from_utf8_lossy(line);
        let (field, value) = match text.find(':') {
            Some(0) => return,
            Some(colon) => {
                let value = &text[colon + 1..];
                (&text[..colon], value.strip_prefix(' ').unwrap_or(value))
            }
            None => (&*text, ""),
        };
        match field {
            "data" => self.append_data(value),
            "event" => self.event = Some(value.to_owned()),
            NONSTANDARD_ERROR_FIELD => {
                self.event = Some(NONSTANDARD_ERROR_FIELD.to_owned());
                self.append_data(value);
            }
            // `id` and `retry` matter to browsers reconnecting, not to one model response.
            _ => {}
        }
    }

    fn append_data(&mut self, value: &str) {
        match &mut self.data {
            Some(data) => {
                data.push('\n');
                data.push_str(value);
            }
            None => self.data = Some(value.to_owned()),
        }
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = self.event.take();
        let data = self.data.take()?;
        Some(SseEvent {
            event: event.unwrap_or_default(),
            data,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn event(name: &str, data: &str) -> SseEvent {
        SseEvent {
            event: name.into(),
            data: data.into(),
        }
    }

    fn decode_in_pieces(bytes: &[u8], piece: usize) -> Vec<SseEvent> {
        let mut decoder = SseDecoder::default();
        let mut events: Vec<SseEvent> = bytes.chunks(piece).flat_map(|c| decoder.push(c)).collect();
        events.extend(decoder.finish());
        events
    }

    const STREAM: &[u8] = "\u{feff}: keep-alive\r\nevent: message_start\r\ndata: {\"a\":1}\r\n\r\n\
        data: first\rdata: second\r\rdata:no space\n\nevent: ping\nid: 7\nretry: 10\n\n\
        data: naïve ✓\n\n"
        .as_bytes();

    #[test]
    fn every_line_ending_and_field_rule_holds_at_any_chunk_size() {
        let expected = vec![
            event("message_start", r#"{"a":1}"#),
            event("", "first\nsecond"),
            event("", "no space"),
            event("", "naïve ✓"),
        ];
        for piece in 1..=STREAM.len() {
            assert_eq!(
                decode_in_pieces(STREAM, piece),
                expected,
                "pieces of {piece} bytes"
            );
        }
    }

    #[test]
    fn the_old_llama_cpp_error_field_becomes_an_error_event() {
        let bytes = b"error: {\"code\":400,\"message\":\"too long\"}\n\ndata: [DONE]\n\n";
        assert_eq!(
            decode_in_pieces(bytes, 5),
            vec![
                event("error", r#"{"code":400,"message":"too long"}"#),
                event("", "[DONE]")
            ]
        );
    }

    #[test]
    fn a_last_event_without_its_blank_line_counts_but_a_cut_line_does_not() {
        assert_eq!(
            decode_in_pieces(b"data: [DONE]\n", 3),
            vec![event("", "[DONE]")]
        );
        assert_eq!(decode_in_pieces(b"data: {\"choi", 3), vec![]);
    }
}

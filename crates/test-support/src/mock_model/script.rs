//! The script a [`MockModel`](super::MockModel) plays: steps, replies and the faults injected
//! into them. Nothing here knows a wire format; the format modules read a [`Reply`] through
//! the crate-private helpers at the end.

use std::time::Duration;

use serde_json::Value;

/// One scripted answer. Each request on the format's path consumes the next step, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// Answer 200 with this reply: streamed when the request has `"stream": true`, one JSON
    /// body otherwise.
    Respond(Reply),
    /// Answer with an HTTP error, its body in the wire format's error shape
    /// (`{"type":"error","error":{"type","message"}}` for Anthropic,
    /// `{"error":{"message","type","param","code"}}` for both OpenAI formats).
    Fail {
        /// The HTTP status: 429, 500, 503, 529…
        status: u16,
        /// Seconds for a `retry-after` header; no header when `None`.
        retry_after: Option<u64>,
        /// The error message, placed in the format's error shape (not sent raw).
        body: String,
    },
}

impl Step {
    /// An error answer with `status` and `message`, without `retry-after`.
    pub fn fail(status: u16, message: impl Into<String>) -> Self {
        Self::Fail {
            status,
            retry_after: None,
            body: message.into(),
        }
    }

    /// A 429 rate-limit answer with `retry-after: SECONDS`.
    pub fn rate_limited(retry_after_seconds: u64) -> Self {
        Self::Fail {
            status: 429,
            retry_after: Some(retry_after_seconds),
            body: "mock model: rate limited".to_owned(),
        }
    }

    /// A 529 "overloaded" answer, as Anthropic sends when it is busy.
    pub fn overloaded() -> Self {
        Self::fail(529, "Overloaded")
    }
}

impl From<Reply> for Step {
    fn from(reply: Reply) -> Self {
        Self::Respond(reply)
    }
}

/// What the model answers: reasoning, then text, then tool calls (each part optional), with
/// usage, a stop reason and faults. Build it with the constructors and `with_*` methods.
///
/// Unless [`Reply::with_stop`] says otherwise, a reply with tool calls stops for tool use and
/// any other ends its turn. Usage is zero until [`Reply::with_usage`] sets it; the model name
/// is `mock-model` until [`Reply::with_model`] sets it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reply {
    pub(crate) reasoning: Option<Reasoning>,
    pub(crate) text: String,
    pub(crate) tool_calls: Vec<ScriptedCall>,
    pub(crate) usage: ScriptedUsage,
    pub(crate) stop: Option<Stop>,
    pub(crate) model: Option<String>,
    pub(crate) faults: Vec<Fault>,
    pub(crate) delay_per_event: Option<Duration>,
}

/// Why the scripted model stopped; each format spells it its own way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Finished its answer: `stop` (chat), `completed` (Responses), `end_turn` (Anthropic).
    EndTurn,
    /// Wants tool results: `tool_calls` (chat), `completed` (Responses), `tool_use` (Anthropic).
    ToolUse,
    /// Ran into its output limit: `length` (chat), `incomplete` with `max_output_tokens`
    /// (Responses), `max_tokens` (Anthropic).
    MaxTokens,
}

/// A fault injected into one [`Reply`].
///
/// The breaks ([`Fault::DropMidStream`], [`Fault::DropBeforeFirstByte`],
/// [`Fault::StreamError`]) fire once: the attempt that meets one is broken, the step stays at
/// the head of the script, and the retry plays the same reply without that break (so the
/// script still lines up). Several breaks on one reply fire on successive attempts, in the
/// order they were added. The other faults shape every playing of the reply, retries included.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Text, reasoning and tool-call arguments cut into deltas of at most this many bytes
    /// (at char boundaries; a character longer than the limit travels alone; 0 counts as 1).
    /// Without it each of them travels in one delta.
    SplitDeltas(usize),
    /// Chat format only: each tool call's first delta carries its id (and type) but no
    /// function; the name follows in a delta of its own, then the arguments.
    NameAfterId,
    /// Several tool calls stream interleaved: every call starts first, then their argument
    /// deltas alternate by index, then every call ends. (Anthropic itself never interleaves
    /// blocks; this tests an accumulator's keying by index.)
    InterleaveCalls,
    /// Close the connection after this many SSE events (frames, `[DONE]` and `ping` included),
    /// without ending the response: 0 sends the 200 head and nothing more; a number past the
    /// last event sends them all but not the end of the chunked body. For a non-streaming
    /// request, half of the JSON body is sent instead. Fires once.
    DropMidStream {
        /// How many events the client gets before the connection closes.
        after_events: usize,
    },
    /// Read the request, then close the connection without sending a byte. Fires once.
    DropBeforeFirstByte,
    /// After this many SSE events, send the format's error event and end the stream cleanly,
    /// as a server that fails once the 200 head is out does: Anthropic's `error` event with
    /// `overloaded_error`, the Responses API's `response.failed`, a chat chunk
    /// `{"error":{…}}`. For a non-streaming request, answer with the error status instead
    /// (Anthropic 529, OpenAI 500). Fires once.
    StreamError {
        /// How many events the client gets before the error event.
        after_events: usize,
    },
    /// Wait this long before the response head (and so before the first event). Shapes every
    /// playing of the step and the step is consumed; to test a first-byte timeout and its
    /// retry, script the slow reply and then the reply the retry should get.
    SlowFirstByte(Duration),
}

impl Fault {
    /// Whether this fault fires on one attempt only.
    fn is_one_shot(self) -> bool {
        matches!(
            self,
            Self::DropMidStream { .. } | Self::DropBeforeFirstByte | Self::StreamError { .. }
        )
    }
}

impl Reply {
    /// A reply of text only.
    pub fn text(text: impl Into<String>) -> Self {
        Self::default().with_text(text)
    }

    /// A reply of one tool call with `arguments` serialised as JSON.
    pub fn tool_call(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        Self::default().with_tool_call(id, name, arguments)
    }

    /// A reply of several tool calls, `(id, name, arguments)`, in order.
    pub fn tool_calls<I, N>(calls: impl IntoIterator<Item = (I, N, Value)>) -> Self
    where
        I: Into<String>,
        N: Into<String>,
    {
        calls
            .into_iter()
            .fold(Self::default(), |reply, (id, name, arguments)| {
                reply.with_tool_call(id, name, arguments)
            })
    }

    /// Sets the answer text (sent before any tool call).
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        self.text = text.into();
        self
    }

    /// Sets the reasoning ("thinking"), sent before the text. Chat sends it as
    /// `reasoning_content`, Responses as a reasoning summary, Anthropic as a thinking block.
    pub fn with_reasoning(mut self, text: impl Into<String>) -> Self {
        let signature = self.reasoning.take().and_then(|r| r.signature);
        self.reasoning = Some(Reasoning {
            text: text.into(),
            signature,
        });
        self
    }

    /// Sets the reasoning's opaque signature: Anthropic's `signature_delta`, the Responses
    /// API's `encrypted_content`; the chat format has no place for it.
    pub fn with_reasoning_signature(mut self, signature: impl Into<String>) -> Self {
        let text = self.reasoning.take().map(|r| r.text).unwrap_or_default();
        self.reasoning = Some(Reasoning {
            text,
            signature: Some(signature.into()),
        });
        self
    }

    /// Adds a tool call with `arguments` serialised as JSON.
    pub fn with_tool_call(
        self,
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: Value,
    ) -> Self {
        self.with_raw_arguments(id, name, &arguments.to_string())
    }

    /// Adds a tool call whose arguments are sent verbatim: truncated JSON, `""`, anything.
    pub fn with_raw_arguments(
        mut self,
        id: impl Into<String>,
        name: impl Into<String>,
        raw: &str,
    ) -> Self {
        self.tool_calls.push(ScriptedCall {
            id: id.into(),
            name: name.into(),
            arguments: raw.to_owned(),
            kind: CallKind::Function,
        });
        self
    }

    /// Adds a call of the client-executed tool search, as a model does that is offered
    /// `{"type": "tool_search", "execution": "client"}`: the Responses API sends it as a
    /// `tool_search_call` item (`arguments` an object, whole in the item, no argument
    /// deltas), the other formats as a call of the tool `tool_search`.
    pub fn with_tool_search_call(mut self, id: impl Into<String>, arguments: Value) -> Self {
        self.tool_calls.push(ScriptedCall {
            id: id.into(),
            name: TOOL_SEARCH.to_owned(),
            arguments: arguments.to_string(),
            kind: CallKind::ToolSearch,
        });
        self
    }

    /// Sets the usage: `input` prompt tokens (cached ones included, as OpenAI counts them),
    /// `output` generated tokens, `cached` of the input read from the prompt cache. Anthropic
    /// reports `input - cached - cache_write` as `input_tokens`.
    pub fn with_usage(mut self, input: u64, output: u64, cached: u64) -> Self {
        self.usage.input = input;
        self.usage.output = output;
        self.usage.cached = cached;
        self
    }

    /// Sets the prompt tokens written to the cache (Anthropic's
    /// `cache_creation_input_tokens`, the Responses API's
    /// `input_tokens_details.cache_write_tokens`; chat completions does not report it).
    pub fn with_cache_write(mut self, tokens: u64) -> Self {
        self.usage.cache_write = tokens;
        self
    }

    /// Sets the stop reason, overriding the one derived from the tool calls.
    pub fn with_stop(mut self, stop: Stop) -> Self {
        self.stop = Some(stop);
        self
    }

    /// Sets the model name the response reports.
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// Adds a fault.
    pub fn with_fault(mut self, fault: Fault) -> Self {
        self.faults.push(fault);
        self
    }

    /// Waits this long before each SSE event after the first.
    pub fn with_delay_per_event(mut self, delay: Duration) -> Self {
        self.delay_per_event = Some(delay);
        self
    }
}

/// Scripted reasoning.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Reasoning {
    pub(crate) text: String,
    pub(crate) signature: Option<String>,
}

/// The name a tool-search call has in the formats without one of their own.
const TOOL_SEARCH: &str = "tool_search";

/// A scripted tool call; `arguments` is the JSON text exactly as it will be sent.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ScriptedCall {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) arguments: String,
    pub(crate) kind: CallKind,
}

/// What kind of call the model makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CallKind {
    /// A call of a tool (a function).
    Function,
    /// A call of the API's client-executed tool search (see [`Reply::with_tool_search_call`]).
    ToolSearch,
}

/// Scripted token counts; `input` includes `cached` and `cache_write`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct ScriptedUsage {
    pub(crate) input: u64,
    pub(crate) output: u64,
    pub(crate) cached: u64,
    pub(crate) cache_write: u64,
}

/// One step of streaming the tool calls, in the order the events go out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CallEvent<'a> {
    /// Call `index` begins.
    Start(usize),
    /// A piece of call `index`'s arguments.
    Arguments(usize, &'a str),
    /// Call `index` is complete.
    End(usize),
}

impl Reply {
    /// The model name to report.
    pub(crate) fn model(&self) -> &str {
        self.model.as_deref().unwrap_or("mock-model")
    }

    /// The stop reason to report.
    pub(crate) fn stop(&self) -> Stop {
        self.stop.unwrap_or(if self.tool_calls.is_empty() {
            Stop::EndTurn
        } else {
            Stop::ToolUse
        })
    }

    /// Whether `fault` (compared by kind, for the ones without data) is set.
    pub(crate) fn has_fault(&self, fault: Fault) -> bool {
        self.faults.contains(&fault)
    }

    /// How long to wait before the response head.
    pub(crate) fn first_byte_delay(&self) -> Option<Duration> {
        self.faults.iter().find_map(|fault| match fault {
            Fault::SlowFirstByte(delay) => Some(*delay),
            _ => None,
        })
    }

    /// `text` as the deltas it travels in: none when empty, one piece, or pieces of at most
    /// the [`Fault::SplitDeltas`] size.
    pub(crate) fn pieces<'a>(&self, text: &'a str) -> Vec<&'a str> {
        let limit = self.faults.iter().find_map(|fault| match fault {
            Fault::SplitDeltas(bytes) => Some(*bytes),
            _ => None,
        });
        match limit {
            _ if text.is_empty() => Vec::new(),
            Some(bytes) => split_at_most(text, bytes),
            None => vec![text],
        }
    }

    /// The tool calls' events in streaming order, sequential or interleaved.
    pub(crate) fn call_plan(&self) -> Vec<CallEvent<'_>> {
        let pieces: Vec<Vec<&str>> = self
            .tool_calls
            .iter()
            .map(|call| self.pieces(&call.arguments))
            .collect();
        let mut plan = Vec::new();
        if self.has_fault(Fault::InterleaveCalls) {
            plan.extend((0..pieces.len()).map(CallEvent::Start));
            let rounds = pieces.iter().map(Vec::len).max().unwrap_or(0);
            for round in 0..rounds {
                for (index, call_pieces) in pieces.iter().enumerate() {
                    if let Some(piece) = call_pieces.get(round) {
                        plan.push(CallEvent::Arguments(index, piece));
                    }
                }
            }
            plan.extend((0..pieces.len()).map(CallEvent::End));
        } else {
            for (index, call_pieces) in pieces.iter().enumerate() {
                plan.push(CallEvent::Start(index));
                plan.extend(
                    call_pieces
                        .iter()
                        .map(|piece| CallEvent::Arguments(index, piece)),
                );
                plan.push(CallEvent::End(index));
            }
        }
        plan
    }

    /// Splits off the first one-shot fault: it and this reply without it, or `None` when the
    /// reply has none left.
    pub(crate) fn take_one_shot(&self) -> Option<(Fault, Reply)> {
        let position = self.faults.iter().position(|fault| fault.is_one_shot())?;
        let mut rest = self.clone();
        let fault = rest.faults.remove(position);
        Some((fault, rest))
    }
}

/// `text` in pieces of at most `max` bytes, cut at char boundaries.
pub(crate) fn split_at_most(text: &str, max: usize) -> Vec<&str> {
    let max = max.max(1);
    let mut pieces = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut cut = max.min(rest.len());
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        if cut == 0 {
            cut = rest.chars().next().map_or(rest.len(), char::len_utf8);
        }
        let (piece, tail) = rest.split_at(cut);
        pieces.push(piece);
        rest = tail;
    }
    pieces
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn split_keeps_characters_whole() {
        assert_eq!(split_at_most("héllo", 2), vec!["h", "é", "ll", "o"]);
        assert_eq!(split_at_most("日本", 1), vec!["日", "本"]);
        assert_eq!(split_at_most("abc", 0), vec!["a", "b", "c"]);
        assert_eq!(split_at_most("", 3), Vec::<&str>::new());
    }

    #[test]
    fn interleaved_calls_start_alternate_then_end() {
        let reply = Reply::tool_calls([
            ("a", "Read", json!({"p": 1})),
            ("b", "Grep", json!({"q": 22})),
        ])
        .with_fault(Fault::SplitDeltas(4))
        .with_fault(Fault::InterleaveCalls);
        use CallEvent::{Arguments, End, Start};
        assert_eq!(
            reply.call_plan(),
            vec![
                Start(0),
                Start(1),
                Arguments(0, "{\"p\""),
                Arguments(1, "{\"q\""),
                Arguments(0, ":1}"),
                Arguments(1, ":22}"),
                End(0),
                End(1),
            ]
        );
    }

    #[test]
    fn drops_come_off_one_per_attempt_in_order() {
        let reply = Reply::text("hi")
            .with_fault(Fault::DropBeforeFirstByte)
            .with_fault(Fault::SplitDeltas(1))
            .with_fault(Fault::DropMidStream { after_events: 2 });
        let (first, rest) = reply.take_one_shot().unwrap();
        assert_eq!(first, Fault::DropBeforeFirstByte);
        let (second, rest) = rest.take_one_shot().unwrap();
        assert_eq!(second, Fault::DropMidStream { after_events: 2 });
        assert_eq!(rest.take_one_shot(), None);
        assert_eq!(rest.faults, vec![Fault::SplitDeltas(1)]);
    }

    #[test]
    fn stop_follows_the_tool_calls_unless_set() {
        assert_eq!(Reply::text("x").stop(), Stop::EndTurn);
        assert_eq!(Reply::tool_call("c", "n", json!({})).stop(), Stop::ToolUse);
        assert_eq!(
            Reply::text("x").with_stop(Stop::MaxTokens).stop(),
            Stop::MaxTokens
        );
    }
}

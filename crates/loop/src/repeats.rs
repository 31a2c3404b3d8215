//! Small models repeat themselves: the same call, again and again, getting the same result.
//! The loop still runs every call (a repeated `cat` may be what the task needs), but when a
//! call and its result are both the same as an earlier one of the run, the model is told so.

use std::collections::{HashMap, HashSet};

use toolhost_core::ContentBlock;
use toolhost_core::conversation::{ToolCall, ToolResultMessage};

/// Appended to a result that repeats an earlier identical call's identical result.
pub const REPEATED_CALL_NOTE: &str = "[You made this exact call before in this run and got this \
     same result. Use it, or try something different; if you have what you need, answer in text.]";

/// Said to the model, as the user, after a turn whose results repeat earlier ones. A note
/// inside a tool result is read as part of the result; Qwen2.5-Coder 1.5B went on repeating
/// the call to the turn limit with the note alone (21 of 35 tasks of the evaluation), and
/// answered, mostly rightly, once this followed.
pub const REPEATED_CALL_NUDGE: &str = "That call repeated an earlier one and got the same result. If you have what you need, \
     answer in text now.";

/// Each call's last result in the run, by tool name and arguments.
#[derive(Debug, Default)]
pub(crate) struct RepeatedCalls {
    last_results: HashMap<(String, String), String>,
    /// The calls whose repeat was followed by [`REPEATED_CALL_NUDGE`]: once per call. In the
    /// evaluation a model that answered did so after the first; one that went on repeating
    /// ignored every later one, each of which cost a message kept in the session.
    nudged: HashSet<(String, String)>,
}

impl RepeatedCalls {
    /// Remembers `result` for `call`, and marks it when it repeats the call's earlier result;
    /// `true` when it did so for the first time (the turn is then followed by the nudge).
    pub(crate) fn note(&mut self, call: &ToolCall, result: &mut ToolResultMessage) -> bool {
        let Ok(arguments) = call.parsed_arguments() else {
            return false;
        };
        let key = (call.name.clone(), arguments.to_string());
        let text: String = result
            .content
            .iter()
            .filter_map(ContentBlock::as_text)
            .collect();
        if self.last_results.get(&key) == Some(&text) {
            result.content.push(ContentBlock::text(REPEATED_CALL_NOTE));
            self.nudged.insert(key)
        } else {
            self.last_results.insert(key, text);
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(arguments: &str) -> ToolCall {
        ToolCall {
            id: "c".into(),
            name: "Read".into(),
            arguments: arguments.into(),
        }
    }

    fn result(text: &str) -> ToolResultMessage {
        ToolResultMessage {
            tool_call_id: "c".into(),
            tool_name: "Read".into(),
            content: vec![ContentBlock::text(text)],
            is_error: false,
        }
    }

    #[test]
    fn only_the_same_call_with_the_same_result_is_marked() {
        let mut repeats = RepeatedCalls::default();
        let mut first = result("one");
        repeats.note(&call(r#"{"path":"a"}"#), &mut first);
        assert_eq!(first.content.len(), 1);

        let mut other_path = result("one");
        repeats.note(&call(r#"{"path":"b"}"#), &mut other_path);
        assert_eq!(other_path.content.len(), 1);

        let mut changed = result("two");
        repeats.note(&call(r#"{"path":"a"}"#), &mut changed);
        assert_eq!(changed.content.len(), 1, "the file changed: nothing to say");

        let mut again = result("two");
        assert!(
            repeats.note(&call(r#"{ "path": "a" }"#), &mut again),
            "nudged"
        );
        assert_eq!(
            again.content.last().and_then(ContentBlock::as_text),
            Some(REPEATED_CALL_NOTE)
        );
        let mut once_more = result("two");
        assert!(
            !repeats.note(&call(r#"{"path":"a"}"#), &mut once_more),
            "a call is nudged once"
        );
        assert_eq!(
            once_more.content.last().and_then(ContentBlock::as_text),
            Some(REPEATED_CALL_NOTE),
            "its note is on every repeat"
        );
    }
}

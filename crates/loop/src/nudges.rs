//! What the loop tells a model whose reply without tool calls is not an answer. Small models
//! (Qwen2.5-Coder 1.5B, the local model of the end-to-end runs) write a tool's protocol as
//! text instead of calling it, describe the call they mean to make, or copy the last tool
//! result back as their answer. Each is told once or twice, with a note in place of the
//! answer, before a reply is taken as it is.

use toolhost_core::ContentBlock;
use toolhost_core::conversation::Message;

/// Markup of the tool protocol that a text answer never holds: a small model that writes it
/// is imitating a call or a result instead of making the call.
const IMITATED_TOOL_MARKUP: [&str; 4] = [
    "<tool_response>",
    "</tool_response>",
    "<tool_call>",
    "</tool_call>",
];

/// What the model is told in place of an answer that imitated a tool result, which is
/// dropped (at most [`MAX_IMITATION_NOTES`] times a run; then the answer stands).
pub const IMITATED_TOOL_NOTE: &str = "[toolhost] Your previous reply imitated a tool result \
     instead of calling the tool, so it was dropped: nothing in it came from the files. Call \
     the tool you need now; answer only from what a real tool result says.";

/// What the model is told when, before calling any tool in the run, it answers by naming an
/// offered tool it means to use instead of calling it (small models describe the call in
/// prose). Once a run; the answer after it stands.
pub const DESCRIBED_CALL_NOTE: &str = "[toolhost] That reply names a tool but makes no call, \
     so nothing was run. If you need the tool, call it now (a real tool call, not a \
     description of one); otherwise answer the question.";

/// What the model is told in place of an answer that only repeats the last tool result word
/// for word (which is dropped). Once a run; the answer after it stands.
pub const ECHOED_RESULT_NOTE: &str = "[toolhost] Your previous reply only repeated the last \
     tool result word for word, so it was dropped. Use that result to answer the user's \
     question in a sentence of your own, or call another tool if it did not tell you enough.";

/// How many times a run tells the model its answer imitated a tool result.
const MAX_IMITATION_NOTES: usize = 2;

/// A tool result shorter than this may well be the answer itself (`echo hi` → `hi`): only a
/// longer one repeated whole is an echo.
const MIN_ECHOED_CHARS: usize = 40;

/// What to do with a reply that makes no call.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Nudge {
    /// Drop the reply (a model that reads it back repeats it) and send this note.
    Drop(&'static str),
    /// Keep the reply and send this note after it.
    Keep(&'static str),
}

/// The notes a run has sent so far.
#[derive(Debug, Default)]
pub(super) struct Nudges {
    imitation_notes: usize,
    described_call_noted: bool,
    echo_noted: bool,
    called_a_tool: bool,
}

impl Nudges {
    /// The model called a tool.
    pub(super) fn called_a_tool(&mut self) {
        self.called_a_tool = true;
    }

    /// For a reply `text` that makes no call, after `messages`: the note to send instead of
    /// taking it as the answer, if any. `names_a_tool` says whether a text names an offered
    /// tool.
    pub(super) fn for_answer(
        &mut self,
        text: &str,
        messages: &[Message],
        names_a_tool: impl FnOnce(&str) -> bool,
    ) -> Option<Nudge> {
        if self.imitation_notes < MAX_IMITATION_NOTES
            && IMITATED_TOOL_MARKUP
                .iter()
                .any(|markup| text.contains(markup))
        {
            self.imitation_notes += 1;
            return Some(Nudge::Drop(IMITATED_TOOL_NOTE));
        }
        if !self.echo_noted && echoes_the_last_result(text, messages) {
            self.echo_noted = true;
            return Some(Nudge::Drop(ECHOED_RESULT_NOTE));
        }
        if !self.called_a_tool && !self.described_call_noted && names_a_tool(text) {
            self.described_call_noted = true;
            return Some(Nudge::Keep(DESCRIBED_CALL_NOTE));
        }
        None
    }
}

/// Whether `text` is, but for surrounding blanks, the text of the tool result the
/// conversation ends with.
fn echoes_the_last_result(text: &str, messages: &[Message]) -> bool {
    let Some(Message::ToolResult(result)) = messages.last() else {
        return false;
    };
    let result: String = result
        .content
        .iter()
        .filter_map(ContentBlock::as_text)
        .collect::<Vec<_>>()
        .join("\n");
    let result = result.trim();
    result.chars().count() >= MIN_ECHOED_CHARS && text.trim() == result
}

#[cfg(test)]
mod tests {
    use toolhost_core::conversation::ToolResultMessage;

    use super::*;

    fn after_result(text: &str) -> Vec<Message> {
        vec![
            Message::user("Which file defines parse_config?"),
            Message::ToolResult(ToolResultMessage {
                tool_call_id: "call_1".into(),
                tool_name: "Glob".into(),
                content: vec![ContentBlock::text(text)],
                is_error: false,
            }),
        ]
    }

    const NO_MATCH: &str = "No files match \"*.rs\" in . (the files there are mostly *.py).";

    #[test]
    fn an_answer_that_repeats_a_long_result_is_dropped_once() {
        let mut nudges = Nudges::default();
        nudges.called_a_tool();
        let messages = after_result(NO_MATCH);
        let echoed = format!("  {NO_MATCH}\n");
        assert_eq!(
            nudges.for_answer(&echoed, &messages, |_| false),
            Some(Nudge::Drop(ECHOED_RESULT_NOTE))
        );
        assert_eq!(nudges.for_answer(&echoed, &messages, |_| false), None);
    }

    #[test]
    fn a_short_result_or_an_answer_of_its_own_is_an_answer() {
        let mut nudges = Nudges::default();
        nudges.called_a_tool();
        assert_eq!(
            nudges.for_answer("2026-12-02", &after_result("2026-12-02"), |_| false),
            None
        );
        let answer = "It is in src/app/settings_loader.py.";
        assert_eq!(
            nudges.for_answer(answer, &after_result(NO_MATCH), |_| false),
            None
        );
        assert_eq!(
            nudges.for_answer(NO_MATCH, &[Message::user(NO_MATCH)], |_| false),
            None
        );
    }

    #[test]
    fn imitations_are_dropped_twice_and_a_described_call_is_kept_once() {
        let mut nudges = Nudges::default();
        let imitation = "<tool_response>pelican</tool_response>";
        for _ in 0..2 {
            assert_eq!(
                nudges.for_answer(imitation, &[], |_| false),
                Some(Nudge::Drop(IMITATED_TOOL_NOTE))
            );
        }
        assert_eq!(nudges.for_answer(imitation, &[], |_| false), None);
        assert_eq!(
            nudges.for_answer("I will call Grep.", &[], |_| true),
            Some(Nudge::Keep(DESCRIBED_CALL_NOTE))
        );
        assert_eq!(nudges.for_answer("I will call Grep.", &[], |_| true), None);
    }
}

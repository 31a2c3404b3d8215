//! What a small model does with a call it already made: the loop runs it again, marks its
//! result as a repeat, and then asks, as the user, for an answer.

use pretty_assertions::assert_eq;
use toolhost_agent::agent_loop::{REPEATED_CALL_NOTE, REPEATED_CALL_NUDGE};

use super::*;

#[test]
fn a_call_repeating_an_earlier_one_with_the_same_result_is_followed_by_a_nudge_to_answer() {
    // What Qwen2.5-Coder 1.5B did to the turn limit: the same Read again, the note in its result
    // unread. Said as the user after the results, it answered.
    let read = || Reply::tool_call("call_1", "Read", json!({"path": "hello.txt"})).into();
    let run_ = Run::new(
        WireFormat::OpenAiChat,
        vec![read(), read(), read(), Reply::text("It says hello.").into()],
    );
    let done = run(
        &run_,
        &["--output-format", "json", "What does hello.txt say?"],
    );
    assert_eq!(done.status, Some(0), "stderr: {}", done.stderr);
    let requests = run_.requests();
    assert_eq!(requests.len(), 4);
    let first = requests[1].body["messages"].as_array().unwrap();
    assert_eq!(
        first.last().unwrap()["role"],
        "tool",
        "the first Read is not a repeat"
    );
    let messages = requests[2].body["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "user", "{last}");
    assert_eq!(content_text(&last["content"]), REPEATED_CALL_NUDGE);
    let repeated = &messages[messages.len() - 2];
    assert_eq!(repeated["role"], "tool");
    assert!(
        content_text(&repeated["content"]).ends_with(REPEATED_CALL_NOTE),
        "{repeated}"
    );
    // Once per call: the third Read gets the note, and no second nudge.
    let messages = requests[3].body["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "tool", "{last}");
    assert!(content_text(&last["content"]).ends_with(REPEATED_CALL_NOTE));
    let nudges = messages
        .iter()
        .filter(|message| {
            message["role"] == "user" && content_text(&message["content"]) == REPEATED_CALL_NUDGE
        })
        .count();
    assert_eq!(nudges, 1);
}

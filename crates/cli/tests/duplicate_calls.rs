//! Identical calls in one model response run once, through `toolhost run` against the
//! scripted mock model: the repeats get the first one's result, and the model is told once.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/agent_runs.rs"]
mod agent_runs;
mod support;

use agent_runs::*;
use serde_json::json;
use toolhost_test_support::Reply;

#[test]
fn identical_calls_in_one_response_run_once_and_the_model_is_told_once() {
    let fixture = Fixture::new();
    let append = json!({"command": "echo ran >> count.txt"});
    let model = fixture.model(vec![
        Reply::tool_calls([
            ("c1", "Bash", append.clone()),
            ("c2", "Bash", append.clone()),
            ("c3", "Bash", append),
        ])
        .into(),
        Reply::text("Done.").into(),
    ]);
    let output = fixture
        .run(&model, &["--mode", "bypassPermissions", "Count"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(
        std::fs::read_to_string(fixture.path("count.txt")).unwrap(),
        "ran\n"
    );
    let results: Vec<String> = messages(&model.requests()[1])
        .into_iter()
        .filter(|(role, _)| role == "tool")
        .map(|(_, text)| text)
        .collect();
    assert_eq!(results.len(), 3, "{results:?}");
    assert!(!results[0].contains("identical"), "{}", results[0]);
    assert!(
        results[1].contains("identical to call c1 of this response, so it was not run again"),
        "{}",
        results[1]
    );
    assert!(
        results[2].contains("The same call as c1") && !results[2].contains("identical"),
        "{}",
        results[2]
    );
}

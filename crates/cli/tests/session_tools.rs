//! The session tools through the `toolhost` binary (R26): `SessionsYield` ending a loop,
//! `SessionsSpawn` and `SessionsSend` to a running and to an idle background session,
//! `SessionsList` and `SessionsHistory`, the rule that opens the workspace's other sessions,
//! and a session another process runs, refused. Scripted mock models on 127.0.0.1, a parent
//! and its children each with its own where a background child must not share the parent's
//! script; a child that must still be running waits in Bash for a file the test writes once
//! the parent got that far.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/agent_runs.rs"]
mod agent_runs;
mod support;

use agent_runs::*;
use serde_json::json;
use toolhost_test_support::Reply;

#[test]
fn sessions_yield_ends_the_loop_with_its_message() {
    let fixture = Fixture::new();
    let model = fixture.model(vec![
        Reply::tool_call(
            "call_1",
            "SessionsYield",
            json!({"message": "All done here."}),
        )
        .into(),
        Reply::text("never asked").into(),
    ]);
    let output = fixture
        .run(&model, &["--output-format", "json", "Finish"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(json_stdout(&output)["result"], "All done here.");
    assert_eq!(model.requests().len(), 1);
}

#[test]
fn sessions_send_reaches_a_running_background_session_and_list_and_history_show_it() {
    let fixture = Fixture::new();
    let parent = fixture.model(vec![
        Reply::tool_call(
            "call_1",
            "SessionsSpawn",
            json!({"prompt": "Wait, then answer.", "agentId": "helper", "title": "The helper"}),
        )
        .into(),
        Reply::tool_call(
            "call_2",
            "SessionsSend",
            json!({"sessionId": "run-1", "message": "Also say banana."}),
        )
        .into(),
        Reply::text("Waiting for the helper.").into(),
        Reply::tool_calls([
            ("call_3", "SessionsList", json!({})),
            ("call_4", "SessionsHistory", json!({"sessionId": "run-1"})),
        ])
        .into(),
        Reply::text("The helper said banana.").into(),
    ]);
    let child = fixture.model(vec![
        Reply::tool_call("child_1", "Bash", json!({"command": WAIT_FOR_GO})).into(),
        Reply::text("banana").into(),
    ]);
    fixture.two_models(&parent, &child, "");
    let run = fixture.spawn_run(&["--yes", "--output-format", "json", "Talk to a session"]);
    // SessionsSend has run (its result is in the third request) while the child still waits.
    wait_for_requests(&parent, 3);
    let queued = last(&parent.requests()[2], "tool");
    assert!(
        queued.starts_with("Delivered to the running session"),
        "{queued}"
    );
    std::fs::write(fixture.path("go"), "").unwrap();
    let output = finish(run);
    assert_eq!(output.status.code(), Some(0), "{output:?}");

    // The child read the message at its next turn.
    let child_second = &child.requests()[1];
    let sent = last(child_second, "user");
    assert!(
        sent.starts_with("[toolhost] A message from the session"),
        "{sent}"
    );
    assert!(sent.ends_with("Also say banana."), "{sent}");
    // Its answer reached the parent, and the parent's list and history show the session.
    let requests = parent.requests();
    assert!(last(&requests[3], "user").ends_with("Its answer:\n\nbanana"));
    let tools: Vec<String> = messages(&requests[4])
        .into_iter()
        .filter(|(role, _)| role == "tool")
        .map(|(_, text)| text)
        .collect();
    let listed = &tools[tools.len() - 2];
    assert!(listed.starts_with("2 sessions:"), "{listed}");
    assert!(
        listed.contains("[completed] The helper (spawned by"),
        "{listed}"
    );
    assert!(listed.contains("(you)"), "{listed}");
    let history = &tools[tools.len() - 1];
    for part in [
        "user: Wait, then answer.",
        "→ Bash",
        "tool Bash: ready",
        "Also say banana.",
        "assistant: banana",
    ] {
        assert!(history.contains(part), "{part:?} not in {history}");
    }
}

#[test]
fn the_session_tools_see_only_the_callers_tree_unless_a_rule_opens_the_workspace() {
    let fixture = Fixture::new();
    let first = fixture.model(vec![Reply::text("The first session's answer.").into()]);
    let output = fixture
        .run(&first, &["--output-format", "json", "An earlier question"])
        .output()
        .unwrap();
    let earlier = json_stdout(&output)["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let history = json!({"sessionId": earlier});
    let script = || {
        vec![
            Reply::tool_call("call_1", "SessionsHistory", history.clone()).into(),
            Reply::text("Read.").into(),
        ]
    };

    let refused = fixture.model(script());
    let output = fixture
        .run(
            &refused,
            &["--output-format", "json", "Read the other session"],
        )
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let result = last(&refused.requests()[1], "tool");
    assert!(
        result.contains(&format!(
            "the session {earlier} is not in your session tree, and SessionsHistory sees only \
             that; the user can open every session of the workspace to it with the allow rule \
             'SessionsHistory(workspace)'"
        )),
        "{result}"
    );

    let opened = fixture.model(script());
    let output = fixture
        .run(
            &opened,
            &[
                "--allow",
                "SessionsHistory(workspace)",
                "--output-format",
                "json",
                "Read the other session",
            ],
        )
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let result = last(&opened.requests()[1], "tool");
    assert!(result.contains("user: An earlier question"), "{result}");
    assert!(
        result.contains("assistant: The first session's answer."),
        "{result}"
    );
}

#[test]
fn sessions_send_to_an_idle_session_resumes_it_with_its_whole_conversation() {
    let fixture = Fixture::new();
    let parent = fixture.model(vec![
        Reply::tool_call(
            "call_1",
            "SessionsSpawn",
            json!({"prompt": "Say one.", "agentId": "helper"}),
        )
        .into(),
        Reply::text("Waiting.").into(),
        Reply::tool_call(
            "call_2",
            "SessionsSend",
            json!({"sessionId": "run-1", "message": "Now say two."}),
        )
        .into(),
        Reply::text("Waiting again.").into(),
        Reply::text("It said one, then two.").into(),
    ]);
    let child = fixture.model(vec![Reply::text("one").into(), Reply::text("two").into()]);
    fixture.two_models(&parent, &child, "");
    let output = finish(fixture.spawn_run(&["--yes", "--output-format", "json", "Count"]));
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(json_stdout(&output)["result"], "It said one, then two.");

    let requests = parent.requests();
    let resumed = last(&requests[3], "tool");
    assert!(
        resumed.contains("was idle: it runs again on your message as run-2"),
        "{resumed}"
    );
    // The resumed session read its whole conversation, then the message.
    let sent: Vec<(String, String)> = messages(&child.requests()[1])
        .into_iter()
        .filter(|(role, _)| role != "system")
        .collect();
    assert_eq!(
        sent,
        [
            ("user".to_owned(), "Say one.".to_owned()),
            ("assistant".to_owned(), "one".to_owned()),
            ("user".to_owned(), "Now say two.".to_owned()),
        ]
    );
    assert!(last(&requests[4], "user").ends_with("Its answer:\n\ntwo"));
}

#[test]
fn a_session_another_process_runs_is_refused_to_sessions_send_resume_and_rm() {
    let fixture = Fixture::new();
    // A parent session P with a child session C, both idle once this run ends.
    let parent = fixture.model(vec![
        Reply::tool_call(
            "call_1",
            "SessionsSpawn",
            json!({"prompt": "Say one.", "agentId": "helper"}),
        )
        .into(),
        Reply::text("Waiting.").into(),
        Reply::text("It said one.").into(),
    ]);
    let child = fixture.model(vec![Reply::text("one").into()]);
    fixture.two_models(&parent, &child, "");
    let output = finish(fixture.spawn_run(&["--yes", "--output-format", "json", "Count"]));
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let parent_id = json_stdout(&output)["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let store = fixture.store();
    let children = store.children(&parent_id.as_str().into()).unwrap();
    assert_eq!(children.len(), 1, "{children:?}");
    let child_id = children[0].id.to_string();
    drop(store);

    // A second process goes on with C, and waits in Bash.
    let parent = fixture.model(vec![
        Reply::tool_call(
            "call_2",
            "SessionsSend",
            json!({"sessionId": child_id, "message": "Now say two."}),
        )
        .into(),
        Reply::text("It is busy.").into(),
    ]);
    let child = fixture.model(vec![
        Reply::tool_call("child_1", "Bash", json!({"command": WAIT_FOR_GO})).into(),
        Reply::text("two").into(),
    ]);
    fixture.two_models(&parent, &child, "");
    let running = fixture.spawn_run(&["--yes", "--resume", &child_id, "Go on"]);
    wait_for_requests(&child, 1);
    let holder = format!("in another toolhost process (pid {})", running.id());

    // A third, going on with P, is refused SessionsSend to C: it would fork C's conversation.
    let output = finish(fixture.spawn_run(&[
        "--yes",
        "--resume",
        &parent_id,
        "--output-format",
        "json",
        "Tell the helper",
    ]));
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let refused = last(&parent.requests()[1], "tool");
    assert!(
        refused.contains(&format!("the session {child_id} is running {holder}")),
        "{refused}"
    );
    // Going on with C, or removing it, is refused too, and C's run never heard of either.
    let output = finish(fixture.spawn_run(&["--yes", "--resume", &child_id, "Me too"]));
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(&holder), "{stderr}");
    let mut rm = crate::support::toolhost_with_home(&fixture.dirs.workspace, &fixture.dirs.home);
    let output = rm
        .args(["sessions", "rm", "--yes", &child_id])
        .output()
        .unwrap();
    assert_ne!(output.status.code(), Some(0), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(&holder), "{stderr}");
    assert_eq!(child.requests().len(), 1);

    // Once that run ends, C is free again.
    std::fs::write(fixture.path("go"), "").unwrap();
    let output = finish(running);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let mut rm = crate::support::toolhost_with_home(&fixture.dirs.workspace, &fixture.dirs.home);
    rm.args(["sessions", "rm", "--yes", &child_id])
        .assert()
        .success();
}

//! Sub-agents on the screen: a background child's live line with its latest tool call, the
//! line when it ended, a foreground child's line under its `spawn_agent` box, and the
//! read-only view of a child's transcript that Ctrl-T opens and Esc closes.

use std::time::{Duration, Instant};

use insta::assert_snapshot;
use toolhost_agent::agent_loop::RunOutcome;
use toolhost_agent::subagents::RunStatus;
use toolhost_core::conversation::Usage;

use super::*;
use crate::app::Action;

/// One of child `run_id`'s events, as the hub tags it.
fn child(run_id: &str, parent_call_id: &str, event: AgentEvent) -> AgentEvent {
    AgentEvent::SubAgent {
        run_id: run_id.into(),
        agent: "helper".into(),
        parent_call_id: parent_call_id.into(),
        event: Box::new(event),
    }
}

fn run_start() -> AgentEvent {
    AgentEvent::RunStart {
        session_id: "child-session".into(),
        provider: "child".into(),
        model: "child-model".into(),
        tools: vec!["Bash".into()],
    }
}

fn run_end(outcome: RunOutcome, turns: usize) -> AgentEvent {
    AgentEvent::RunEnd {
        outcome,
        turns,
        usage: Usage::default(),
    }
}

/// The chat after its model started `run-1` in the background, which now waits in Bash;
/// the child began 14 seconds ago.
fn background_child_waiting() -> App {
    let mut app = app();
    typed(&mut app, "get a banana");
    app.key(key(KeyCode::Enter));
    app.agent_event(start(
        "spawn_agent",
        "call_1",
        json!({"prompt": "Wait, then say banana.", "agent": "helper", "background": true}),
    ));
    app.agent_event(child("run-1", "call_1", run_start()));
    app.agent_event(end(
        "spawn_agent",
        "call_1",
        "Started the agent helper in the background as run-1.",
        no_details(),
    ));
    app.agent_event(AgentEvent::TextDelta {
        text: "The helper runs in the background.".into(),
    });
    app.turn_ended(
        Some(RunOutcome::Answered {
            text: "The helper runs in the background.".into(),
        }),
        None,
    );
    for event in [
        AgentEvent::TurnStart { turn: 1 },
        AgentEvent::TextDelta {
            text: "I will wait for the file.".into(),
        },
        start(
            "Bash",
            "child_1",
            json!({"command": "while [ ! -f go ]; do sleep 0.05; done; echo ready"}),
        ),
    ] {
        app.agent_event(child("run-1", "call_1", event));
    }
    app.children[0].started = Instant::now() - Duration::from_secs(14);
    app
}

#[test]
fn a_background_child_shows_a_live_line_with_its_last_tool_call() {
    let app = background_child_waiting();
    assert!(!app.busy, "the prompt is back while the child runs");
    assert!(app.children_running());
    assert_snapshot!(screen(&app, 110, 18));
}

#[test]
fn a_finished_child_says_how_it_ended_after_how_many_turns() {
    let mut app = background_child_waiting();
    for event in [
        end("Bash", "child_1", "ready", json!({"exit_code": 0})),
        AgentEvent::TurnStart { turn: 2 },
        AgentEvent::TextDelta {
            text: "banana".into(),
        },
        run_end(
            RunOutcome::Answered {
                text: "banana".into(),
            },
            2,
        ),
    ] {
        app.agent_event(child("run-1", "call_1", event));
    }
    // A second child whose model failed.
    app.agent_event(start(
        "spawn_agent",
        "call_2",
        json!({"prompt": "Try.", "background": true}),
    ));
    app.agent_event(child("run-2", "call_2", run_start()));
    app.agent_event(end(
        "spawn_agent",
        "call_2",
        "Started the agent general-purpose in the background as run-2.",
        no_details(),
    ));
    app.agent_event(child(
        "run-2",
        "call_2",
        run_end(
            RunOutcome::Failed {
                error: "the provider answered 500".into(),
            },
            1,
        ),
    ));
    for run in &mut app.children {
        run.ended = Some(run.started + Duration::from_secs(21));
    }
    assert_eq!(app.children[0].status, RunStatus::Completed);
    assert!(!app.children_running());
    assert_snapshot!(screen(&app, 110, 20));
}

#[test]
fn a_foreground_childs_line_follows_under_its_spawn_agent_box() {
    let mut app = app();
    app.busy = true;
    app.agent_event(start(
        "spawn_agent",
        "call_1",
        json!({"prompt": "Find the tests.", "agent": "helper"}),
    ));
    for event in [
        run_start(),
        AgentEvent::TurnStart { turn: 1 },
        start("Grep", "child_1", json!({"pattern": "#[test]"})),
    ] {
        app.agent_event(child("run-1", "call_1", event));
    }
    app.children[0].started = Instant::now() - Duration::from_secs(3);
    let shown = screen(&app, 100, 14);
    assert!(!app.children[0].background);
    assert_snapshot!(shown);
}

#[test]
fn ctrl_t_shows_the_childs_transcript_read_only_and_esc_goes_back() {
    let mut app = background_child_waiting();
    app.agent_event(child(
        "run-1",
        "call_1",
        update("child_1", "waiting for go\n"),
    ));
    let chat = screen(&app, 100, 20);
    assert!(app.key(ctrl('t')).is_empty());
    let watching = screen(&app, 100, 20);
    // Keys do not reach the input while a child is watched: the view is read-only.
    typed(&mut app, "x");
    assert_eq!(app.input.text(), "");
    assert_eq!(screen(&app, 100, 20), watching);
    assert_snapshot!(watching);

    // Esc goes back to the chat (it does not cancel anything).
    assert_eq!(app.key(key(KeyCode::Esc)), Vec::<Action>::new());
    assert!(app.watching.is_none());
    assert_eq!(screen(&app, 100, 20), chat);
}

#[test]
fn ctrl_t_without_children_says_so() {
    let mut app = app();
    app.key(ctrl('t'));
    assert!(app.watching.is_none());
    assert!(
        screen(&app, 80, 10).contains("no sub-agent has run in this chat yet"),
        "{}",
        screen(&app, 80, 10)
    );
}

#[test]
fn ctrl_t_watches_the_latest_running_child_and_arrows_go_to_the_others() {
    let mut app = background_child_waiting();
    app.agent_event(start(
        "spawn_agent",
        "call_2",
        json!({"prompt": "Count the files.", "agent": "helper", "background": true}),
    ));
    app.agent_event(child("run-2", "call_2", run_start()));
    app.agent_event(child(
        "run-2",
        "call_2",
        run_end(
            RunOutcome::Answered {
                text: "12 files".into(),
            },
            1,
        ),
    ));
    // run-2 ended, run-1 still runs: Ctrl-T watches run-1.
    app.key(ctrl('t'));
    assert!(screen(&app, 100, 20).contains("watching run-1 helper · running"));
    app.key(key(KeyCode::Right));
    let other = screen(&app, 100, 20);
    assert!(
        other.contains("watching run-2 helper · completed") && other.contains("› Count the files."),
        "{other}"
    );
    app.key(key(KeyCode::Left));
    assert!(screen(&app, 100, 20).contains("watching run-1 helper"));
}

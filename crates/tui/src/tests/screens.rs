//! Whole screens: a streamed answer, an approval dialog and its choices, Shift-Tab, expanding
//! boxes, the status line, a custom tool's questions, pending actions, renderers that fail
//! or run too long (with real JavaScript), and a flood of output.

use insta::assert_snapshot;
use serde_json::json;
use tokio::sync::oneshot;
use toolhost_core::conversation::Usage;
use toolhost_core::permission::{ApprovalAnswer, ApprovalRequest, PermissionMode, PermissionRule};
use toolhost_script::{PendingAction, UiRequest};

use super::*;
use crate::app::Action;
use crate::dialogs::{ApprovalDialog, Dialog, QuestionDialog};
use crate::transcript::Entry;

#[test]
fn a_streamed_answer_is_drawn_as_markdown_under_the_message() {
    let mut app = app();
    typed(&mut app, "explain");
    assert_eq!(
        app.key(key(KeyCode::Enter)),
        vec![Action::Submit("explain".into())]
    );
    for piece in [
        "# Plan\n\nUse **two** steps:\n\n",
        "1. read\n2. write\n\n```rust\nfn main() {}\n```\n",
    ] {
        app.agent_event(AgentEvent::TextDelta { text: piece.into() });
    }
    assert_snapshot!(screen(&app, 60, 22));
}

fn approval_request() -> ApprovalRequest {
    ApprovalRequest {
        call_id: "call-1".into(),
        tool: "Write".into(),
        args: json!({"path": "notes.txt", "content": "hello\n"}),
        reason: "Write changes files and asks in default mode.".into(),
        warnings: vec!["the file exists and will be replaced".into()],
        suggested_rules: vec![PermissionRule::parse("Write(/notes.txt)").unwrap()],
        session: Default::default(),
    }
}

fn open_approval(app: &mut App) -> oneshot::Receiver<ApprovalAnswer> {
    let (reply, answer) = oneshot::channel();
    app.dialogs.push_back(Dialog::Approval(ApprovalDialog::new(
        approval_request(),
        reply,
    )));
    answer
}

#[test]
fn the_approval_dialog_shows_the_call_its_subject_and_three_choices() {
    let mut app = app();
    let _answer = open_approval(&mut app);
    assert_snapshot!(screen(&app, 90, 24));
}

#[test]
fn allow_once_allow_always_and_deny_answer_the_call() {
    let mut app = app();
    let mut answer = open_approval(&mut app);
    assert!(app.key(key(KeyCode::Enter)).is_empty());
    assert_eq!(answer.try_recv().unwrap(), ApprovalAnswer::AllowOnce);

    let mut answer = open_approval(&mut app);
    app.key(key(KeyCode::Down));
    assert_eq!(
        app.key(key(KeyCode::Enter)),
        vec![Action::RememberRules(vec![
            PermissionRule::parse("Write(/notes.txt)").unwrap()
        ])]
    );
    assert_eq!(answer.try_recv().unwrap(), ApprovalAnswer::AllowForSession);

    let mut answer = open_approval(&mut app);
    app.key(key(KeyCode::Char('n')));
    typed(&mut app, "use docs/");
    assert!(screen(&app, 90, 24).contains("Tell the model why (optional): use docs/"));
    app.key(key(KeyCode::Enter));
    assert_eq!(
        answer.try_recv().unwrap(),
        ApprovalAnswer::Deny {
            message: "The user refused this call: use docs/".into()
        }
    );
    assert!(app.dialogs.is_empty());
}

#[test]
fn shift_tab_cycles_the_mode_and_the_status_line_shows_it() {
    let mut app = app();
    let mut seen = Vec::new();
    for _ in 0..3 {
        let actions = app.key(key(KeyCode::BackTab));
        seen.push(actions);
        let status = screen(&app, 120, 5);
        assert!(
            status.contains(&format!("mode {}", app.status.mode)),
            "{status}"
        );
    }
    assert_eq!(
        seen,
        [
            vec![Action::SwitchMode(PermissionMode::AcceptEdits)],
            vec![Action::SwitchMode(PermissionMode::Plan)],
            vec![Action::SwitchMode(PermissionMode::Default)],
        ]
    );
}

#[test]
fn the_status_line_shows_model_mode_tokens_and_context_used() {
    let mut app = app();
    app.status.context_window = Some(128_000);
    app.status.context_tokens = 32_000;
    app.status.usage = Usage {
        input_tokens: 1234,
        output_tokens: 56,
        ..Usage::default()
    };
    app.busy = true;
    assert_snapshot!(screen(&app, 130, 4).lines().last().unwrap().to_owned());
}

#[test]
fn ctrl_o_expands_and_collapses_the_tool_boxes() {
    let mut app = app();
    app.agent_event(start("Bash", "c1", json!({"command": "seq 1 12"})));
    let output: String = (1..=12).map(|n| format!("line {n}\n")).collect();
    app.agent_event(end("Bash", "c1", &output, json!({"exit_code": 0})));
    let collapsed = screen(&app, 60, 30);
    assert!(
        collapsed.contains("more lines (ctrl+o to expand)") && !collapsed.contains("line 1 "),
        "{collapsed}"
    );
    app.key(ctrl('o'));
    let expanded = screen(&app, 60, 30);
    assert!(
        expanded.contains("line 1 ") && expanded.contains("line 12") && expanded.contains("exit 0"),
        "{expanded}"
    );
    app.key(ctrl('o'));
    assert_eq!(screen(&app, 60, 30), collapsed);
}

#[test]
fn a_running_box_updates_with_the_tail_of_a_thousand_lines() {
    let mut app = app();
    app.busy = true;
    app.agent_event(start("Bash", "c1", json!({"command": "seq 1 1000"})));
    for n in 1..=1000 {
        app.agent_event(update("c1", &format!("{n}\n")));
    }
    let text = screen(&app, 60, 20);
    assert!(
        text.contains("│ 1000 ") && text.contains("more lines"),
        "{text}"
    );
    assert!(!text.contains("│ 994 "), "{text}");
}

#[test]
fn a_custom_tool_asks_through_confirm_select_and_input_dialogs() {
    let mut app = app();
    let (reply, mut confirm) = oneshot::channel();
    app.dialogs.push_back(Dialog::Question(QuestionDialog::new(
        UiRequest::Confirm {
            title: "Deploy?".into(),
            message: "to production".into(),
        },
        reply,
    )));
    assert!(screen(&app, 80, 20).contains("Deploy?"));
    app.key(key(KeyCode::Char('y')));
    assert_eq!(confirm.try_recv().unwrap(), json!(true));

    let (reply, mut select) = oneshot::channel();
    app.dialogs.push_back(Dialog::Question(QuestionDialog::new(
        UiRequest::Select {
            title: "Region".into(),
            options: vec!["eu".into(), "us".into()],
        },
        reply,
    )));
    app.key(key(KeyCode::Down));
    assert!(screen(&app, 80, 20).contains("› us"));
    app.key(key(KeyCode::Enter));
    assert_eq!(select.try_recv().unwrap(), json!("us"));

    let (reply, mut input) = oneshot::channel();
    app.dialogs.push_back(Dialog::Question(QuestionDialog::new(
        UiRequest::Input {
            title: "Tag".into(),
            placeholder: "v1.2.3".into(),
        },
        reply,
    )));
    typed(&mut app, "v2");
    app.key(key(KeyCode::Enter));
    assert_eq!(input.try_recv().unwrap(), json!("v2"));
}

#[test]
fn a_pending_action_shows_its_preview_and_is_resolved_by_the_users_decision() {
    let mut app = app();
    let action = PendingAction {
        id: 7,
        module: "/w/.toolhost/tools/fix.js".into(),
        label: Some("Rename foo to bar".into()),
        description: Some("3 files change".into()),
        source_tool_name: Some("refactor".into()),
        details: Some(json!({"files": ["a.rs"]})),
    };
    app.pending_actions(vec![action.clone()]);
    let shown = screen(&app, 80, 30);
    assert!(
        shown.contains("pending Rename foo to bar · from refactor") && shown.contains("[a] apply"),
        "{shown}"
    );
    assert_eq!(
        app.key(key(KeyCode::Char('a'))),
        vec![Action::Resolve(action, true)]
    );
    app.resolved(7, true, Ok(Some("renamed".into())));
    assert!(screen(&app, 80, 30).contains("applied: renamed"));
    // The model learns of the decision with the next message; the transcript shows the message.
    typed(&mut app, "thanks");
    assert_eq!(
        app.key(key(KeyCode::Enter)),
        vec![Action::Submit(
            "thanks\n\n[Decided by the user since the last turn: applied \"Rename foo to bar\" (renamed)]".into()
        )]
    );
    assert!(matches!(app.transcript.last(), Some(Entry::User(text)) if text == "thanks"));
}

#[test]
fn a_resumed_conversation_is_drawn_again() {
    use toolhost_core::conversation::{
        AssistantMessage, AssistantPart, Message, StopReason, ToolResultMessage,
    };
    let answer = |parts| {
        Message::Assistant(AssistantMessage {
            content: parts,
            stop_reason: StopReason::EndTurn,
            usage: Usage::default(),
            model: None,
        })
    };
    let messages = vec![
        Message::user("what is in notes.txt?"),
        answer(vec![AssistantPart::ToolCall(call(
            "c1",
            "Read",
            json!({"path": "notes.txt"}),
        ))]),
        Message::ToolResult(ToolResultMessage {
            tool_call_id: "c1".into(),
            tool_name: "Read".into(),
            content: vec![toolhost_core::ContentBlock::text("1\thello")],
            is_error: false,
        }),
        answer(vec![AssistantPart::Text {
            text: "It says *hello*.".into(),
        }]),
    ];
    let mut app = app();
    app.transcript
        .extend(crate::transcript::from_messages(&messages));
    assert_snapshot!(screen(&app, 60, 14));
}

#[test]
fn tiny_and_huge_screens_draw_without_panicking() {
    let mut app = app();
    app.agent_event(start("Bash", "c1", json!({"command": "echo 日本語"})));
    app.agent_event(update("c1", "日本語のテキスト\n"));
    app.agent_event(AgentEvent::TextDelta {
        text: "a long line ".repeat(50),
    });
    let _answer = open_approval(&mut app);
    typed(&mut app, "typed while the dialog is open");
    for (width, height) in [(1, 1), (3, 2), (8, 4), (20, 6), (300, 120)] {
        screen(&app, width, height);
    }
}

#[test]
fn ctrl_c_cancels_the_turn_over_a_dialog_whose_call_is_then_dropped() {
    let mut app = app();
    app.busy = true;
    let answer = open_approval(&mut app);
    assert_eq!(app.key(ctrl('c')), vec![Action::CancelTurn]);
    drop(answer);
    app.turn_ended(
        Some(toolhost_agent::agent_loop::RunOutcome::Cancelled),
        None,
    );
    assert!(app.dialogs.is_empty());
    assert!(screen(&app, 60, 10).contains("turn cancelled"));
}

#[test]
fn rows_kept_between_frames_follow_every_change() {
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(60, 20)).unwrap();
    let mut cache = crate::draw::RowCache::default();
    let mut app = app();
    let mut frame = |app: &App| {
        terminal
            .draw(|frame| crate::draw::draw(frame, app, &mut cache))
            .unwrap();
        buffer_text(terminal.backend().buffer())
    };
    app.agent_event(start("Bash", "c1", json!({"command": "make"})));
    app.agent_event(update("c1", "compiling\n"));
    assert!(frame(&app).contains("compiling"));
    app.agent_event(update("c1", "linking\n"));
    assert!(frame(&app).contains("linking"));
    app.agent_event(end("Bash", "c1", "built", json!({"exit_code": 0})));
    let done = frame(&app);
    assert!(done.contains("✓ Bash") && done.contains("exit 0"), "{done}");
    app.key(ctrl('o'));
    assert!(frame(&app).contains("exit 0"));
    app.clear_transcript();
    app.agent_event(AgentEvent::TextDelta {
        text: "fresh".into(),
    });
    let cleared = frame(&app);
    assert!(
        cleared.contains("fresh") && !cleared.contains("Bash"),
        "{cleared}"
    );
}

#[test]
fn reasoning_is_folded_until_expanded_and_a_restarted_response_is_dropped() {
    let mut app = app();
    app.agent_event(AgentEvent::ReasoningDelta {
        text: "first, look at ".into(),
    });
    app.agent_event(AgentEvent::ReasoningDelta {
        text: "the tests".into(),
    });
    app.agent_event(AgentEvent::TextDelta {
        text: "Done.".into(),
    });
    let folded = screen(&app, 60, 12);
    assert!(
        folded.contains("∴ thinking (1 lines, ctrl+o to show)") && !folded.contains("the tests"),
        "{folded}"
    );
    app.key(ctrl('o'));
    assert!(screen(&app, 60, 12).contains("first, look at the tests"));
    app.agent_event(AgentEvent::ResponseRestarted);
    assert!(app.transcript.is_empty());
}

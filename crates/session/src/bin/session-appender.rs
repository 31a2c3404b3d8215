//! A test helper for the store's two-process and kill tests: appends to one session in a
//! loop and prints `appended <id>` once each append has returned (so is committed), and
//! `branched <id>` after moving the leaf back.
//!
//! `session-appender <store> <session-id> <count | forever> [branch-every]`

use std::io::Write;
use std::process::ExitCode;

use serde_json::json;
use toolhost_core::ContentBlock;
use toolhost_core::conversation::{
    AssistantMessage, AssistantPart, StopReason, ToolCall, ToolResultMessage, Usage,
};
use toolhost_session::{EntryId, EntryKind, SessionId, SessionStore};

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("session-appender: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [store, session, count, rest @ ..] = args.as_slice() else {
        return Err(
            "usage: session-appender <store> <session-id> <count|forever> [branch-every]".into(),
        );
    };
    let count = match count.as_str() {
        "forever" => u64::MAX,
        count => count.parse()?,
    };
    let branch_every: u64 = rest
        .first()
        .map(|every| every.parse())
        .transpose()?
        .unwrap_or(0);
    let mut store = SessionStore::open(store)?;
    let session = SessionId::from(session.as_str());
    let mut out = std::io::stdout().lock();
    let mut mine: Vec<EntryId> = Vec::new();
    for step in 0..count {
        if branch_every > 0 && step % branch_every == branch_every - 1 && mine.len() > 3 {
            let back = mine[mine.len() - 3];
            store.branch_from(&session, back)?;
            writeln!(out, "branched {back}")?;
            out.flush()?;
            continue;
        }
        let id = store.append_at_leaf(&session, &entry(step))?;
        mine.push(id);
        writeln!(out, "appended {id}")?;
        out.flush()?;
    }
    Ok(())
}

/// A user message, an assistant message calling a tool, its result, in turn.
fn entry(step: u64) -> EntryKind {
    let call_id = format!("call-{step}");
    match step % 3 {
        0 => EntryKind::user_text(format!("step {step}: read the file, please")),
        1 => EntryKind::AssistantMessage(AssistantMessage {
            content: vec![
                AssistantPart::Text {
                    text: "Reading it.".into(),
                },
                AssistantPart::ToolCall(ToolCall {
                    id: call_id,
                    name: "Read".into(),
                    arguments: r#"{"path": "README.md"}"#.into(),
                }),
            ],
            stop_reason: StopReason::ToolUse,
            usage: Usage {
                input_tokens: 100,
                output_tokens: 10,
                ..Usage::default()
            },
            model: Some("mock".into()),
        }),
        _ => EntryKind::ToolResult {
            message: ToolResultMessage {
                tool_call_id: format!("call-{}", step - 1),
                tool_name: "Read".into(),
                content: vec![ContentBlock::text("# toolhost\nline two\n")],
                is_error: false,
            },
            details: Some(json!({"lines": 2})),
        },
    }
}

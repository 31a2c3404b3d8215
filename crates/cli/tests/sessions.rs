//! `toolhost sessions` through the binary, on a store file written with the
//! `toolhost-session` library: several sessions, a branch, tool results, usage, and prices from
//! the configuration.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::toolhost_with_home;
use toolhost_core::ContentBlock;
use toolhost_core::conversation::{
    AssistantMessage, AssistantPart, StopReason, ToolCall, ToolResultMessage, Usage,
};
use toolhost_core::permission::PermissionMode;
use toolhost_session::{
    EntryId, EntryKind, NewSession, PromptInputs, SessionId, SessionStore, TurnContext,
};
use toolhost_test_support::{HomeAndWorkspace, write_project_config};

/// A provider priced in the project's configuration: 2 USD per million tokens in, 10 out.
const PRICED_PROVIDER: &str = "[providers.priced]\napi = \"openai-chat\"\n\
     base_url = \"http://127.0.0.1:9/v1\"\nmodel = \"house-model\"\n\
     pricing = { input = 2.0, output = 10.0 }\n";

struct Fixture {
    dirs: HomeAndWorkspace,
    /// The session of the workspace: a Read, its result, an answer, and a branch.
    parser: SessionId,
    /// A session of another workspace.
    elsewhere: SessionId,
    /// The tool result (it holds the word "zanzibar").
    result: EntryId,
}

impl Fixture {
    fn store_path(&self) -> PathBuf {
        self.dirs.home.join(".toolhost/sessions.db")
    }

    fn toolhost(&self) -> Command {
        let mut command = toolhost_with_home(&self.dirs.workspace, &self.dirs.home);
        command.env_remove("TOOLHOST_SESSIONS_DB");
        command
    }

    /// `toolhost ARGS…`, which must succeed; its stdout.
    fn stdout(&self, args: &[&str]) -> String {
        let output = self.toolhost().args(args).output().unwrap();
        assert!(
            output.status.success(),
            "toolhost {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    }

    /// `toolhost ARGS…`, which must fail with `code`; its stderr.
    fn failure(&self, args: &[&str], code: i32) -> String {
        let output = self.toolhost().args(args).output().unwrap();
        assert_eq!(
            output.status.code(),
            Some(code),
            "toolhost {args:?}: {}",
            String::from_utf8_lossy(&output.stdout)
        );
        String::from_utf8(output.stderr).unwrap()
    }
}

fn turn_context(workspace: &Path) -> EntryKind {
    EntryKind::TurnContext(TurnContext {
        provider: "priced".into(),
        model: "house-model".into(),
        permission_mode: PermissionMode::Default,
        tools: vec!["Read".into()],
        max_output_tokens: None,
        system_prompt: PromptInputs {
            workspace: workspace.to_path_buf(),
            date: "2026-12-01".into(),
            platform: "linux x86_64".into(),
            context_files: Vec::new(),
            text: "You are toolhost.".into(),
        },
    })
}

fn answer(parts: Vec<AssistantPart>, input: u64, output: u64) -> EntryKind {
    EntryKind::AssistantMessage(AssistantMessage {
        stop_reason: if parts
            .iter()
            .any(|part| matches!(part, AssistantPart::ToolCall(_)))
        {
            StopReason::ToolUse
        } else {
            StopReason::EndTurn
        },
        content: parts,
        usage: Usage {
            input_tokens: input,
            output_tokens: output,
            ..Usage::default()
        },
        model: Some("house-model".into()),
    })
}

fn text(text: &str) -> AssistantPart {
    AssistantPart::Text { text: text.into() }
}

/// The store of the fixture, at the default place (`~/.toolhost/sessions.db`).
fn fixture() -> Fixture {
    let dirs = HomeAndWorkspace::new();
    write_project_config(&dirs.workspace, PRICED_PROVIDER);
    let mut store = SessionStore::open(dirs.home.join(".toolhost/sessions.db")).unwrap();
    let parser = store
        .create_session(NewSession {
            title: Some("Fix the parser".into()),
            workspace: Some(dirs.workspace.clone()),
            ..NewSession::default()
        })
        .unwrap()
        .id;
    store
        .append_at_leaf(&parser, &turn_context(&dirs.workspace))
        .unwrap();
    store
        .append_at_leaf(&parser, &EntryKind::user_text("Why does the parser panic?"))
        .unwrap();
    store
        .append_at_leaf(
            &parser,
            &answer(
                vec![
                    text("Let me read it."),
                    AssistantPart::ToolCall(ToolCall {
                        id: "call-1".into(),
                        name: "Read".into(),
                        arguments: r#"{"path":"src/parser.rs"}"#.into(),
                    }),
                ],
                1_000_000,
                100_000,
            ),
        )
        .unwrap();
    let result_text: String = (1..=20)
        .map(|line| format!("{line}: fn parse_{line}() // zanzibar\n"))
        .collect();
    let result = store
        .append_at_leaf(
            &parser,
            &EntryKind::ToolResult {
                message: ToolResultMessage {
                    tool_call_id: "call-1".into(),
                    tool_name: "Read".into(),
                    content: vec![ContentBlock::text(result_text)],
                    is_error: false,
                },
                details: Some(json!({"path": "src/parser.rs", "lines": 20})),
            },
        )
        .unwrap();
    store
        .append_at_leaf(
            &parser,
            &answer(vec![text("The old answer, left behind.")], 500_000, 50_000),
        )
        .unwrap();
    store.branch_from(&parser, result).unwrap();
    store
        .append_at_leaf(
            &parser,
            &answer(vec![text("The tokenizer drops the last byte.")], 200_000, 0),
        )
        .unwrap();

    let elsewhere = store
        .create_session(NewSession {
            title: Some("Elsewhere".into()),
            workspace: Some(dirs.root().join("other")),
            ..NewSession::default()
        })
        .unwrap()
        .id;
    store
        .append_at_leaf(&elsewhere, &EntryKind::user_text("Hello from elsewhere"))
        .unwrap();
    drop(store);
    Fixture {
        dirs,
        parser,
        elsewhere,
        result,
    }
}

#[test]
fn list_shows_this_workspaces_sessions_and_all_of_them_with_all() {
    let fixture = fixture();
    let here = fixture.stdout(&["sessions", "list"]);
    assert!(here.contains(fixture.parser.as_str()), "{here}");
    assert!(here.contains("Fix the parser"), "{here}");
    assert!(!here.contains(fixture.elsewhere.as_str()), "{here}");

    let all: Vec<Value> =
        serde_json::from_str(&fixture.stdout(&["sessions", "list", "--all", "--json"])).unwrap();
    let ids: Vec<&str> = all.iter().map(|row| row["id"].as_str().unwrap()).collect();
    // Newest first: the other session changed last.
    assert_eq!(ids, [fixture.elsewhere.as_str(), fixture.parser.as_str()]);
    assert_eq!(all[1]["entries"], 6);
    assert_eq!(all[1]["usage"]["input_tokens"], 1_700_000);
    assert_eq!(all[1]["usage"]["output_tokens"], 150_000);
    // Priced at the configured 2 / 10 USD per million: 3.4 + 1.5.
    assert_eq!(all[1]["cost_usd"], 4.9);
    assert_eq!(all[0]["cost_usd"], Value::Null);
}

#[test]
fn show_gives_the_record_the_branches_and_usage_and_cost_per_turn_from_config_prices() {
    let fixture = fixture();
    let prefix = &fixture.parser.as_str()[..30];
    let shown = fixture.stdout(&["sessions", "show", prefix]);
    for expected in [
        "Fix the parser",
        &format!("id         {}", fixture.parser),
        "status     active",
        "model      priced / house-model",
        "entries    6 (2 branches; the current one has 5",
        "tokens: 1,700,000 in, 150,000 out · cost $4.90",
        "1. Why does the parser panic?",
        "2 responses · 1,200,000 in, 100,000 out · $3.40",
        "The tokenizer drops the last byte.",
    ] {
        assert!(shown.contains(expected), "no {expected:?} in:\n{shown}");
    }
    assert!(!shown.contains("The old answer"), "{shown}");

    let report: Value =
        serde_json::from_str(&fixture.stdout(&["sessions", "show", prefix, "--json"])).unwrap();
    assert_eq!(report["leaves"], 2);
    assert_eq!(report["totals"]["responses"], 3);
    assert_eq!(report["totals"]["priced_responses"], 3);
    assert_eq!(report["totals"]["cost_usd"], 4.9);
    assert_eq!(report["turns"][0]["cost_usd"], 3.4);
    assert_eq!(report["turns"][0]["responses"], 2);
}

#[test]
fn without_a_price_show_gives_tokens_and_no_cost() {
    let fixture = fixture();
    // The workspace's configuration (and its prices) is not read from another workspace.
    let other = fixture.dirs.root().join("plain");
    std::fs::create_dir_all(&other).unwrap();
    let output = toolhost_with_home(&other, &fixture.dirs.home)
        .env_remove("TOOLHOST_SESSIONS_DB")
        .args(["sessions", "show", fixture.parser.as_str()])
        .output()
        .unwrap();
    assert!(output.status.success());
    let shown = String::from_utf8(output.stdout).unwrap();
    assert!(
        shown.contains("tokens: 1,700,000 in, 150,000 out · no price known"),
        "{shown}"
    );
    assert!(!shown.contains('$'), "{shown}");
}

#[test]
fn export_jsonl_holds_every_entry_of_every_branch() {
    let fixture = fixture();
    let out = fixture.stdout(&["sessions", "export", fixture.parser.as_str()]);
    let lines: Vec<Value> = out
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let store = SessionStore::open(fixture.store_path()).unwrap();
    let tree = store.tree(&fixture.parser).unwrap();
    assert_eq!(lines.len(), tree.len());
    for (line, entry) in lines.iter().zip(&tree) {
        assert_eq!(line["id"], entry.id.0);
        assert_eq!(line["parent"], json!(entry.parent.map(|parent| parent.0)));
        assert!(line["created"].as_str().unwrap().ends_with('Z'), "{line}");
        let kind: EntryKind =
            serde_json::from_value(json!({"kind": line["kind"], "data": line["data"]})).unwrap();
        assert_eq!(kind, entry.kind);
    }
    let result = lines
        .iter()
        .find(|line| line["id"] == fixture.result.0)
        .unwrap();
    assert_eq!(result["kind"], "tool_result");
    assert_eq!(result["data"]["details"]["lines"], 20);
}

#[test]
fn export_markdown_shows_the_conversation_of_the_current_branch() {
    let fixture = fixture();
    let markdown = fixture.stdout(&[
        "sessions",
        "export",
        fixture.parser.as_str(),
        "--format",
        "markdown",
    ]);
    for expected in [
        "# Fix the parser",
        "## User\n\nWhy does the parser panic?",
        "## Assistant\n\nLet me read it.",
        "- **Read** `{\"path\":\"src/parser.rs\"}`",
        "**Read result:**",
        "1: fn parse_1() // zanzibar",
        "*… 12 more lines*",
        "The tokenizer drops the last byte.",
    ] {
        assert!(
            markdown.contains(expected),
            "no {expected:?} in:\n{markdown}"
        );
    }
    assert!(!markdown.contains("The old answer"), "{markdown}");
    assert!(!markdown.contains("9: fn parse_9()"), "{markdown}");
}

#[test]
fn search_finds_a_word_of_a_tool_result() {
    let fixture = fixture();
    let out = fixture.stdout(&["sessions", "search", "zanzibar"]);
    let line = out.lines().next().unwrap();
    assert!(line.starts_with(fixture.parser.as_str()), "{out}");
    assert!(line.contains(&format!(" {} ", fixture.result)), "{out}");
    assert!(
        line.contains("tool_result") && line.contains("[zanzibar]"),
        "{out}"
    );

    let hits: Vec<Value> =
        serde_json::from_str(&fixture.stdout(&["sessions", "search", "elsewhere", "--json"]))
            .unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0]["session"], fixture.elsewhere.as_str());
    let none = fixture.stdout(&["sessions", "search", "nowhere-to-be-found"]);
    assert!(none.starts_with("No entry holds every word"), "{none}");
}

#[test]
fn rm_deletes_with_yes_and_a_second_rm_is_an_error() {
    let fixture = fixture();
    let out = fixture.stdout(&["sessions", "rm", fixture.parser.as_str(), "--yes"]);
    assert_eq!(
        out,
        format!("Deleted session {} (Fix the parser).\n", fixture.parser)
    );
    let all = fixture.stdout(&["sessions", "list", "--all"]);
    assert!(!all.contains(fixture.parser.as_str()), "{all}");
    assert!(all.contains(fixture.elsewhere.as_str()), "{all}");
    let search = fixture.stdout(&["sessions", "search", "zanzibar"]);
    assert!(search.starts_with("No entry"), "{search}");

    let again = fixture.failure(&["sessions", "rm", fixture.parser.as_str(), "--yes"], 2);
    assert!(
        again.contains(&format!("no session {}", fixture.parser)),
        "{again}"
    );
}

#[test]
fn rm_without_a_terminal_and_without_yes_refuses_and_keeps_the_session() {
    let fixture = fixture();
    let refused = fixture.failure(&["sessions", "rm", fixture.parser.as_str()], 2);
    assert!(refused.contains("without confirmation"), "{refused}");
    assert!(refused.contains("pass --yes"), "{refused}");
    let all = fixture.stdout(&["sessions", "list", "--all"]);
    assert!(all.contains(fixture.parser.as_str()), "{all}");
}

#[test]
fn an_ambiguous_prefix_lists_the_candidates_and_an_unknown_id_says_so() {
    let fixture = fixture();
    let (a, b) = (fixture.parser.as_str(), fixture.elsewhere.as_str());
    let common = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    assert!(common > 0, "{a} and {b} share no prefix");
    let error = fixture.failure(&["sessions", "show", &a[..common]], 2);
    assert!(error.contains("matches 2 sessions"), "{error}");
    assert!(
        error.contains(a) && error.contains("Fix the parser"),
        "{error}"
    );
    assert!(error.contains(b) && error.contains("Elsewhere"), "{error}");

    let unknown = fixture.failure(&["sessions", "export", "ffffffff"], 2);
    assert!(unknown.contains("no session ffffffff in"), "{unknown}");
    assert!(unknown.contains("sessions list --all"), "{unknown}");
}

#[test]
fn the_store_is_where_the_variable_or_the_configuration_says() {
    let fixture = fixture();
    let elsewhere = fixture.dirs.root().join("elsewhere.db");
    let mut store = SessionStore::open(&elsewhere).unwrap();
    let moved = store
        .create_session(NewSession {
            title: Some("In the other store".into()),
            ..NewSession::default()
        })
        .unwrap()
        .id;
    drop(store);

    let output = fixture
        .toolhost()
        .env("TOOLHOST_SESSIONS_DB", &elsewhere)
        .args(["sessions", "list", "--all"])
        .output()
        .unwrap();
    let listed = String::from_utf8(output.stdout).unwrap();
    assert!(listed.contains(moved.as_str()), "{listed}");
    assert!(!listed.contains(fixture.parser.as_str()), "{listed}");

    write_project_config(
        &fixture.dirs.workspace,
        &format!("[sessions]\npath = {:?}\n", elsewhere.display().to_string()),
    );
    let listed = fixture.stdout(&["sessions", "list", "--all"]);
    assert!(listed.contains(moved.as_str()), "{listed}");
}

#[test]
fn without_a_store_list_and_search_find_nothing_and_create_no_file() {
    let dirs = HomeAndWorkspace::new();
    let run = |args: &[&str]| {
        let output = toolhost_with_home(&dirs.workspace, &dirs.home)
            .env_remove("TOOLHOST_SESSIONS_DB")
            .args(args)
            .output()
            .unwrap();
        assert!(output.status.success());
        String::from_utf8(output.stdout).unwrap()
    };
    assert!(run(&["sessions", "list"]).starts_with("No sessions in"));
    assert_eq!(run(&["sessions", "list", "--all", "--json"]).trim(), "[]");
    assert!(run(&["sessions", "search", "anything"]).starts_with("No entry"));
    assert!(!dirs.home.join(".toolhost/sessions.db").exists());
}

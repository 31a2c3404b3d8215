//! The store's behaviour, on real files in temp folders.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use pretty_assertions::assert_eq;
use serde_json::json;
use toolhost_core::ContentBlock;
use toolhost_core::conversation::{
    AssistantMessage, AssistantPart, Message, StopReason, ToolCall, ToolResultMessage, Usage,
};
use toolhost_core::permission::PermissionMode;
use toolhost_session::{
    COMPACTION_PREAMBLE, Compaction, EntryId, EntryKind, NewSession, PromptFile, PromptInputs,
    Resume, SessionId, SessionStatus, SessionStore, StoreError, TurnContext,
};

fn store() -> (tempfile::TempDir, SessionStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::open(dir.path().join("sessions.db")).unwrap();
    (dir, store)
}

fn new_session(store: &mut SessionStore) -> SessionId {
    store.create_session(NewSession::default()).unwrap().id
}

fn ids(entries: &[toolhost_session::Entry]) -> Vec<EntryId> {
    entries.iter().map(|entry| entry.id).collect()
}

fn assistant(text: &str, calls: &[(&str, &str)], usage: Usage) -> EntryKind {
    let mut content = vec![AssistantPart::Text { text: text.into() }];
    content.extend(calls.iter().map(|(id, name)| {
        AssistantPart::ToolCall(ToolCall {
            id: (*id).into(),
            name: (*name).into(),
            arguments: r#"{"path":"src/lib.rs"}"#.into(),
        })
    }));
    EntryKind::AssistantMessage(AssistantMessage {
        content,
        stop_reason: if calls.is_empty() {
            StopReason::EndTurn
        } else {
            StopReason::ToolUse
        },
        usage,
        model: Some("m1".into()),
    })
}

fn tool_result(call: &str, text: &str) -> EntryKind {
    EntryKind::ToolResult {
        message: ToolResultMessage {
            tool_call_id: call.into(),
            tool_name: "Read".into(),
            content: vec![ContentBlock::text(text)],
            is_error: false,
        },
        details: Some(json!({"path": "src/lib.rs", "lines": 3})),
    }
}

fn turn_context() -> TurnContext {
    TurnContext {
        provider: "anthropic".into(),
        model: "claude".into(),
        permission_mode: PermissionMode::AcceptEdits,
        tools: vec!["Read".into(), "Write".into()],
        max_output_tokens: Some(4096),
        system_prompt: PromptInputs {
            workspace: PathBuf::from("/work/project"),
            date: "2026-12-01".into(),
            platform: "linux x86_64".into(),
            context_files: vec![PromptFile {
                path: PathBuf::from("/work/project/AGENTS.md"),
                text: "Run cargo fmt.".into(),
                truncated: false,
            }],
            text: "You are toolhost.".into(),
        },
    }
}

#[test]
fn appends_form_a_chain_and_the_conversation_runs_from_the_root_to_the_leaf() {
    let (_dir, mut store) = store();
    let session = new_session(&mut store);
    let a = store
        .append(&session, None, &EntryKind::user_text("a"))
        .unwrap();
    let b = store
        .append(&session, Some(a), &EntryKind::user_text("b"))
        .unwrap();
    let c = store
        .append_at_leaf(&session, &EntryKind::user_text("c"))
        .unwrap();

    let path = store.conversation(&session).unwrap();
    assert_eq!(ids(&path), vec![a, b, c]);
    assert_eq!(path[0].parent, None);
    assert_eq!(path[2].parent, Some(b));
    let record = store.get(session.as_str()).unwrap();
    assert_eq!(record.leaf, Some(c));
    assert_eq!(record.entry_count, 3);
}

#[test]
fn branching_keeps_the_old_branch_and_the_next_append_continues_from_the_earlier_entry() {
    let (_dir, mut store) = store();
    let session = new_session(&mut store);
    let a = store
        .append_at_leaf(&session, &EntryKind::user_text("a"))
        .unwrap();
    let b = store
        .append_at_leaf(&session, &EntryKind::user_text("b"))
        .unwrap();
    let c = store
        .append_at_leaf(&session, &EntryKind::user_text("c"))
        .unwrap();

    store.branch_from(&session, a).unwrap();
    assert_eq!(ids(&store.conversation(&session).unwrap()), vec![a]);
    let d = store
        .append_at_leaf(&session, &EntryKind::user_text("d"))
        .unwrap();

    assert_eq!(ids(&store.conversation(&session).unwrap()), vec![a, d]);
    let tree: Vec<_> = store
        .tree(&session)
        .unwrap()
        .iter()
        .map(|entry| (entry.id, entry.parent))
        .collect();
    assert_eq!(
        tree,
        vec![(a, None), (b, Some(a)), (c, Some(b)), (d, Some(a))]
    );

    store.branch_from(&session, c).unwrap();
    assert_eq!(ids(&store.conversation(&session).unwrap()), vec![a, b, c]);
}

#[test]
fn an_entry_of_another_session_is_neither_a_parent_nor_a_branch_point() {
    let (_dir, mut store) = store();
    let one = new_session(&mut store);
    let other = new_session(&mut store);
    let theirs = store
        .append_at_leaf(&other, &EntryKind::user_text("x"))
        .unwrap();

    let error = store
        .append(&one, Some(theirs), &EntryKind::user_text("y"))
        .unwrap_err();
    assert!(matches!(error, StoreError::EntryNotInSession { entry, .. } if entry == theirs));
    assert!(matches!(
        store.branch_from(&one, theirs),
        Err(StoreError::EntryNotInSession { .. })
    ));
    assert!(matches!(
        store.append_at_leaf(&SessionId::from("nope"), &EntryKind::user_text("z")),
        Err(StoreError::SessionNotFound(_))
    ));
    assert_eq!(store.tree(&one).unwrap(), vec![]);
}

#[test]
fn every_kind_of_entry_reads_back_as_it_was_written() {
    let (dir, mut store) = store();
    let session = new_session(&mut store);
    let kinds = vec![
        EntryKind::TurnContext(turn_context()),
        EntryKind::UserMessage {
            content: vec![
                ContentBlock::text("look at this"),
                ContentBlock::image("aGVsbG8=", "image/png"),
            ],
        },
        EntryKind::AssistantMessage(AssistantMessage {
            content: vec![
                AssistantPart::Reasoning {
                    text: "thinking".into(),
                    signature: Some("sig".into()),
                    id: Some("rs_1".into()),
                },
                AssistantPart::Text {
                    text: "Reading.".into(),
                },
                AssistantPart::ToolCall(ToolCall {
                    id: "c1".into(),
                    name: "Read".into(),
                    arguments: r#"{"path": "a.t"#.into(),
                }),
            ],
            stop_reason: StopReason::Other("pause_turn".into()),
            usage: Usage::default(),
            model: None,
        }),
        tool_result("c1", "the file"),
        EntryKind::ModelChange {
            provider: "openai".into(),
            model: "gpt".into(),
        },
        EntryKind::ModeChange {
            mode: PermissionMode::Plan,
        },
        EntryKind::Compaction(Compaction {
            summary: "we read a file".into(),
            first_kept: Some(EntryId(1)),
            tokens_before: 1234,
            files_read: vec!["a.t".into()],
            files_modified: vec![],
        }),
        EntryKind::BranchSummary {
            from_leaf: EntryId(3),
            summary: "tried another way".into(),
        },
        EntryKind::Label {
            name: "before refactor".into(),
        },
    ];
    for kind in &kinds {
        store.append_at_leaf(&session, kind).unwrap();
    }
    drop(store);

    let store = SessionStore::open(dir.path().join("sessions.db")).unwrap();
    let read: Vec<EntryKind> = store
        .conversation(&session)
        .unwrap()
        .into_iter()
        .map(|entry| entry.kind)
        .collect();
    assert_eq!(read, kinds);
}

#[test]
fn assistant_messages_add_their_usage_to_the_session_and_add_usage_adds_the_rest() {
    let (_dir, mut store) = store();
    let session = new_session(&mut store);
    let usage = Usage {
        input_tokens: 100,
        output_tokens: 20,
        cache_read_tokens: 80,
        cache_write_tokens: 5,
    };
    store
        .append_at_leaf(&session, &assistant("one", &[], usage))
        .unwrap();
    store
        .append_at_leaf(&session, &assistant("two", &[], usage))
        .unwrap();
    store
        .add_usage(
            &session,
            Usage {
                input_tokens: 1,
                ..Usage::default()
            },
        )
        .unwrap();

    assert_eq!(
        store.get(session.as_str()).unwrap().usage,
        Usage {
            input_tokens: 201,
            output_tokens: 40,
            cache_read_tokens: 160,
            cache_write_tokens: 10,
        }
    );
}

#[test]
fn sessions_are_found_by_id_by_a_unique_prefix_and_by_title() {
    let (_dir, mut store) = store();
    let first = store
        .create_session(NewSession {
            title: Some("Fix the parser".into()),
            workspace: Some("/work/p".into()),
            ..NewSession::default()
        })
        .unwrap();
    let second = store
        .create_session(NewSession {
            title: Some("parser tests".into()),
            ..NewSession::default()
        })
        .unwrap();
    assert_eq!(first.workspace, Some(PathBuf::from("/work/p")));
    assert_eq!(first.status, SessionStatus::Active);

    assert_eq!(store.get(first.id.as_str()).unwrap().id, first.id);
    let unique = first
        .id
        .as_str()
        .char_indices()
        .map(|(at, _)| &first.id.as_str()[..=at])
        .find(|prefix| !second.id.as_str().starts_with(prefix))
        .unwrap();
    assert_eq!(store.get(unique).unwrap().id, first.id);
    let shared = &first.id.as_str()[..unique.len() - 1];
    assert!(matches!(
        store.get(shared),
        Err(StoreError::AmbiguousPrefix { .. })
    ));
    assert!(matches!(
        store.get("zzz"),
        Err(StoreError::SessionNotFound(_))
    ));
    assert!(matches!(store.get(""), Err(StoreError::SessionNotFound(_))));

    let titles = |text: &str| -> Vec<SessionId> {
        store
            .find_by_title(text)
            .unwrap()
            .into_iter()
            .map(|session| session.id)
            .collect()
    };
    assert_eq!(titles("PARSER TESTS"), vec![second.id.clone()]);
    // The exact title first, then the newest.
    assert_eq!(titles("fix the parser"), vec![first.id.clone()]);
    assert_eq!(titles("parser"), vec![second.id.clone(), first.id.clone()]);
}

#[test]
fn the_list_is_newest_first_in_pages() {
    let (_dir, mut store) = store();
    let a = new_session(&mut store);
    let b = new_session(&mut store);
    let c = new_session(&mut store);
    std::thread::sleep(std::time::Duration::from_millis(3));
    store.set_title(&a, "touched last").unwrap();

    let page = |limit, offset| -> Vec<SessionId> {
        store
            .list(limit, offset)
            .unwrap()
            .into_iter()
            .map(|session| session.id)
            .collect()
    };
    assert_eq!(page(10, 0), vec![a.clone(), c.clone(), b.clone()]);
    assert_eq!(page(1, 1), vec![c]);
}

#[test]
fn sessions_are_listed_by_workspace_and_by_prefix_and_know_their_latest_model() {
    let (_dir, mut store) = store();
    let in_workspace = |store: &mut SessionStore, workspace: &str| {
        store
            .create_session(NewSession {
                workspace: Some(workspace.into()),
                ..NewSession::default()
            })
            .unwrap()
            .id
    };
    let a = in_workspace(&mut store, "/work/a");
    let b = in_workspace(&mut store, "/work/b");
    let a2 = in_workspace(&mut store, "/work/a");
    let listed: Vec<SessionId> = store
        .list_in_workspace(std::path::Path::new("/work/a"), 10, 0)
        .unwrap()
        .into_iter()
        .map(|session| session.id)
        .collect();
    assert_eq!(listed, vec![a2.clone(), a.clone()]);

    let common = a
        .as_str()
        .chars()
        .zip(a2.as_str().chars())
        .take_while(|(x, y)| x == y)
        .count();
    let found: Vec<SessionId> = store
        .find_by_prefix(&a.as_str()[..common], 10)
        .unwrap()
        .into_iter()
        .map(|session| session.id)
        .collect();
    assert!(
        found.first() == Some(&a) && found.contains(&a2),
        "{found:?}"
    );

    assert_eq!(store.latest_model(&b).unwrap(), None);
    store
        .append_at_leaf(&b, &EntryKind::TurnContext(turn_context()))
        .unwrap();
    store
        .append_at_leaf(&b, &EntryKind::user_text("hi"))
        .unwrap();
    assert_eq!(
        store.latest_model(&b).unwrap(),
        Some(("anthropic".to_owned(), "claude".to_owned()))
    );
    store
        .append_at_leaf(
            &b,
            &EntryKind::ModelChange {
                provider: "openai".into(),
                model: "gpt-5".into(),
            },
        )
        .unwrap();
    assert_eq!(
        store.latest_model(&b).unwrap(),
        Some(("openai".to_owned(), "gpt-5".to_owned()))
    );
}

#[test]
fn search_finds_messages_and_tool_results_across_sessions_with_a_snippet() {
    let (_dir, mut store) = store();
    let one = new_session(&mut store);
    let two = new_session(&mut store);
    store
        .append_at_leaf(
            &one,
            &EntryKind::user_text("Why does the tokenizer panic on emoji?"),
        )
        .unwrap();
    let result = store
        .append_at_leaf(
            &two,
            &tool_result("c1", "thread 'main' panicked at src/tokenizer.rs:42"),
        )
        .unwrap();
    store
        .append_at_leaf(&two, &EntryKind::TurnContext(turn_context()))
        .unwrap();

    let hits = store.search("tokenizer.rs", 10).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(
        (hits[0].session.clone(), hits[0].entry),
        (two.clone(), result)
    );
    assert_eq!(hits[0].kind, "tool_result");
    assert_eq!(
        hits[0].snippet,
        "thread 'main' panicked at src/[tokenizer.rs]:42"
    );

    let sessions: Vec<_> = store
        .search("tokenizer", 10)
        .unwrap()
        .into_iter()
        .map(|hit| hit.session)
        .collect();
    assert_eq!(sessions.len(), 2);
    assert!(sessions.contains(&one) && sessions.contains(&two));
    // FTS5 syntax is taken as words, not as a query language.
    assert_eq!(store.search("\"emoji?\" (", 10).unwrap().len(), 1);
    assert_eq!(store.search("   ", 10).unwrap(), vec![]);
}

#[test]
fn deleting_a_session_removes_its_entries_and_hits_and_keeps_its_sub_agents() {
    let (_dir, mut store) = store();
    let parent = new_session(&mut store);
    let child = store
        .create_session(NewSession {
            parent: Some(parent.clone()),
            spawned_by_call: Some("call-7".into()),
            ..NewSession::default()
        })
        .unwrap();
    let spawned = child.spawned_by.clone().unwrap();
    assert_eq!(spawned.session, Some(parent.clone()));
    assert_eq!(spawned.tool_call_id.as_deref(), Some("call-7"));
    for text in ["alpha", "beta", "gamma"] {
        store
            .append_at_leaf(&parent, &EntryKind::user_text(text))
            .unwrap();
    }

    store.delete(&parent).unwrap();

    assert!(matches!(
        store.get(parent.as_str()),
        Err(StoreError::SessionNotFound(_))
    ));
    assert_eq!(store.search("alpha", 10).unwrap(), vec![]);
    let orphan = store.get(child.id.as_str()).unwrap().spawned_by.unwrap();
    assert_eq!(orphan.session, None);
    assert_eq!(orphan.tool_call_id.as_deref(), Some("call-7"));
    assert!(matches!(
        store.delete(&parent),
        Err(StoreError::SessionNotFound(_))
    ));
    store.check_integrity().unwrap();
}

#[test]
fn status_and_title_are_kept() {
    let (_dir, mut store) = store();
    let session = new_session(&mut store);
    store
        .set_status(&session, SessionStatus::Cancelled)
        .unwrap();
    store.set_title(&session, "A title").unwrap();
    let record = store.get(session.as_str()).unwrap();
    assert_eq!(record.status, SessionStatus::Cancelled);
    assert_eq!(record.title.as_deref(), Some("A title"));
    assert!(record.updated_at >= record.created_at);
    assert!(matches!(
        store.set_status(&SessionId::from("missing"), SessionStatus::Failed),
        Err(StoreError::SessionNotFound(_))
    ));
}

#[test]
fn a_resume_reads_the_summary_of_the_last_compaction_then_what_it_kept() {
    let (_dir, mut store) = store();
    let session = new_session(&mut store);
    store
        .append_at_leaf(&session, &EntryKind::TurnContext(turn_context()))
        .unwrap();
    store
        .append_at_leaf(&session, &EntryKind::user_text("old question"))
        .unwrap();
    store
        .append_at_leaf(&session, &assistant("old answer", &[], Usage::default()))
        .unwrap();
    let kept = store
        .append_at_leaf(&session, &EntryKind::user_text("recent question"))
        .unwrap();
    store
        .append_at_leaf(
            &session,
            &assistant("reading", &[("c1", "Read")], Usage::default()),
        )
        .unwrap();
    store
        .append_at_leaf(&session, &tool_result("c1", "text"))
        .unwrap();
    store
        .append_at_leaf(
            &session,
            &EntryKind::Compaction(Compaction {
                summary: "The user asked an old question.".into(),
                first_kept: Some(kept),
                tokens_before: 9000,
                files_read: vec!["src/lib.rs".into()],
                files_modified: vec![],
            }),
        )
        .unwrap();
    store
        .append_at_leaf(
            &session,
            &EntryKind::ModeChange {
                mode: PermissionMode::Plan,
            },
        )
        .unwrap();
    store
        .append_at_leaf(
            &session,
            &assistant("more", &[("c2", "Grep")], Usage::default()),
        )
        .unwrap();

    let resume = store.resume(&session).unwrap();
    assert_eq!(
        resume,
        Resume::from_path(store.conversation(&session).unwrap())
    );

    let Message::User { content } = &resume.messages[0] else {
        panic!("the summary comes first: {:?}", resume.messages[0]);
    };
    let summary = content[0].as_text().unwrap();
    assert!(summary.starts_with(COMPACTION_PREAMBLE), "{summary}");
    assert!(summary.contains("The user asked an old question."));
    assert!(summary.contains("Files read:\n- src/lib.rs"), "{summary}");
    assert_eq!(resume.messages[1], Message::user("recent question"));
    assert_eq!(resume.messages.len(), 5);
    assert_eq!(resume.turn_context, Some(turn_context()));
    assert_eq!(resume.model, Some(("anthropic".into(), "claude".into())));
    assert_eq!(resume.mode, Some(PermissionMode::Plan));
    let interrupted: Vec<_> = resume
        .interrupted_calls
        .iter()
        .map(|call| call.id.as_str())
        .collect();
    assert_eq!(interrupted, vec!["c2"]);
}

#[test]
fn a_session_created_with_its_first_entry_is_never_seen_without_it() {
    let (dir, mut store) = store();
    let (session, first) = store
        .create_session_with(
            NewSession {
                title: Some("first".into()),
                ..NewSession::default()
            },
            &EntryKind::user_text("Hello"),
        )
        .unwrap();
    assert_eq!(session.entry_count, 1);
    assert_eq!(session.leaf, Some(first));
    assert_eq!(ids(&store.conversation(&session.id).unwrap()), [first]);
    assert_eq!(store.search("hello", 10).unwrap().len(), 1);

    // When the entry cannot be written, the session is not created either: one transaction.
    rusqlite::Connection::open(dir.path().join("sessions.db"))
        .unwrap()
        .execute_batch(
            "CREATE TRIGGER refuse_entries BEFORE INSERT ON entries \
             BEGIN SELECT RAISE(ABORT, 'refused'); END;",
        )
        .unwrap();
    let refused = store.create_session_with(NewSession::default(), &EntryKind::user_text("Hi"));
    assert!(
        matches!(refused, Err(StoreError::Database(_))),
        "{refused:?}"
    );
    let listed: Vec<SessionId> = store
        .list(10, 0)
        .unwrap()
        .into_iter()
        .map(|session| session.id)
        .collect();
    assert_eq!(listed, [session.id]);
}

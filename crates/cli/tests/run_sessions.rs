//! `toolhost run` keeps its session in the store (`~/.toolhost/sessions.db`): the real binary
//! against a scripted mock model on 127.0.0.1, the store read back with `toolhost-session`.
//! `--continue` and `--resume` send the model the whole earlier conversation, and a run killed
//! with SIGKILL at any moment resumes from what it had committed, with nothing torn.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::PathBuf;
use std::time::Duration;

use assert_cmd::Command;
use serde_json::{Value, json};
use toolhost_session::{EntryKind, SessionStatus, SessionStore};
use toolhost_test_support::{HomeAndWorkspace, MockModel, Reply, Step, WireFormat, write_file};

/// A workspace and home, and a runtime to serve mock models from.
struct Fixture {
    runtime: tokio::runtime::Runtime,
    dirs: HomeAndWorkspace,
}

impl Fixture {
    fn new() -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let dirs = HomeAndWorkspace::new();
        write_file(
            dirs.workspace.join("hello.txt"),
            "Hello from the workspace.\n",
        );
        Self { runtime, dirs }
    }

    fn model(&self, script: Vec<Step>) -> MockModel {
        self.runtime
            .block_on(MockModel::start(WireFormat::OpenAiChat, script))
    }

    fn store_path(&self) -> PathBuf {
        self.dirs.home.join(".toolhost").join("sessions.db")
    }

    fn store(&self) -> SessionStore {
        SessionStore::open(self.store_path()).unwrap()
    }

    /// `toolhost run ARGS…` against `model`.
    fn run(&self, model: &MockModel, args: &[&str]) -> Command {
        let mut command = support::toolhost_with_home(&self.dirs.workspace, &self.dirs.home);
        command
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("ANTHROPIC_BASE_URL")
            .env("OPENAI_BASE_URL", model.openai_base_url())
            .env("OPENAI_API_KEY", "sk-test")
            .arg("run")
            .args(args)
            .timeout(Duration::from_secs(60));
        command
    }

    fn spawn_run(&self, model: &MockModel, args: &[&str]) -> std::process::Child {
        std::process::Command::new(assert_cmd::cargo::cargo_bin("toolhost"))
            .env("HOME", &self.dirs.home)
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("ANTHROPIC_BASE_URL")
            .env("OPENAI_BASE_URL", model.openai_base_url())
            .env("OPENAI_API_KEY", "sk-test")
            .arg("--workspace")
            .arg(&self.dirs.workspace)
            .arg("run")
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap()
    }
}

/// The chat messages of a request, as `(role, text or tool-call summary)`.
fn sent_messages(body: &Value) -> Vec<(String, String)> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| {
            let role = message["role"].as_str().unwrap().to_owned();
            let text = match (&message["content"], &message["tool_calls"]) {
                (_, Value::Array(calls)) => calls
                    .iter()
                    .map(|call| format!("call {}", call["id"].as_str().unwrap()))
                    .collect::<Vec<_>>()
                    .join(","),
                (Value::String(text), _) => text.clone(),
                (other, _) => other.to_string(),
            };
            (role, text)
        })
        .collect()
}

fn json_stdout(output: &std::process::Output) -> Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stdout)))
}

#[test]
fn a_run_is_kept_and_continue_sends_the_whole_conversation_again() {
    let fixture = Fixture::new();
    let first = fixture.model(vec![
        Reply::tool_call("call_1", "Read", json!({"path": "hello.txt"})).into(),
        Reply::text("It greets you.").with_usage(100, 10, 0).into(),
    ]);
    let output = fixture
        .run(
            &first,
            &["--output-format", "json", "What does hello.txt say?"],
        )
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let session_id = json_stdout(&output)["session_id"]
        .as_str()
        .unwrap()
        .to_owned();

    // The store holds the session: titled after the prompt, completed, with every message.
    let store = fixture.store();
    let session = store.get(&session_id).unwrap();
    assert_eq!(session.title.as_deref(), Some("What does hello.txt say?"));
    assert_eq!(session.status, SessionStatus::Completed);
    assert_eq!(
        session.workspace.as_deref(),
        Some(fixture.dirs.workspace.as_path())
    );
    assert_eq!(session.usage.output_tokens, 10);
    let kinds: Vec<&str> = store
        .conversation(&session.id)
        .unwrap()
        .iter()
        .map(|entry| entry.kind.name())
        .collect();
    assert_eq!(
        kinds,
        [
            "turn_context",
            "user_message",
            "assistant_message",
            "tool_result",
            "assistant_message"
        ]
    );
    let path = store.conversation(&session.id).unwrap();
    let EntryKind::ToolResult { details, message } = &path[3].kind else {
        panic!("not a tool result: {:?}", path[3].kind);
    };
    assert!(!message.is_error);
    assert!(details.is_some(), "Read's details are kept for renderers");
    drop(store);

    // --continue: the model reads the whole earlier conversation, then the new prompt.
    let second = fixture.model(vec![Reply::text("In French: bonjour.").into()]);
    let output = fixture
        .run(
            &second,
            &["--continue", "--output-format", "json", "And in French?"],
        )
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(json_stdout(&output)["session_id"], session_id.as_str());
    let sent = sent_messages(&second.requests()[0].body);
    let roles: Vec<&str> = sent.iter().map(|(role, _)| role.as_str()).collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "assistant", "user"]
    );
    assert_eq!(sent[1].1, "What does hello.txt say?");
    assert!(sent[3].1.contains("Hello from the workspace."), "{sent:?}");
    assert_eq!(sent[4].1, "It greets you.");
    assert_eq!(sent[5].1, "And in French?");

    // The same model, tools and prompt: no second turn context.
    let store = fixture.store();
    let path = store.conversation(&session.id).unwrap();
    let contexts = path
        .iter()
        .filter(|entry| entry.kind.name() == "turn_context")
        .count();
    assert_eq!(contexts, 1);
    assert_eq!(path.len(), 7);
}

#[test]
fn resume_takes_an_id_prefix_and_a_wrong_one_is_a_usage_error() {
    let fixture = Fixture::new();
    let model = fixture.model(vec![
        Reply::text("One.").into(),
        Reply::text("Two.").into(),
        Reply::text("Three.").into(),
    ]);
    for prompt in ["first session", "second session"] {
        let output = fixture.run(&model, &[prompt]).output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{output:?}");
    }
    let store = fixture.store();
    let sessions = store.list(10, 0).unwrap();
    assert_eq!(sessions.len(), 2);
    let first = sessions
        .iter()
        .find(|session| session.title.as_deref() == Some("first session"))
        .unwrap();
    let prefix = &first.id.as_str()[..first.id.as_str().len() - 4];
    drop(store);

    // Resuming the older one by prefix: it is the conversation the model reads.
    let output = fixture
        .run(&model, &["--resume", prefix, "go on"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let sent = sent_messages(&model.requests()[2].body);
    assert_eq!(sent[1].1, "first session");
    assert_eq!(sent[2].1, "One.");
    assert_eq!(sent[3].1, "go on");

    let output = fixture
        .run(&model, &["--resume", "no-such-session", "go on"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("no-such-session"), "{stderr}");
    assert_eq!(model.requests().len(), 3, "nothing was sent");
}

#[test]
fn continue_without_a_session_and_no_session_runs() {
    let fixture = Fixture::new();
    let model = fixture.model(vec![Reply::text("Fine.").into()]);
    let output = fixture.run(&model, &["--continue", "hi"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("no session to continue"), "{stderr}");

    // --no-session: the run works and the store holds nothing of it.
    let output = fixture
        .run(&model, &["--no-session", "hi"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(fixture.store().list(10, 0).unwrap().len(), 0);
}

#[test]
fn a_store_that_is_not_sqlite_is_refused_and_left_as_it_was() {
    let fixture = Fixture::new();
    let garbage = b"this is not a database, but somebody's notes\n".repeat(100);
    std::fs::write(fixture.store_path(), &garbage).unwrap();
    let model = fixture.model(vec![Reply::text("Fine.").into()]);
    let output = fixture.run(&model, &["hi"]).output().unwrap();
    // Like a config file that does not parse: the run does not start (2), the file is named.
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("sessions.db"), "{stderr}");
    assert!(stderr.contains("untouched"), "{stderr}");
    assert_eq!(std::fs::read(fixture.store_path()).unwrap(), garbage);
    assert!(model.requests().is_empty());
}

/// A scripted session of Bash calls, each appending a line to a file, streamed slowly enough
/// that a kill lands in every phase: mid-stream, mid-tool, between commits.
fn slow_session(turns: usize) -> Vec<Step> {
    let mut script: Vec<Step> = (1..=turns)
        .map(|turn| {
            Reply::tool_call(
                format!("call_{turn}"),
                "Bash",
                json!({"command": format!("sleep 0.05; echo {turn} >> log.txt")}),
            )
            .with_delay_per_event(Duration::from_millis(15))
            .into()
        })
        .collect();
    script.push(Reply::text("All done.").into());
    script
}

#[test]
fn a_run_killed_at_random_moments_resumes_from_what_it_committed() {
    let fixture = Fixture::new();
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    for round in 0..12 {
        let model = fixture.model(slow_session(8));
        let prompt = format!("round {round}: append the numbers");
        let mut child = fixture.spawn_run(&model, &["--yes", "--mode", "acceptEdits", &prompt]);
        // xorshift: a spread of kill times over the session's ~1.5 s.
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        std::thread::sleep(Duration::from_millis(seed % 1500));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();

        // The store opens, is sound, and its path is a valid chain ending at the leaf.
        let store = fixture.store();
        store.check_integrity().unwrap();
        let Some(session) = store
            .list(100, 0)
            .unwrap()
            .into_iter()
            .find(|session| session.title.as_deref() == Some(prompt.as_str()))
        else {
            // Killed before the session was created: nothing to resume, nothing torn.
            continue;
        };
        let path = store.conversation(&session.id).unwrap();
        assert_eq!(path.last().map(|entry| entry.id), session.leaf);
        let committed_messages = path
            .iter()
            .filter(|entry| {
                matches!(
                    entry.kind,
                    EntryKind::UserMessage { .. }
                        | EntryKind::AssistantMessage(_)
                        | EntryKind::ToolResult { .. }
                )
            })
            .count();
        drop(store);

        // Resume it: the model reads exactly what was committed (plus a result for a call
        // that was cut off), every call answered right after it.
        let resumed = fixture.model(vec![Reply::text("Resumed.").into()]);
        let output = fixture
            .run(&resumed, &["--resume", session.id.as_str(), "go on"])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "round {round}: {output:?}");
        let sent = sent_messages(&resumed.requests()[0].body);
        assert_eq!(sent[0].0, "system");
        // Killed between creating the session and committing the prompt: the session is
        // empty, and the resumed run starts from its own prompt.
        let first = if committed_messages == 0 {
            "go on"
        } else {
            prompt.as_str()
        };
        assert_eq!(sent[1], ("user".to_owned(), first.to_owned()));
        assert_eq!(
            sent.last().unwrap(),
            &("user".to_owned(), "go on".to_owned())
        );
        let interrupted = sent
            .iter()
            .filter(|(_, text)| text.starts_with("Interrupted: toolhost stopped"))
            .count();
        assert!(interrupted <= 1, "round {round}: {sent:?}");
        assert_eq!(
            sent.len(),
            1 + committed_messages + interrupted + 1,
            "round {round}: {sent:?}"
        );
        for (at, (role, text)) in sent.iter().enumerate() {
            if role == "assistant" && text.starts_with("call ") {
                assert_eq!(sent[at + 1].0, "tool", "round {round}: {sent:?}");
            }
        }
    }
}

#[test]
fn a_conversation_past_the_window_share_is_compacted_and_resumes_compacted() {
    let fixture = Fixture::new();
    let model = fixture.model(vec![
        // 600 of a 1000-token window after the first response; compacting at 0.5.
        Reply::tool_call("call_1", "Read", json!({"path": "hello.txt"}))
            .with_usage(600, 10, 0)
            .into(),
        Reply::text("The user asked what hello.txt says; it was read.").into(),
        Reply::text("It says hello.").into(),
        Reply::text("Still hello.").into(),
    ]);
    write_file(
        fixture.dirs.project_config(),
        format!(
            "[providers.mock]\napi = \"openai-chat\"\nbase_url = \"{}\"\n\
             api_key_env = \"MOCK_MODEL_KEY\"\nmodel = \"mock-model\"\ncontext_window = 1000\n\n\
             [agent]\nprovider = \"mock\"\ncompact_at = 0.5\n\n\
             # The automatic compaction runs the first hook only; its stdout joins the\n\
             # summariser's instructions.\n\
             [[hooks.PreCompact]]\nmatcher = \"auto\"\n\
             command = \"cat > pre_compact_input.json; echo Keep the names of the files read.\"\n\n\
             [[hooks.PreCompact]]\nmatcher = \"manual\"\ncommand = \"echo only by hand\"\n",
            model.openai_base_url()
        ),
    );
    let output = fixture
        .run(
            &model,
            &["--output-format", "stream-json", "What does hello.txt say?"],
        )
        .env("MOCK_MODEL_KEY", "sk-test")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("\"compact_boundary\""), "{stdout}");

    let requests = model.requests();
    // The second request is the summary's: its own instructions, the conversation as text,
    // no tools.
    let summary_request = &requests[1].body;
    assert!(summary_request.get("tools").is_none());
    let asked = sent_messages(summary_request);
    assert!(asked[0].1.contains("summarise"), "{asked:?}");
    assert!(asked[1].1.contains("What does hello.txt say?"), "{asked:?}");
    assert!(
        asked[1].1.contains("Keep the names of the files read."),
        "{asked:?}"
    );
    assert!(!asked[1].1.contains("only by hand"), "{asked:?}");
    let hook_input: Value = serde_json::from_str(
        &std::fs::read_to_string(fixture.dirs.workspace.join("pre_compact_input.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(hook_input["hook_event_name"], "PreCompact");
    assert_eq!(hook_input["trigger"], "auto");
    assert!(hook_input["session_id"].is_string(), "{hook_input}");
    // Then the conversation goes on from the summary, the call and its result kept whole.
    let after = sent_messages(&requests[2].body);
    let roles: Vec<&str> = after.iter().map(|(role, _)| role.as_str()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool"], "{after:?}");
    assert!(after[1].1.contains("was compacted"), "{after:?}");
    assert!(after[1].1.contains("it was read"), "{after:?}");
    assert_eq!(after[2].1, "call call_1");

    // The store has the compaction; a resume reads the summary, not the first prompt.
    let store = fixture.store();
    let session = &store.list(1, 0).unwrap()[0];
    let compaction = store
        .conversation(&session.id)
        .unwrap()
        .into_iter()
        .find_map(|entry| match entry.kind {
            EntryKind::Compaction(compaction) => Some(compaction),
            _ => None,
        })
        .expect("a compaction entry");
    assert!(compaction.first_kept.is_some());
    drop(store);
    let output = fixture
        .run(&model, &["--continue", "And now?"])
        .env("MOCK_MODEL_KEY", "sk-test")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let resumed = sent_messages(&model.requests()[3].body);
    let roles: Vec<&str> = resumed.iter().map(|(role, _)| role.as_str()).collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "assistant", "user"],
        "{resumed:?}"
    );
    assert!(resumed[1].1.contains("was compacted"), "{resumed:?}");
    assert_eq!(resumed[5].1, "And now?");
}

#[test]
fn a_configured_temperature_reaches_the_model_request() {
    let fixture = Fixture::new();
    let model = fixture.model(vec![
        Reply::text("Fine.").into(),
        Reply::text("Fine.").into(),
    ]);
    let config = |extra: &str| {
        format!(
            "[providers.mock]\napi = \"openai-chat\"\nbase_url = \"{}\"\n\
             api_key_env = \"MOCK_MODEL_KEY\"\nmodel = \"mock-model\"\n{extra}\n\
             [agent]\nprovider = \"mock\"\n",
            model.openai_base_url()
        )
    };
    write_file(fixture.dirs.project_config(), config("temperature = 0.2"));
    let output = fixture
        .run(&model, &["--no-session", "hi"])
        .env("MOCK_MODEL_KEY", "sk-test")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let sent = model.requests()[0].body["temperature"].as_f64().unwrap();
    assert!((sent - 0.2).abs() < 1e-6, "{sent}");

    // Unset: none is sent, and the server's default applies.
    write_file(fixture.dirs.project_config(), config(""));
    let output = fixture
        .run(&model, &["--no-session", "hi"])
        .env("MOCK_MODEL_KEY", "sk-test")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(model.requests()[1].body.get("temperature"), None);
}

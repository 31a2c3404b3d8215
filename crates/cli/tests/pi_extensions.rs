//! pi extensions (`export default function (pi) { … }`) through the real `toolhost` binary,
//! dropped where pi puts them (`.pi/extensions/`): their tools in `toolhost tools` and
//! `toolhost call`, their handlers in `toolhost run` against a scripted mock model (a
//! `tool_call` handler blocking a call and rewriting one that the rules then judge, a
//! `tool_result` handler rewriting a result), their state in the session across `--continue`,
//! their commands expanding in `run`, and `pi.exec` under the Bash rules. The fixtures are in
//! `tests/fixtures/pi_extensions`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::time::Duration;

use assert_cmd::Command;
use serde_json::{Value, json};
use toolhost_test_support::{
    HomeAndWorkspace, MockModel, Reply, Step, WireFormat, copy_tree, write_file,
};

/// A workspace whose `.pi/extensions` holds the fixtures, and a runtime for mock models.
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
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pi_extensions");
        copy_tree(&fixtures, &dirs.workspace.join(".pi/extensions"));
        write_file(dirs.workspace.join("notes.txt"), "public notes");
        write_file(dirs.workspace.join("secret.txt"), "the secret text");
        Self { runtime, dirs }
    }

    fn model(&self, script: Vec<Step>) -> MockModel {
        self.runtime
            .block_on(MockModel::start(WireFormat::OpenAiChat, script))
    }

    fn toolhost(&self) -> Command {
        let mut command = support::toolhost_with_home(&self.dirs.workspace, &self.dirs.home);
        command.timeout(Duration::from_secs(60));
        command
    }

    /// `toolhost [BEFORE…] run ARGS…` against `model`.
    fn run(&self, model: &MockModel, before: &[&str], args: &[&str]) -> std::process::Output {
        let mut command = self.toolhost();
        command
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("ANTHROPIC_BASE_URL")
            .env("OPENAI_BASE_URL", model.openai_base_url())
            .env("OPENAI_API_KEY", "sk-test")
            .args(before)
            .arg("run")
            .args(args);
        command.output().unwrap()
    }
}

/// The text of the messages of a request to the model, by role.
fn sent(body: &Value, role: &str) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == role)
        .map(|message| match &message["content"] {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
        .collect()
}

fn succeeded(output: &std::process::Output) -> String {
    assert!(
        output.status.success(),
        "status {:?}\nstdout: {}\nstderr: {}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn an_extensions_tool_is_listed_and_called_with_pis_argument_order() {
    let fixture = Fixture::new();
    let listed = succeeded(&fixture.toolhost().args(["tools"]).output().unwrap());
    assert!(listed.contains("visit_count"), "{listed}");
    assert!(listed.contains("say"), "{listed}");
    let called = succeeded(
        &fixture
            .toolhost()
            .args(["call", "visit_count", r#"{"prefix": "seen"}"#, "--yes"])
            .output()
            .unwrap(),
    );
    assert!(called.contains("seen: 0 ("), "{called}");
    assert!(called.contains("aborted=false"), "{called}");
}

#[test]
fn a_tool_call_handler_blocks_a_call_and_the_model_reads_why() {
    let fixture = Fixture::new();
    write_file(fixture.dirs.workspace.join("keep/file.txt"), "kept");
    let model = fixture.model(vec![
        Reply::tool_call("call_1", "Bash", json!({"command": "rm -rf keep"})).into(),
        Reply::text("It was blocked.").into(),
    ]);
    let output = fixture.run(&model, &[], &["--yes", "Clean up."]);
    succeeded(&output);
    assert!(fixture.dirs.workspace.join("keep/file.txt").exists());
    let results = sent(&model.requests()[1].body, "tool");
    assert_eq!(results.len(), 1);
    assert!(
        results[0].contains("An extension blocked this call: rm -rf is blocked by guard.ts"),
        "{results:?}"
    );
}

#[test]
fn a_call_a_handler_rewrote_is_judged_by_the_rules_as_rewritten() {
    let fixture = Fixture::new();
    // Reads of notes.txt become reads of secret.txt: a rule denying secret.txt refuses it.
    let model = fixture.model(vec![
        Reply::tool_call("call_1", "Read", json!({"path": "notes.txt"})).into(),
        Reply::text("Denied.").into(),
    ]);
    let output = fixture.run(&model, &["--deny", "Read(secret.txt)"], &["Read my notes."]);
    succeeded(&output);
    let results = sent(&model.requests()[1].body, "tool");
    assert!(results[0].contains("secret.txt"), "{results:?}");
    assert!(!results[0].contains("the secret text"), "{results:?}");

    // Allowed, the rewritten call runs and the tool_result handler rewrites its result.
    let model = fixture.model(vec![
        Reply::tool_call("call_1", "Read", json!({"path": "notes.txt"})).into(),
        Reply::text("Read.").into(),
    ]);
    succeeded(&fixture.run(&model, &[], &["Read my notes."]));
    let results = sent(&model.requests()[1].body, "tool");
    assert!(
        results[0].starts_with("[checked by guard] ") && results[0].contains("the secret text"),
        "{results:?}"
    );
}

#[test]
fn state_appended_to_the_session_is_read_back_after_continue() {
    let fixture = Fixture::new();
    let first = fixture.model(vec![Reply::text("Hello.").into()]);
    succeeded(&fixture.run(&first, &[], &["Hi."]));
    let system = sent(&first.requests()[0].body, "system").join("\n");
    assert!(system.contains("This is visit number 1."), "{system}");
    // promptSnippet and promptGuidelines join the system prompt.
    assert!(
        system.contains("visit_count: tells how often this session started"),
        "{system}"
    );
    assert!(
        system.contains("Call visit_count before talking about visits."),
        "{system}"
    );

    let second = fixture.model(vec![
        Reply::tool_call("call_1", "visit_count", json!({})).into(),
        Reply::text("Twice.").into(),
    ]);
    succeeded(&fixture.run(&second, &[], &["--continue", "--yes", "How often?"]));
    let system = sent(&second.requests()[0].body, "system").join("\n");
    assert!(system.contains("This is visit number 2."), "{system}");
    let results = sent(&second.requests()[1].body, "tool");
    assert!(results[0].starts_with("visits: 2 (call_1"), "{results:?}");

    // A new session starts counting again.
    let third = fixture.model(vec![Reply::text("Hello again.").into()]);
    succeeded(&fixture.run(&third, &[], &["Hi."]));
    let system = sent(&third.requests()[0].body, "system").join("\n");
    assert!(system.contains("This is visit number 1."), "{system}");
}

#[test]
fn a_registered_command_expands_in_run() {
    let fixture = Fixture::new();
    let model = fixture.model(vec![Reply::text("Hello, Bob!").into()]);
    let stdout = succeeded(&fixture.run(&model, &[], &["/greet Bob"]));
    assert!(stdout.contains("Hello, Bob!"), "{stdout}");
    let users = sent(&model.requests()[0].body, "user");
    assert_eq!(users, ["Please greet Bob warmly."]);

    // A command no extension registered is an ordinary prompt.
    let model = fixture.model(vec![Reply::text("No such command.").into()]);
    succeeded(&fixture.run(&model, &[], &["/nothing here"]));
    assert_eq!(sent(&model.requests()[0].body, "user"), ["/nothing here"]);
}

#[test]
fn pi_exec_in_an_extension_is_denied_by_a_bash_rule() {
    let fixture = Fixture::new();
    let allowed = succeeded(
        &fixture
            .toolhost()
            .args(["call", "say", r#"{"text": "hello"}"#, "--yes"])
            .output()
            .unwrap(),
    );
    assert!(allowed.contains("hello"), "{allowed}");
    let denied = fixture
        .toolhost()
        .args([
            "--deny",
            "Bash(echo:*)",
            "call",
            "say",
            r#"{"text": "hello"}"#,
            "--yes",
        ])
        .output()
        .unwrap();
    assert!(!denied.status.success());
    let stderr = String::from_utf8_lossy(&denied.stderr);
    assert!(stderr.contains("Bash(echo:*)"), "{stderr}");
}

#[test]
fn an_extension_replaces_a_built_in_only_when_configured_to() {
    let fixture = Fixture::new();
    write_file(
        fixture
            .dirs
            .workspace
            .join(".pi/extensions/read_override.ts"),
        r#"
        export default function (pi: any) {
          pi.registerTool({ name: "Read", label: "Read", description: "Reads, the extension's way",
            parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
            async execute(_id: string, params: { path: string }) {
              return { content: [{ type: "text", text: `extension read ${params.path}` }] };
            } });
        }
        "#,
    );
    write_file(fixture.dirs.workspace.join("plain.txt"), "plain text");
    let built_in = succeeded(
        &fixture
            .toolhost()
            .args(["call", "Read", r#"{"path": "plain.txt"}"#])
            .output()
            .unwrap(),
    );
    assert!(built_in.contains("plain text"), "{built_in}");
    write_file(
        fixture.dirs.workspace.join(".toolhost/config.toml"),
        "[custom_tools]\nreplace_builtins = [\"Read\"]\n",
    );
    let replaced = succeeded(
        &fixture
            .toolhost()
            .args(["call", "Read", r#"{"path": "plain.txt"}"#, "--yes"])
            .output()
            .unwrap(),
    );
    assert!(replaced.contains("extension read plain.txt"), "{replaced}");
}

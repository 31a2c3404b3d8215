//! What pi extensions see of and do to the session, through the real `toolhost` binary:
//! `session_before_compact` cancelling a compaction and `ctx.compact()`'s callbacks, `/clear`
//! in chat asking `session_before_switch`, `ctx.signal` aborting when the run is cancelled,
//! `ctx.sessionManager` reading the session's messages, `fs.watch`, and writes into the OS
//! temp folder while an extension loads. Each extension is written into a temp workspace's
//! `.pi/extensions`; `run` and `chat` talk to a scripted mock model on 127.0.0.1.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
#[path = "support/terminal.rs"]
mod terminal;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use assert_cmd::Command;
use serde_json::{Value, json};
use terminal::Terminal;
use toolhost_test_support::{
    Fault, HomeAndWorkspace, MockModel, Reply, Step, WireFormat, write_file,
};

/// A workspace and home, and a runtime for mock models.
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
        write_file(dirs.workspace.join("notes.txt"), "public notes");
        Self { runtime, dirs }
    }

    fn extension(&self, name: &str, source: &str) {
        write_file(
            self.dirs.workspace.join(".pi/extensions").join(name),
            source,
        );
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

    /// `toolhost run ARGS…` against `model`.
    fn run(&self, model: &MockModel, args: &[&str]) -> std::process::Output {
        let mut command = self.toolhost();
        with_model(command.arg("run").args(args), model);
        command.output().unwrap()
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.dirs.workspace.join(name))
            .unwrap_or_else(|error| panic!("{name}: {error}"))
    }
}

fn with_model<'a>(command: &'a mut Command, model: &MockModel) -> &'a mut Command {
    command
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_BASE_URL")
        .env("OPENAI_BASE_URL", model.openai_base_url())
        .env("OPENAI_API_KEY", "sk-test")
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

/// Every text the messages of a request to the model hold, joined.
fn texts(body: &Value) -> String {
    body["messages"].to_string()
}

/// An extension in the shape of pi's trigger-compact example: after the first turn it asks for
/// a compaction and notes how it ended, and what `session_compact` told it.
const COMPACT_AFTER_FIRST_TURN: &str = r#"
import { writeFileSync } from "node:fs";
export default function (pi) {
  let asked = false;
  pi.on("turn_end", (_event, ctx) => {
    if (asked) return;
    asked = true;
    ctx.compact({
      customInstructions: "Keep the file names.",
      onComplete: (result) => writeFileSync(`${ctx.cwd}/compaction.txt`, `done: ${result.summary} (${result.tokensBefore > 0})`),
      onError: (error) => writeFileSync(`${ctx.cwd}/compaction.txt`, `failed: ${error.message}`),
    });
  });
  pi.on("session_compact", (event, ctx) => {
    writeFileSync(`${ctx.cwd}/session_compact.txt`, `${event.compactionEntry.type}: ${event.compactionEntry.summary} (from an extension: ${event.fromExtension})`);
  });
}
"#;

#[test]
fn ctx_compact_compacts_before_the_next_request_and_calls_on_complete() {
    let fixture = Fixture::new();
    fixture.extension("compact.js", COMPACT_AFTER_FIRST_TURN);
    let model = fixture.model(vec![
        Reply::tool_call("call_1", "Read", json!({ "path": "notes.txt" })).into(),
        Reply::text("The user read notes.txt.").into(),
        Reply::text("Done.").into(),
    ]);
    let stdout = succeeded(&fixture.run(&model, &["--yes", "Read my notes."]));
    assert!(stdout.contains("Done."), "{stdout}");
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    // The second request asks for the summary, with the extension's instructions.
    assert!(
        texts(&requests[1].body).contains("Keep the file names."),
        "{}",
        requests[1].body
    );
    assert!(texts(&requests[2].body).contains("The user read notes.txt."));
    assert_eq!(
        fixture.read("compaction.txt"),
        "done: The user read notes.txt. (true)"
    );
    assert_eq!(
        fixture.read("session_compact.txt"),
        "compaction: The user read notes.txt. (from an extension: false)"
    );
}

/// pi's custom-compaction example, in short: the extension writes the summary itself.
const OWN_SUMMARY: &str = r#"
export default function (pi) {
  pi.on("session_before_compact", async (event) => ({
    compaction: { summary: `Notes were read (${event.branchEntries.length} entries summarised by an extension).`, tokensBefore: event.preparation.tokensBefore },
  }));
}
"#;

#[test]
fn a_session_before_compact_handler_gives_its_own_summary() {
    let fixture = Fixture::new();
    fixture.extension("compact.js", COMPACT_AFTER_FIRST_TURN);
    fixture.extension("summarise.js", OWN_SUMMARY);
    let model = fixture.model(vec![
        Reply::tool_call("call_1", "Read", json!({ "path": "notes.txt" })).into(),
        Reply::text("Done.").into(),
    ]);
    succeeded(&fixture.run(&model, &["--yes", "Read my notes."]));
    let requests = model.requests();
    assert_eq!(requests.len(), 2, "the model was not asked to summarise");
    assert!(texts(&requests[1].body).contains("summarised by an extension"));
    let noted = fixture.read("session_compact.txt");
    assert!(
        noted.starts_with("compaction: Notes were read (")
            && noted.ends_with("summarised by an extension). (from an extension: true)"),
        "{noted}"
    );
    assert!(
        fixture
            .read("compaction.txt")
            .starts_with("done: Notes were read"),
        "{}",
        fixture.read("compaction.txt")
    );
}

const CANCEL_COMPACTION: &str = r#"
export default function (pi) {
  pi.on("session_before_compact", async (event) => {
    const asked = event.branchEntries.some((entry) => entry.type === "message" && entry.message.role === "user");
    if (event.customInstructions === "Keep the file names." && asked) return { cancel: true };
  });
}
"#;

#[test]
fn a_session_before_compact_handler_cancels_the_compaction() {
    let fixture = Fixture::new();
    fixture.extension("compact.js", COMPACT_AFTER_FIRST_TURN);
    fixture.extension("keep-everything.js", CANCEL_COMPACTION);
    let model = fixture.model(vec![
        Reply::tool_call("call_1", "Read", json!({ "path": "notes.txt" })).into(),
        Reply::text("Done.").into(),
    ]);
    succeeded(&fixture.run(&model, &["--yes", "Read my notes."]));
    let requests = model.requests();
    assert_eq!(requests.len(), 2, "no summary was asked for");
    assert!(texts(&requests[1].body).contains("public notes"));
    assert_eq!(
        fixture.read("compaction.txt"),
        "failed: an extension's session_before_compact handler cancelled the compaction"
    );
    assert!(!fixture.dirs.workspace.join("session_compact.txt").exists());
}

/// pi's example of a guard on `/new`: the first time it refuses, then it notes the switch.
const CLEAR_GUARD: &str = r#"
import { writeFileSync } from "node:fs";
export default function (pi) {
  let refused = false;
  pi.on("session_before_switch", async (event) => {
    if (event.reason === "new" && !refused) {
      refused = true;
      return { cancel: true };
    }
  });
  pi.on("session_switch", async (event, ctx) => {
    writeFileSync(`${ctx.cwd}/switch.txt`, event.reason);
  });
}
"#;

#[test]
fn clear_in_chat_asks_session_before_switch_and_tells_session_switch() {
    let fixture = Fixture::new();
    fixture.extension("clear-guard.js", CLEAR_GUARD);
    let model = fixture.model(vec![]);
    let mut terminal = Terminal::start(&fixture.dirs, &model, "--mode bypassPermissions");
    let mut seen = terminal.wait_for("> ", 0);
    terminal.type_keys("/clear\r");
    seen = terminal.wait_for(
        "error: an extension's session_before_switch handler cancelled /clear",
        seen,
    );
    seen = terminal.wait_for("> ", seen);
    assert!(!fixture.dirs.workspace.join("switch.txt").exists());
    terminal.type_keys("/clear\r");
    seen = terminal.wait_for("a new session starts with your next message", seen);
    terminal.wait_for("> ", seen);
    terminal.type_keys("/exit\r");
    assert_eq!(terminal.wait_exit(), Some(0));
    assert_eq!(fixture.read("switch.txt"), "new");
}

/// A `tool_call` handler that waits for the run to be cancelled, as a handler doing slow work
/// with `ctx.signal` would.
const WAITS_FOR_CANCEL: &str = r#"
import { writeFileSync } from "node:fs";
export default function (pi) {
  pi.on("tool_call", async (_event, ctx) => {
    writeFileSync(`${ctx.cwd}/waiting.txt`, `aborted: ${ctx.signal.aborted}`);
    await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
    writeFileSync(`${ctx.cwd}/aborted.txt`, `aborted: ${ctx.signal.aborted}`);
  });
}
"#;

#[test]
fn ctx_signal_aborts_when_the_run_is_cancelled() {
    let fixture = Fixture::new();
    fixture.extension("waits.js", WAITS_FOR_CANCEL);
    let model = fixture.model(vec![
        Reply::tool_call("call_1", "Read", json!({ "path": "notes.txt" })).into(),
        Reply::text("Never asked.").into(),
    ]);
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_toolhost"));
    command
        .args(["--workspace"])
        .arg(&fixture.dirs.workspace)
        .args(["run", "--mode", "bypassPermissions", "Read my notes."])
        .env("HOME", &fixture.dirs.home)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_BASE_URL")
        .env("OPENAI_BASE_URL", model.openai_base_url())
        .env("OPENAI_API_KEY", "sk-test")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let child = command.spawn().unwrap();
    wait_for_file(&fixture.dirs.workspace.join("waiting.txt"));
    assert_eq!(fixture.read("waiting.txt"), "aborted: false");
    let interrupted = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupted.success());
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(fixture.read("aborted.txt"), "aborted: true");
    assert_eq!(model.requests().len(), 1);
}

fn wait_for_file(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !path.exists() {
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// An extension that keeps a marker in the session and, at the end of each run, notes what
/// `ctx.sessionManager` lists.
const SESSION_READER: &str = r#"
import { writeFileSync } from "node:fs";
export default function (pi) {
  pi.on("session_start", (event) => pi.appendEntry("marker", { reason: event.reason }));
  pi.on("agent_end", (_event, ctx) => {
    const manager = ctx.sessionManager;
    const branch = manager.getBranch();
    const lines = branch.map((entry) => entry.type === "message"
      ? `message ${entry.message.role}: ${JSON.stringify(entry.message.content)}`
      : `${entry.type} ${entry.customType}: ${JSON.stringify(entry.data)}`);
    const linked = branch.every((entry, at) => entry.parentId === (at === 0 ? null : branch[at - 1].id));
    lines.push(`linked: ${linked}`);
    lines.push(`leaf: ${manager.getLeafId() === branch.at(-1).id}`);
    lines.push(`all: ${manager.getEntries().length === branch.length}`);
    lines.push(`entry: ${manager.getEntry(branch[0].id).type}`);
    writeFileSync(`${ctx.cwd}/entries.txt`, lines.join("\n"));
  });
}
"#;

#[test]
fn session_manager_lists_the_sessions_messages_and_the_extensions_entries() {
    let fixture = Fixture::new();
    fixture.extension("reader.js", SESSION_READER);
    let first = fixture.model(vec![Reply::text("Hello.").into()]);
    succeeded(&fixture.run(&first, &["--mode", "bypassPermissions", "Hi."]));
    let listed = fixture.read("entries.txt");
    assert_eq!(
        listed.lines().collect::<Vec<_>>(),
        [
            r#"custom marker: {"reason":"startup"}"#,
            r#"message user: [{"type":"text","text":"Hi."}]"#,
            r#"message assistant: [{"type":"text","text":"Hello."}]"#,
            "linked: true",
            "leaf: true",
            "all: true",
            "entry: custom",
        ],
        "{listed}"
    );

    let second = fixture.model(vec![Reply::text("Again.").into()]);
    succeeded(&fixture.run(
        &second,
        &["--continue", "--mode", "bypassPermissions", "Once more."],
    ));
    let listed = fixture.read("entries.txt");
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(
        lines[..6],
        [
            r#"custom marker: {"reason":"startup"}"#,
            r#"message user: [{"type":"text","text":"Hi."}]"#,
            r#"message assistant: [{"type":"text","text":"Hello."}]"#,
            r#"custom marker: {"reason":"resume"}"#,
            r#"message user: [{"type":"text","text":"Once more."}]"#,
            r#"message assistant: [{"type":"text","text":"Again."}]"#,
        ],
        "{listed}"
    );
    assert_eq!(lines[6], "linked: true");
}

/// An extension that keeps a cache in the OS temp folder, made while it loads.
const TEMP_CACHE: &str = r#"
import { mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
export default function (pi) {
  const folder = join(tmpdir(), "pi-cache-ext");
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, "cache.json"), "{}");
  pi.registerTool({
    name: "temp_cache_probe",
    label: "Temp cache probe",
    description: "Says where its cache is",
    parameters: { type: "object", properties: {} },
    async execute() { return { content: [{ type: "text", text: folder }] }; },
  });
}
"#;

#[test]
fn an_extension_writes_into_the_temp_folder_while_loading_without_approval() {
    let fixture = Fixture::new();
    fixture.extension("temp-cache.js", TEMP_CACHE);
    let temp = fixture.dirs.home.join("tmp");
    std::fs::create_dir_all(&temp).unwrap();
    let listed = succeeded(
        &fixture
            .toolhost()
            .env("TMPDIR", &temp)
            .arg("tools")
            .output()
            .unwrap(),
    );
    assert!(listed.contains("temp_cache_probe"), "{listed}");
    assert_eq!(
        std::fs::read_to_string(temp.join("pi-cache-ext/cache.json")).unwrap(),
        "{}"
    );

    // A deny rule still holds there.
    std::fs::remove_dir_all(temp.join("pi-cache-ext")).unwrap();
    write_file(
        fixture.dirs.workspace.join(".toolhost/config.toml"),
        format!(
            "[permissions]\ndeny = [\"Write(/{}/**)\"]\n",
            temp.display()
        ),
    );
    let output = fixture
        .toolhost()
        .env("TMPDIR", &temp)
        .arg("tools")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stdout.contains("temp_cache_probe"), "{stdout}");
    assert!(stderr.contains("temp-cache.js"), "{stderr}");
    assert!(!temp.join("pi-cache-ext/cache.json").exists());
}

/// An extension that watches a folder of the workspace from the session's start, and a file
/// the rules keep it from reading, and notes what it hears.
const WATCHER: &str = r#"
import { appendFileSync, watch } from "node:fs";
export default function (pi) {
  pi.on("session_start", (_event, ctx) => {
    const note = (line) => appendFileSync(`${ctx.cwd}/heard.txt`, `${line}\n`);
    watch("watched", (eventType, filename) => note(`${eventType} ${filename}`));
    watch("secret.txt").on("error", (error) => note(`error ${error.code}`));
  });
}
"#;

#[test]
fn fs_watch_reports_changes_in_the_workspace_and_stops_with_the_session() {
    let fixture = Fixture::new();
    fixture.extension("watcher.js", WATCHER);
    std::fs::create_dir_all(fixture.dirs.workspace.join("watched")).unwrap();
    write_file(fixture.dirs.workspace.join("secret.txt"), "the secret text");
    write_file(
        fixture.dirs.workspace.join(".toolhost/config.toml"),
        "[permissions]\ndeny = [\"Read(secret.txt)\"]\n",
    );
    let model = fixture.model(vec![
        Reply::tool_call(
            "call_1",
            "Write",
            json!({ "path": "watched/new.txt", "content": "hello" }),
        )
        .into(),
        // Slowly, so that the poll sees the new file while the model answers.
        Reply::text("Written, and that is all.")
            .with_delay_per_event(Duration::from_millis(300))
            .into(),
    ]);
    let started = Instant::now();
    succeeded(&fixture.run(&model, &["--mode", "bypassPermissions", "Write a file."]));
    // The watches did not keep the program running.
    assert!(started.elapsed() < Duration::from_secs(30));
    let heard = fixture.read("heard.txt");
    let lines: Vec<&str> = heard.lines().collect();
    assert!(lines.contains(&"error EACCES"), "{heard}");
    assert!(lines.contains(&"rename new.txt"), "{heard}");
}

/// An extension that follows a response as it streams, as pi's message events tell it.
const STREAM_FOLLOWER: &str = r#"
import { writeFileSync } from "node:fs";
export default function (pi) {
  const seen = [];
  pi.on("message_start", (event) => seen.push(`start ${event.message.role} ${event.message.content.length}`));
  pi.on("message_update", (event) => {
    const piece = event.assistantMessageEvent;
    seen.push(`${piece.type} ${piece.contentIndex} ${JSON.stringify(piece.delta)} -> ${event.message.content[0].text}`);
  });
  pi.on("message_end", (event, ctx) => {
    seen.push(`end ${event.message.content[0].text}`);
    writeFileSync(`${ctx.cwd}/stream.txt`, seen.join("\n"));
  });
}
"#;

#[test]
fn message_update_follows_the_streamed_text() {
    let fixture = Fixture::new();
    fixture.extension("stream.js", STREAM_FOLLOWER);
    let model = fixture.model(vec![
        Reply::text("Hello there!")
            .with_fault(Fault::SplitDeltas(5))
            .into(),
    ]);
    succeeded(&fixture.run(&model, &["--mode", "bypassPermissions", "Hi."]));
    assert_eq!(
        fixture.read("stream.txt").lines().collect::<Vec<_>>(),
        [
            "start assistant 0",
            r#"text_delta 0 "Hello" -> Hello"#,
            r#"text_delta 0 " ther" -> Hello ther"#,
            r#"text_delta 0 "e!" -> Hello there!"#,
            "end Hello there!",
        ]
    );
}

//! The full-screen `toolhost chat` through a real pseudo-terminal: `script` (util-linux) runs
//! the binary on a pty sized 100×30, the test types into it, and a terminal emulator (vt100)
//! turns the bytes into the screen a person would see. A scripted mock model on 127.0.0.1
//! answers. Checked: an answer drawn from Markdown, a Write approved in the dialog with
//! "allow always" (the file written, the rule in `.toolhost/config.local.toml`), a custom
//! JavaScript tool asking through `api.ui`, its box drawn by its own renderer while it runs and
//! when it is done, the pending action it proposed applied, Shift-Tab switching the mode, Esc
//! cancelling a turn, and Ctrl-D leaving with the session. And sub-agents: a background
//! child's live line with its latest tool call while the prompt is back, its transcript
//! watched with Ctrl-T, its line completed when the test releases it, its answer at the next
//! turn, and a child still running when the chat ends cancelled with its process tree.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/agent_runs.rs"]
mod agent_runs;
mod support;

use std::io::{Read as _, Write as _};
use std::process::{Child, ChildStdin};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent_runs::{Fixture, WAIT_FOR_GO, last};
use serde_json::json;
use toolhost_test_support::{
    Fault, HomeAndWorkspace, MockModel, Reply, WireFormat, is_running, write_file,
};

const ROWS: u16 = 30;
const COLUMNS: u16 = 100;

/// `toolhost chat` on a pty, its screen kept by a terminal emulator.
struct Screen {
    child: Child,
    stdin: ChildStdin,
    parser: Arc<Mutex<vt100::Parser>>,
    bytes: Arc<Mutex<Vec<u8>>>,
}

impl Screen {
    fn start(dirs: &HomeAndWorkspace, model: &MockModel) -> Self {
        // `stty` sizes the pty `script` made (it has no size of its own: its stdin is a
        // pipe).
        let (child, stdin, mut stdout) = support::chat_on_pty(
            &dirs.workspace,
            &dirs.home,
            &model.openai_base_url(),
            "xterm-256color",
            &format!("stty rows {ROWS} cols {COLUMNS}; "),
            "",
        );
        let parser = Arc::new(Mutex::new(vt100::Parser::new(
            ROWS.try_into().unwrap(),
            COLUMNS.try_into().unwrap(),
            0,
        )));
        let bytes = Arc::new(Mutex::new(Vec::new()));
        let (screen, raw) = (Arc::clone(&parser), Arc::clone(&bytes));
        std::thread::spawn(move || {
            let mut buffer = [0u8; 8192];
            while let Ok(read) = stdout.read(&mut buffer) {
                if read == 0 {
                    break;
                }
                screen.lock().unwrap().process(&buffer[..read]);
                raw.lock().unwrap().extend_from_slice(&buffer[..read]);
            }
        });
        Self {
            child,
            stdin,
            parser,
            bytes,
        }
    }

    fn type_keys(&mut self, keys: &str) {
        self.stdin.write_all(keys.as_bytes()).unwrap();
        self.stdin.flush().unwrap();
    }

    /// What the terminal shows now.
    fn text(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    /// Waits until the screen shows all of `texts` at once.
    fn wait_for(&self, texts: &[&str]) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let screen = self.text();
            if texts.iter().all(|text| screen.contains(text)) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "the screen never showed {texts:?}; it shows:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn wait_exit(&mut self) -> Option<i32> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(
                Instant::now() < deadline,
                "chat did not exit:\n{}",
                self.text()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Everything written to the terminal, as text (after the chat left its screen).
    fn all_output(&self) -> String {
        String::from_utf8_lossy(&self.bytes.lock().unwrap()).into_owned()
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

/// A tool that asks through `api.ui` (real here: `hasUI` is true), whose box updates while it
/// runs (it reports "asking the sky" and waits until the test creates `go` in the workspace,
/// so the screen is checked in both states, untimed), and that proposes a pending action.
const WEATHER_TOOL: &str = r#"
import { readFile } from "node:fs/promises";

export default (api) => ({
  name: "weather",
  description: "The weather in a city",
  parameters: api.typebox.Object({ city: api.typebox.String() }),
  async execute(id, params, onUpdate) {
    const shared = api.hasUI && await api.ui.confirm("Share your city?", `The forecast needs ${params.city}.`);
    onUpdate({ content: [{ type: "text", text: `asking the sky (shared: ${shared})` }] });
    for (;;) {
      try { await readFile("go"); break; } catch { await new Promise((resolve) => setTimeout(resolve, 50)); }
    }
    api.pushPendingAction({
      label: "Save the forecast", description: `sunny in ${params.city}`, sourceToolName: "weather",
      apply: () => "saved the forecast", reject: () => "dropped the forecast",
    });
    return { content: [{ type: "text", text: `sunny in ${params.city}` }], details: { sky: "sunny" } };
  },
  renderCall: (args, theme) => [[theme.fg("accent", "☁ forecast for "), theme.bold(args.city)]],
  renderResult: (result, options, theme) => options.isPartial
    ? [theme.fg("warning", `the sky is thinking: ${result.content[0].text}`)]
    : [[theme.fg("success", `${result.details.sky} skies`), " (drawn by weather.js)"]],
});
"#;

#[test]
fn full_screen_chat_answers_approves_renders_switches_mode_and_cancels() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let dirs = HomeAndWorkspace::new();
    write_file(
        dirs.workspace.join(".toolhost/tools/weather.js"),
        WEATHER_TOOL,
    );
    write_file(
        dirs.workspace.join(".toolhost/config.local.toml"),
        "# my own settings\n[permissions]\nallow = [\"weather\"]\n",
    );
    let slow_words: Vec<String> = (0..200).map(|n| format!("word{n} ")).collect();
    let model = runtime.block_on(MockModel::start(
        WireFormat::OpenAiChat,
        vec![
            Reply::text("Hello from the **mock** model.").into(),
            Reply::tool_call(
                "call_1",
                "Write",
                json!({"path": "notes.txt", "content": "from the full screen\n"}),
            )
            .into(),
            Reply::text("Saved the note.").into(),
            Reply::tool_call("call_2", "weather", json!({"city": "Oslo"})).into(),
            Reply::text("It is sunny.").into(),
            Reply::text(slow_words.concat())
                .with_fault(Fault::SplitDeltas(12))
                .with_delay_per_event(Duration::from_millis(50))
                .into(),
        ],
    ));
    let mut screen = Screen::start(&dirs, &model);
    screen.wait_for(&["message (enter to send", "mode default"]);

    // A message: the answer is drawn from its Markdown.
    screen.type_keys("hello\r");
    screen.wait_for(&["› hello", "Hello from the mock model."]);

    // A Write asks in a dialog; "allow always" runs it and keeps the rule.
    screen.type_keys("write the note\r");
    screen.wait_for(&[
        "Write wants to run",
        "path: notes.txt",
        "Allow always: Write(/notes.txt)",
        "Deny, and tell the model why",
    ]);
    assert!(
        !dirs.workspace.join("notes.txt").exists(),
        "written before the approval"
    );
    screen.type_keys("2");
    screen.wait_for(&["Saved the note.", "allowed always: Write(/notes.txt)"]);
    assert_eq!(
        std::fs::read_to_string(dirs.workspace.join("notes.txt")).unwrap(),
        "from the full screen\n"
    );
    assert_eq!(
        std::fs::read_to_string(dirs.workspace.join(".toolhost/config.local.toml")).unwrap(),
        "# my own settings\n[permissions]\nallow = [\"weather\", \"Write(/notes.txt)\"]\n"
    );

    // A custom tool asks in a dialog; its box is drawn by its own renderer, updated while it
    // runs; the action it proposes is applied when the user says so.
    screen.type_keys("what is the weather?\r");
    screen.wait_for(&["Share your city?", "The forecast needs Oslo."]);
    screen.type_keys("y");
    let running = screen.wait_for(&[
        "☁ forecast for Oslo",
        "the sky is thinking: asking the sky (shared: true)",
    ]);
    assert!(!running.contains("sunny skies"), "{running}");
    write_file(dirs.workspace.join("go"), "");
    screen.wait_for(&[
        "apply this change?",
        "pending Save the forecast · from weather",
        "[a] apply   [d] discard",
    ]);
    screen.type_keys("a");
    screen.wait_for(&[
        "sunny skies (drawn by weather.js)",
        "applied: saved the forecast",
        "It is sunny.",
    ]);

    // Shift-Tab switches the mode.
    screen.type_keys("\x1b[Z");
    screen.wait_for(&["mode acceptEdits"]);

    // Esc cancels a running turn; the chat goes on.
    screen.type_keys("talk slowly\r");
    screen.wait_for(&["word3"]);
    screen.type_keys("\x1b");
    let cancelled = screen.wait_for(&["turn cancelled"]);
    assert!(!cancelled.contains("word199"), "{cancelled}");

    // Ctrl-D leaves; the terminal gets its screen back with the session to resume.
    screen.type_keys("\x04");
    assert_eq!(screen.wait_exit(), Some(0));
    assert!(
        screen.all_output().contains("toolhost chat --resume"),
        "{}",
        screen.all_output()
    );
    let requests = model.requests();
    assert_eq!(requests.len(), 6);
    // The decision on the pending action reached the model with the next message.
    let last = requests[5].body["messages"].to_string();
    assert!(
        last.contains("talk slowly")
            && last.contains("applied \\\"Save the forecast\\\" (saved the forecast)"),
        "{last}"
    );
}

#[test]
fn a_background_child_has_a_live_line_a_transcript_to_watch_and_ends_with_the_chat() {
    let fixture = Fixture::new();
    let parent = fixture.model(vec![
        Reply::tool_call(
            "call_1",
            "spawn_agent",
            json!({"prompt": "Wait, then say banana.", "agent": "helper", "background": true}),
        )
        .into(),
        Reply::text("The helper runs in the background.").into(),
        Reply::text("The helper says banana.").into(),
        Reply::tool_call(
            "call_2",
            "spawn_agent",
            json!({"prompt": "Sleep.", "agent": "helper", "background": true}),
        )
        .into(),
        Reply::text("Another helper sleeps.").into(),
    ]);
    let child = fixture.model(vec![
        Reply::tool_call("child_1", "Bash", json!({"command": WAIT_FOR_GO})).into(),
        Reply::text("banana").into(),
        Reply::tool_call(
            "child_2",
            "Bash",
            json!({"command": "sleep 300 & echo $! > sleep.pid; wait"}),
        )
        .into(),
    ]);
    fixture.two_models(
        &parent,
        &child,
        "\n[permissions]\nallow = [\"Bash\", \"spawn_agent\"]\n",
    );
    let mut screen = Screen::start(&fixture.dirs, &parent);
    screen.wait_for(&["message (enter to send"]);

    // The parent answers while its child waits in Bash: the prompt is back, and the child's
    // line shows it running with that call.
    screen.type_keys("get a banana\r");
    screen.wait_for(&[
        "The helper runs in the background.",
        "run-1 helper (background) · running · turn 1",
        "⎿ Bash $ while [ ! -f go ]; do sleep 0.05; done; echo ready",
        "message (enter to send",
    ]);

    // Ctrl-T shows the child's own transcript, read-only; Esc goes back.
    screen.type_keys("\x14");
    let watching = screen.wait_for(&[
        "watching run-1 helper · running · read-only · esc back",
        "› Wait, then say banana.",
        "Bash $ while [ ! -f go ]",
    ]);
    assert!(
        !watching.contains("The helper runs in the background."),
        "{watching}"
    );
    screen.type_keys("\x1b");
    screen.wait_for(&[
        "message (enter to send",
        "run-1 helper (background) · running",
    ]);

    // Released, the child finishes; its line says so, and its answer reaches the model with
    // the next message.
    write_file(fixture.path("go"), "");
    screen.wait_for(&["✓ run-1 helper (background) · completed · 2 turns"]);
    screen.type_keys("and?\r");
    screen.wait_for(&["The helper says banana."]);
    let delivered = last(&parent.requests()[2], "user");
    assert!(
        delivered.contains("[toolhost] The background agent run-1 (helper")
            && delivered.ends_with("banana"),
        "{delivered}"
    );

    // Ctrl-D while a child runs: the chat cancels it and its process tree before it exits.
    screen.type_keys("one more\r");
    screen.wait_for(&[
        "Another helper sleeps.",
        "run-2 helper (background) · running",
        "⎿ Bash $ sleep 300",
    ]);
    let pid_file = fixture.path("sleep.pid");
    let deadline = Instant::now() + Duration::from_secs(30);
    let sleep_pid: u32 = loop {
        if let Ok(text) = std::fs::read_to_string(&pid_file)
            && text.ends_with('\n')
        {
            break text.trim().parse().unwrap();
        }
        assert!(Instant::now() < deadline, "the child's Bash never ran");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(is_running(sleep_pid));
    screen.type_keys("\x04");
    assert_eq!(screen.wait_exit(), Some(0));
    let deadline = Instant::now() + Duration::from_secs(5);
    while is_running(sleep_pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !is_running(sleep_pid),
        "the child's sleep {sleep_pid} outlived the chat"
    );
}

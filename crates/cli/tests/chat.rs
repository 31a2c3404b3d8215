//! `toolhost chat` through a real pseudo-terminal: `script` (util-linux) runs the binary on a
//! pty, the test types into it and reads the screen's bytes. A scripted mock model on
//! 127.0.0.1 answers. Checked: the answer streams, a Write asks for approval on the terminal
//! and happens once approved, Ctrl-C cancels a turn and the chat goes on, the chat's slash
//! commands work, and `/exit` leaves with the session's id to resume.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read as _, Write as _};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use toolhost_test_support::{HomeAndWorkspace, MockModel, Reply, Step, WireFormat};

/// `toolhost chat` on a pty, its output collected as it comes.
struct Terminal {
    child: Child,
    stdin: ChildStdin,
    screen: Arc<Mutex<String>>,
}

impl Terminal {
    fn start(dirs: &HomeAndWorkspace, model: &MockModel, args: &str) -> Self {
        let binary = assert_cmd::cargo::cargo_bin("toolhost");
        // `exec`: `script` runs the command through `$SHELL -c`, and a shell that stays as
        // the parent (dash does) is in the pty's foreground group too, so a Ctrl-C kills it
        // and `script` reports 130 whatever toolhost did.
        let command = format!(
            "exec {} --workspace {} chat {args}",
            binary.display(),
            dirs.workspace.display()
        );
        let mut child = Command::new("script")
            .args(["-qfec", &command, "/dev/null"])
            .env("HOME", &dirs.home)
            .env("SHELL", "/bin/sh")
            .env("TERM", "dumb")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("ANTHROPIC_BASE_URL")
            .env("OPENAI_BASE_URL", model.openai_base_url())
            .env("OPENAI_API_KEY", "sk-test")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("script (util-linux) runs the chat on a pty");
        let stdin = child.stdin.take().unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let screen = Arc::new(Mutex::new(String::new()));
        let collected = Arc::clone(&screen);
        std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(read) = stdout.read(&mut buffer) {
                if read == 0 {
                    break;
                }
                collected
                    .lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buffer[..read]));
            }
        });
        Self {
            child,
            stdin,
            screen,
        }
    }

    fn type_keys(&mut self, keys: &str) {
        self.stdin.write_all(keys.as_bytes()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn screen(&self) -> String {
        self.screen.lock().unwrap().clone()
    }

    /// Waits until the screen shows `text` after byte `from`; the offset just past it.
    fn wait_for(&self, text: &str, from: usize) -> usize {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let screen = self.screen();
            if let Some(at) = screen.get(from..).and_then(|rest| rest.find(text)) {
                return from + at + text.len();
            }
            assert!(
                Instant::now() < deadline,
                "the screen never showed {text:?}; it shows:\n{screen}"
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
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

fn model(runtime: &tokio::runtime::Runtime, script: Vec<Step>) -> MockModel {
    runtime.block_on(MockModel::start(WireFormat::OpenAiChat, script))
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn chat_streams_asks_to_approve_a_write_and_cancels_a_turn() {
    let runtime = runtime();
    let dirs = HomeAndWorkspace::new();
    let slow_words: Vec<String> = (0..200).map(|n| format!("word{n} ")).collect();
    let model = model(
        &runtime,
        vec![
            Reply::text("Hello there, streamed in pieces.")
                .with_delay_per_event(Duration::from_millis(20))
                .into(),
            Reply::tool_call(
                "call_1",
                "Write",
                json!({"path": "out.txt", "content": "written from chat\n"}),
            )
            .into(),
            Reply::text("Wrote out.txt.").into(),
            Reply::text(slow_words.concat())
                .with_delay_per_event(Duration::from_millis(100))
                .into(),
            Reply::text("Still here.").into(),
        ],
    );
    let mut terminal = Terminal::start(&dirs, &model, "");
    let mut seen = terminal.wait_for("> ", 0);

    // A message: the answer streams onto the screen.
    terminal.type_keys("say hello\r");
    seen = terminal.wait_for("Hello there, streamed in pieces.", seen);
    seen = terminal.wait_for("> ", seen);

    // A Write asks on the terminal; approved once, the file is written.
    terminal.type_keys("write the file\r");
    seen = terminal.wait_for("Write wants to run", seen);
    assert!(
        !dirs.workspace.join("out.txt").exists(),
        "written before the approval"
    );
    terminal.type_keys("y\r");
    seen = terminal.wait_for("Wrote out.txt.", seen);
    assert_eq!(
        std::fs::read_to_string(dirs.workspace.join("out.txt")).unwrap(),
        "written from chat\n"
    );
    seen = terminal.wait_for("> ", seen);

    // A slow answer: Ctrl-C cancels the turn, and the chat goes on.
    terminal.type_keys("talk slowly\r");
    seen = terminal.wait_for("word3", seen);
    terminal.type_keys("\x03");
    seen = terminal.wait_for("[turn cancelled]", seen);
    assert!(!terminal.screen()[seen..].contains("word199"));
    seen = terminal.wait_for("> ", seen);
    terminal.type_keys("are you there?\r");
    seen = terminal.wait_for("Still here.", seen);

    // The chat's commands, then /exit with the session to resume. (Keys typed before the
    // prompt shows would be dropped when the line editor takes the terminal.)
    seen = terminal.wait_for("> ", seen);
    terminal.type_keys("/mode\r");
    seen = terminal.wait_for("mode: default", seen);
    seen = terminal.wait_for("> ", seen);
    terminal.type_keys("/branch\r");
    seen = terminal.wait_for("write the file", seen);
    seen = terminal.wait_for("> ", seen);
    terminal.type_keys("/exit\r");
    terminal.wait_for("toolhost chat --resume", seen);
    assert_eq!(terminal.wait_exit(), Some(0));
    let requests = model.requests();
    assert_eq!(
        requests.len(),
        5,
        "one request per turn, and the approved call's follow-up"
    );
}

#[test]
fn chat_resumes_the_last_session_and_branches_back() {
    let runtime = runtime();
    let dirs = HomeAndWorkspace::new();
    let model = model(
        &runtime,
        vec![
            Reply::text("First answer.").into(),
            Reply::text("Second answer.").into(),
            Reply::text("After the resume.").into(),
            Reply::text("On a new branch.").into(),
        ],
    );
    let mut terminal = Terminal::start(&dirs, &model, "");
    let mut seen = terminal.wait_for("> ", 0);
    terminal.type_keys("first question\r");
    seen = terminal.wait_for("First answer.", seen);
    seen = terminal.wait_for("> ", seen);
    terminal.type_keys("second question\r");
    seen = terminal.wait_for("Second answer.", seen);
    seen = terminal.wait_for("> ", seen);
    terminal.type_keys("\x04"); // Ctrl-D leaves
    terminal.wait_for("--resume", seen);
    assert_eq!(terminal.wait_exit(), Some(0));

    let mut terminal = Terminal::start(&dirs, &model, "--continue");
    let mut seen = terminal.wait_for("resumed session", 0);
    seen = terminal.wait_for("> ", seen);
    terminal.type_keys("third question\r");
    seen = terminal.wait_for("After the resume.", seen);
    // The model read the whole earlier conversation.
    let resumed = &model.requests()[2].body["messages"];
    assert_eq!(resumed[1]["content"], "first question");
    assert_eq!(resumed[4]["content"], "Second answer.");

    // Back to before message 2: the model no longer reads the second exchange.
    seen = terminal.wait_for("> ", seen);
    terminal.type_keys("/branch 2\r");
    seen = terminal.wait_for("the old branch is kept", seen);
    seen = terminal.wait_for("> ", seen);
    terminal.type_keys("another second question\r");
    seen = terminal.wait_for("On a new branch.", seen);
    let branched = &model.requests()[3].body["messages"];
    let texts: Vec<String> = branched
        .as_array()
        .unwrap()
        .iter()
        .map(|message| message["content"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(
        texts[1..],
        ["first question", "First answer.", "another second question"]
    );
    terminal.wait_for("> ", seen);
    terminal.type_keys("/exit\r");
    assert_eq!(terminal.wait_exit(), Some(0));
}

#[test]
fn a_slash_command_file_runs_with_its_arguments_and_only_its_allowed_tools() {
    let runtime = runtime();
    let dirs = HomeAndWorkspace::new();
    let commands = dirs.workspace.join(".claude").join("commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(
        commands.join("greet.md"),
        "---\ndescription: Greet someone\nallowed-tools: Read\n---\nSay hi to $ARGUMENTS, briefly.\n",
    )
    .unwrap();
    let model = model(&runtime, vec![Reply::text("Hi, Alice!").into()]);
    let mut terminal = Terminal::start(&dirs, &model, "");
    let mut seen = terminal.wait_for("> ", 0);
    terminal.type_keys("/greet Alice\r");
    seen = terminal.wait_for("Hi, Alice!", seen);
    let body = &model.requests()[0].body;
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(
        messages.last().unwrap()["content"],
        "Say hi to Alice, briefly.\n"
    );
    let tools: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap())
        .collect();
    // `Read` names the Read family, as in permission rules: the read-only file tools.
    assert_eq!(tools, ["Read", "ListDir", "Glob", "Grep"]);
    seen = terminal.wait_for("> ", seen);
    terminal.type_keys("/nosuchcommand\r");
    seen = terminal.wait_for("there is no slash command '/nosuchcommand'", seen);
    seen = terminal.wait_for("> ", seen);
    terminal.type_keys("/exit\r");
    terminal.wait_for("--resume", seen);
    assert_eq!(terminal.wait_exit(), Some(0));
}

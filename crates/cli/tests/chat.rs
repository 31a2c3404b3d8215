//! `toolhost chat` through a real pseudo-terminal: `script` (util-linux) runs the binary on a
//! pty, the test types into it and reads the screen's bytes. A scripted mock model on
//! 127.0.0.1 answers. Checked: the answer streams, a Write asks for approval on the terminal
//! and happens once approved, Ctrl-C cancels a turn and the chat goes on, the chat's slash
//! commands work, `/exit` leaves with the session's id to resume, and a background
//! sub-agent's tool calls and end are printed as lines tagged with its run id, its answer
//! reaching the model at the next turn, and a child still running when the chat ends is
//! cancelled with its process tree.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/agent_runs.rs"]
mod agent_runs;
mod support;
#[path = "support/terminal.rs"]
mod terminal;

use std::time::{Duration, Instant};

use agent_runs::{Fixture, WAIT_FOR_GO, last};
use serde_json::json;
use terminal::Terminal;
use toolhost_test_support::{
    HomeAndWorkspace, MockModel, Reply, Step, WireFormat, is_running, write_file,
};

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

/// A custom tool that answers with the session events it heard, in order.
const LISTENER: &str = r#"
const heard = [];
export default () => ({
  name: "listener",
  description: "The session events heard so far.",
  parameters: { type: "object", properties: {} },
  onSession(event) { heard.push(event.type); },
  async execute() { return { content: [{ type: "text", text: heard.join(",") }] }; },
});
"#;

#[test]
fn tree_goes_back_to_an_old_branch_and_model_switches_to_another_provider() {
    let runtime = runtime();
    let dirs = HomeAndWorkspace::new();
    let first = model(
        &runtime,
        vec![
            Reply::text("Answer one.").into(),
            Reply::text("Answer two.").into(),
            Reply::text("Answer other two.").into(),
            Reply::tool_call("call_1", "listener", json!({})).into(),
            Reply::text("Answer three.").into(),
        ],
    );
    let second = model(
        &runtime,
        vec![Reply::text("From the second provider.").into()],
    );
    write_file(dirs.workspace.join(".toolhost/tools/listener.js"), LISTENER);
    write_file(
        dirs.workspace.join(".toolhost/config.toml"),
        format!(
            "[agent]\nprovider = \"openai\"\n\n[providers.second]\napi = \"openai-chat\"\n\
             base_url = \"{}\"\nmodel = \"second-model\"\n",
            second.openai_base_url()
        ),
    );
    let mut terminal = Terminal::start(&dirs, &first, "--mode bypassPermissions");
    let mut seen = terminal.wait_for("> ", 0);
    for (line, answer) in [
        ("one", "Answer one."),
        ("two", "Answer two."),
        ("/branch 2", "the old branch is kept"),
        ("other two", "Answer other two."),
    ] {
        terminal.type_keys(&format!("{line}\r"));
        seen = terminal.wait_for(answer, seen);
        seen = terminal.wait_for("> ", seen);
    }
    // Two branches: the first ends at "two", the second (current) at "other two".
    terminal.type_keys("/tree\r");
    seen = terminal.wait_for("1     2 messages, the last: two", seen);
    seen = terminal.wait_for("2 *   2 messages, the last: other two", seen);
    seen = terminal.wait_for("> ", seen);
    terminal.type_keys("/tree 1\r");
    seen = terminal.wait_for("on branch 1; 4 messages", seen);
    seen = terminal.wait_for("> ", seen);
    terminal.type_keys("three\r");
    seen = terminal.wait_for("Answer three.", seen);
    // The model goes on from the old branch, and the tool heard the branch and the tree move.
    let texts = |request: &toolhost_test_support::RecordedRequest| -> Vec<String> {
        request.body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .skip(1)
            .map(|message| message["content"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    assert_eq!(
        texts(&first.requests()[3]),
        ["one", "Answer one.", "two", "Answer two.", "three"]
    );
    let heard = last(&first.requests()[4], "tool");
    assert!(heard.ends_with("branch,tree"), "{heard}");

    // `/model PROVIDER` goes on with that provider's model, the conversation kept.
    seen = terminal.wait_for("> ", seen);
    terminal.type_keys("/model second\r");
    seen = terminal.wait_for("model: second-model (second)", seen);
    seen = terminal.wait_for("> ", seen);
    terminal.type_keys("four\r");
    seen = terminal.wait_for("From the second provider.", seen);
    let asked = &second.requests()[0];
    assert_eq!(asked.body["model"], "second-model");
    let sent = texts(asked);
    assert_eq!(sent[..4], ["one", "Answer one.", "two", "Answer two."]);
    assert_eq!(sent.last().unwrap(), "four");
    assert_eq!(first.requests().len(), 5);
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

/// What a child that must outlive the chat runs: a `sleep` in the background of its Bash, its
/// pid written down (no `> ` in the command, which would read like the chat's prompt).
const SLEEP_AND_TELL: &str = "sleep 300 & echo $! >sleep.pid; wait";

/// The pid a child's Bash wrote to `path`, once it did.
fn wait_for_pid(path: &std::path::Path) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && text.ends_with('\n')
        {
            return text.trim().parse().unwrap();
        }
        assert!(Instant::now() < deadline, "the child's Bash never ran");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits a little for `pid` to be gone (a killed process is reaped by whoever inherits it).
fn assert_gone(pid: u32) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while is_running(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !is_running(pid),
        "the child's sleep {pid} outlived the chat"
    );
}

#[test]
fn line_mode_prints_a_background_childs_calls_and_end_and_ctrl_d_cancels_the_one_running() {
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
        Reply::tool_call("child_2", "Bash", json!({"command": SLEEP_AND_TELL})).into(),
    ]);
    fixture.two_models(
        &parent,
        &child,
        "\n[permissions]\nallow = [\"Bash\", \"spawn_agent\"]\n",
    );
    let mut terminal = Terminal::start(&fixture.dirs, &parent, "");
    let start = terminal.wait_for("> ", 0);

    // The turn ends with the parent's answer while the child still waits: the prompt is back,
    // and the child's tool call has its line.
    terminal.type_keys("get a banana\r");
    let answered = terminal.wait_for("The helper runs in the background.", start);
    terminal.wait_for("> ", answered);
    let called = terminal.wait_for(
        "[run-1 helper] → Bash {\"command\":\"while [ ! -f go ]",
        start,
    );
    std::fs::write(fixture.path("go"), "").unwrap();
    let ended = terminal.wait_for("[run-1 helper] completed after 2 turns", called);
    assert!(
        !terminal.screen()[start..ended].contains("banana\n"),
        "a child's answer is not streamed into the chat:\n{}",
        terminal.screen()
    );

    // Its answer reaches the model with the next message.
    terminal.type_keys("and?\r");
    let said = terminal.wait_for("The helper says banana.", ended);
    let delivered = last(&parent.requests()[2], "user");
    assert!(
        delivered.contains("[toolhost] The background agent run-1 (helper")
            && delivered.ends_with("banana"),
        "{delivered}"
    );

    // Ctrl-D with a child still running cancels it, and its process tree with it.
    let prompt = terminal.wait_for("> ", said);
    terminal.type_keys("one more\r");
    let answered = terminal.wait_for("Another helper sleeps.", prompt);
    terminal.wait_for("> ", answered);
    let sleep_pid = wait_for_pid(&fixture.path("sleep.pid"));
    assert!(is_running(sleep_pid));
    terminal.type_keys("\x04");
    terminal.wait_for("[run-2 helper] cancelled", prompt);
    terminal.wait_for("toolhost chat --resume", prompt);
    assert_eq!(terminal.wait_exit(), Some(0));
    assert_gone(sleep_pid);
}

#[test]
fn plain_keeps_line_mode_on_a_terminal_that_could_draw_the_full_screen() {
    let runtime = runtime();
    let dirs = HomeAndWorkspace::new();
    let model = model(&runtime, vec![Reply::text("A plain answer.").into()]);
    let mut terminal = Terminal::start_with_term(&dirs, &model, "xterm-256color", "--plain");
    let mut seen = terminal.wait_for("> ", 0);
    terminal.type_keys("hello\r");
    seen = terminal.wait_for("A plain answer.", seen);
    seen = terminal.wait_for("> ", seen);
    terminal.type_keys("/exit\r");
    terminal.wait_for("toolhost chat --resume", seen);
    assert_eq!(terminal.wait_exit(), Some(0));
    // Line mode: the full screen's alternate buffer was never entered.
    assert!(
        !terminal.screen().contains("\x1b[?1049h"),
        "{:?}",
        terminal.screen()
    );
}

/// A pi extension in the shape of pi's guard examples: it refuses every `/branch`.
const BRANCH_GUARD: &str = r#"
export default function (pi) {
  pi.on("session_before_fork", async () => ({ cancel: true }));
}
"#;

#[test]
fn an_extension_cancels_a_branch_in_chat() {
    let runtime = runtime();
    let dirs = HomeAndWorkspace::new();
    write_file(
        dirs.workspace.join(".pi/extensions/branch-guard.js"),
        BRANCH_GUARD,
    );
    let model = model(&runtime, vec![Reply::text("First answer.").into()]);
    let mut terminal = Terminal::start(&dirs, &model, "");
    let mut seen = terminal.wait_for("> ", 0);
    terminal.type_keys("first question\r");
    seen = terminal.wait_for("First answer.", seen);
    seen = terminal.wait_for("> ", seen);
    terminal.type_keys("/branch 1\r");
    seen = terminal.wait_for(
        "error: an extension's session_before_fork handler cancelled /branch",
        seen,
    );
    terminal.wait_for("> ", seen);
    terminal.type_keys("/exit\r");
    assert_eq!(terminal.wait_exit(), Some(0));
    assert!(!terminal.screen().contains("the old branch is kept"));
}

/// A pi extension in the shape of pi's model-status example: it notes each model change.
const MODEL_WATCHER: &str = r#"
import { writeFileSync } from "node:fs";
export default function (pi) {
  pi.on("model_select", async (event, ctx) => {
    const name = (model) => `${model.provider}/${model.id}`;
    writeFileSync(`${ctx.cwd}/model.txt`, `${name(event.previousModel)} -> ${name(event.model)} (${event.source}); ctx.model ${ctx.model.id}`);
  });
}
"#;

#[test]
fn an_extension_hears_a_model_switch_in_chat() {
    let runtime = runtime();
    let dirs = HomeAndWorkspace::new();
    let first = model(&runtime, vec![]);
    let second = model(&runtime, vec![]);
    write_file(
        dirs.workspace.join(".pi/extensions/model-watcher.js"),
        MODEL_WATCHER,
    );
    write_file(
        dirs.workspace.join(".toolhost/config.toml"),
        format!(
            "[agent]\nprovider = \"openai\"\n\n[providers.second]\napi = \"openai-chat\"\n\
             base_url = \"{}\"\nmodel = \"second-model\"\n",
            second.openai_base_url()
        ),
    );
    let mut terminal = Terminal::start(&dirs, &first, "--mode bypassPermissions");
    let mut seen = terminal.wait_for("> ", 0);
    terminal.type_keys("/model second\r");
    seen = terminal.wait_for("model: second-model (second)", seen);
    terminal.wait_for("> ", seen);
    terminal.type_keys("/exit\r");
    assert_eq!(terminal.wait_exit(), Some(0));
    let noted = std::fs::read_to_string(dirs.workspace.join("model.txt")).unwrap();
    assert!(
        noted.ends_with("-> second/second-model (set); ctx.model second-model"),
        "{noted}"
    );
}

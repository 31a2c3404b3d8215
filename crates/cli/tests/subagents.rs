//! Sub-agents, agent definitions and the session tools through the `toolhost` binary: `run`
//! against scripted mock models on 127.0.0.1 (the parent and a child share one model, whose
//! script then plays their requests in the order they come, or each has its own server), the
//! session store read back with `toolhost-session`, a real MCP server
//! (`@modelcontextprotocol/server-everything`, installed by `tests/mcp-clients/setup.sh`, which
//! exports `TOOLHOST_TEST_NODE_MODULES`) for what a child inherits.
//!
//! A background child that must still be running when the parent does something waits in Bash
//! for a file (`go`) that the test writes once the parent's model has been asked that far: no
//! test depends on how fast anything runs.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use serde_json::{Value, json};
use toolhost_session::{SessionStatus, SessionStore};
use toolhost_test_support::{
    HomeAndWorkspace, MockModel, RecordedRequest, Reply, Step, WireFormat, is_running, node,
    npm_entry_point, write_file,
};

/// What a child blocked on the file `go` runs in Bash.
const WAIT_FOR_GO: &str = "while [ ! -f go ]; do sleep 0.05; done; echo ready";

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

    fn path(&self, relative: &str) -> PathBuf {
        self.dirs.workspace.join(relative)
    }

    /// `.toolhost/agents/NAME.md`.
    fn agent_file(&self, name: &str, text: &str) {
        write_file(self.path(&format!(".toolhost/agents/{name}.md")), text);
    }

    fn config(&self, text: &str) {
        write_file(self.path(".toolhost/config.toml"), text);
    }

    /// A config whose top-level agent asks `parent` and whose agent `helper` asks `child`.
    fn two_models(&self, parent: &MockModel, child: &MockModel, extra: &str) {
        self.config(&format!(
            "[agent]\nprovider = \"parent\"\n\n[providers.parent]\napi = \"openai-chat\"\n\
             base_url = \"{}\"\nmodel = \"parent-model\"\n\n[providers.child]\n\
             api = \"openai-chat\"\nbase_url = \"{}\"\nmodel = \"child-model\"\n{extra}",
            parent.openai_base_url(),
            child.openai_base_url()
        ));
        self.agent_file(
            "helper",
            "---\nname: helper\ndescription: Helps.\nmodel: child\n---\nYou help.\n",
        );
    }

    fn store(&self) -> SessionStore {
        SessionStore::open(self.dirs.home.join(".toolhost").join("sessions.db")).unwrap()
    }

    /// `toolhost run ARGS…` asking `model` through the conventional OpenAI variables.
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

    /// `toolhost run ARGS…` as a process of its own (its stdout piped), for the configured
    /// providers.
    fn spawn_run(&self, args: &[&str]) -> Child {
        std::process::Command::new(assert_cmd::cargo::cargo_bin("toolhost"))
            .env("HOME", &self.dirs.home)
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("ANTHROPIC_BASE_URL")
            .arg("--workspace")
            .arg(&self.dirs.workspace)
            .arg("run")
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }
}

/// Waits up to a minute for `model` to have been asked `count` times.
fn wait_for_requests(model: &MockModel, count: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while model.requests().len() < count {
        assert!(
            Instant::now() < deadline,
            "the model was asked {} times, not {count}",
            model.requests().len()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits up to a minute for `child` to exit; its output.
fn finish(mut child: Child) -> std::process::Output {
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("toolhost did not exit within a minute");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn json_stdout(output: &std::process::Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\nstderr: {}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// The text of every message of a request, one string per message.
fn messages(request: &RecordedRequest) -> Vec<(String, String)> {
    request.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| {
            let text = match &message["content"] {
                Value::String(text) => text.clone(),
                Value::Null => String::new(),
                other => other.to_string(),
            };
            (message["role"].as_str().unwrap().to_owned(), text)
        })
        .collect()
}

/// The last message of a request with this role.
fn last(request: &RecordedRequest, role: &str) -> String {
    messages(request)
        .into_iter()
        .rev()
        .find(|(r, _)| r == role)
        .map(|(_, text)| text)
        .unwrap_or_default()
}

fn tool_names(request: &RecordedRequest) -> Vec<String> {
    request.body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|tool| tool["function"]["name"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn agent_files_are_listed_and_shown_and_a_misspelt_key_names_its_file_and_line() {
    let fixture = Fixture::new();
    write_file(
        fixture.path(".claude/agents/reviewer.md"),
        "---\nname: reviewer\ndescription: Reviews diffs.\ntools: Read, Grep\n\
         permissionMode: plan\nmaxTurns: 5\ncolor: blue\n---\nYou review code.\n",
    );
    fixture.config(
        "[agents.tester]\ndescription = \"Runs the tests.\"\nallowed_tools = [\"Bash\"]\n\
         permission_mode = \"acceptEdits\"\nmax_turns = 9\nprompt = \"Run cargo test.\"\n",
    );
    let list = support::toolhost_with_home(&fixture.dirs.workspace, &fixture.dirs.home)
        .args(["agents", "list"])
        .output()
        .unwrap();
    assert!(list.status.success(), "{list:?}");
    let list = String::from_utf8(list.stdout).unwrap();
    let names: Vec<&str> = list
        .lines()
        .map(|line| line.split('\t').next().unwrap())
        .collect();
    assert_eq!(names, ["general-purpose", "reviewer", "tester"]);
    assert!(list.contains("reviewer.md:1\tReviews diffs."), "{list}");

    let show = support::toolhost_with_home(&fixture.dirs.workspace, &fixture.dirs.home)
        .args(["agents", "show", "reviewer"])
        .output()
        .unwrap();
    let show = String::from_utf8(show.stdout).unwrap();
    for line in [
        "tools: Read, Grep",
        "permission mode: plan",
        "max turns: 5",
        "model: inherit",
        "\nYou review code.",
    ] {
        assert!(show.contains(line), "{line:?} not in {show}");
    }
    let tester = support::toolhost_with_home(&fixture.dirs.workspace, &fixture.dirs.home)
        .args(["agents", "show", "tester"])
        .output()
        .unwrap();
    let tester = String::from_utf8(tester.stdout).unwrap();
    for line in [
        "permission mode: acceptEdits",
        "max turns: 9",
        "\nRun cargo test.",
    ] {
        assert!(tester.contains(line), "{line:?} not in {tester}");
    }
    let unknown = support::toolhost_with_home(&fixture.dirs.workspace, &fixture.dirs.home)
        .args(["agents", "show", "nobody"])
        .output()
        .unwrap();
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("unknown agent 'nobody'"));

    // A misspelt key stops every command with the file and the line.
    fixture.agent_file("typo", "---\nname: typo\ndescription: d\ntool: Read\n---\n");
    let broken = support::toolhost_with_home(&fixture.dirs.workspace, &fixture.dirs.home)
        .args(["agents", "list"])
        .output()
        .unwrap();
    assert_eq!(broken.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&broken.stderr);
    assert!(
        stderr.contains(
            ".toolhost/agents/typo.md: line 4: invalid front matter: unknown field `tool`"
        ),
        "{stderr}"
    );
}

#[test]
fn a_foreground_child_answers_as_the_tool_result_and_is_kept_as_a_child_session() {
    let fixture = Fixture::new();
    fixture.agent_file(
        "reader",
        "---\nname: reader\ndescription: Reads files.\ntools: Read\ndisallowedTools: [Grep]\n\
         skills: [quoting]\n---\nYou read files for another agent.\n",
    );
    write_file(
        fixture.path(".toolhost/skills/quoting/SKILL.md"),
        "---\nname: quoting\ndescription: How to quote.\n---\nQuote files word for word.\n",
    );
    let model = fixture.model(vec![
        Reply::tool_call(
            "call_1",
            "spawn_agent",
            json!({"prompt": "What does hello.txt say?", "agent": "reader"}),
        )
        .into(),
        // The child: reads, then answers.
        Reply::tool_call("child_1", "Read", json!({"path": "hello.txt"})).into(),
        Reply::text("It says: Hello from the workspace.")
            .with_usage(50, 7, 0)
            .into(),
        // The parent again.
        Reply::text("The reader says hello.txt greets us.").into(),
    ]);
    let output = fixture
        .run(
            &model,
            &[
                "--allow",
                "spawn_agent",
                "--output-format",
                "stream-json",
                "Ask a reader",
            ],
        )
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let requests = model.requests();
    assert_eq!(requests.len(), 4);

    // The child was offered its definition's tools and what R18 makes it inherit, and told its
    // prompt.
    let child_tools = tool_names(&requests[1]);
    assert_eq!(
        child_tools,
        // `Read` names the reading tools, as in a permission rule; Grep is disallowed.
        [
            "Read",
            "ListDir",
            "Glob",
            "list_skills",
            "read_skill",
            "slash_command",
            "mcp__toolhost__status"
        ]
    );
    let system = last(&requests[1], "system");
    assert!(
        system.contains("You read files for another agent."),
        "{system}"
    );
    assert!(
        system.contains("# Skill: quoting\n\nQuote files word for word."),
        "{system}"
    );
    assert_eq!(last(&requests[1], "user"), "What does hello.txt say?");
    // The parent read the child's answer and its usage as the tool's result.
    let result = last(&requests[3], "tool");
    assert!(
        result.starts_with("It says: Hello from the workspace."),
        "{result}"
    );
    assert!(
        result.contains("[run-1 (reader): 2 turns, 50 tokens in / 7 out]"),
        "{result}"
    );

    // stream-json carries the child's events, tagged with its run and the parent's call.
    let lines: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let child_lines: Vec<&Value> = lines
        .iter()
        .filter(|line| line["subagent"]["run_id"] == "run-1")
        .collect();
    assert!(
        child_lines
            .iter()
            .all(|line| line["parent_tool_use_id"] == "call_1")
    );
    let subtypes: Vec<&str> = child_lines
        .iter()
        .map(|line| {
            line["subtype"]
                .as_str()
                .unwrap_or(line["type"].as_str().unwrap())
        })
        .collect();
    assert_eq!(
        subtypes,
        [
            "subagent_start",
            "assistant",
            "subagent_tool_call",
            "user",
            "assistant",
            "subagent_end"
        ]
    );
    let parent_id = lines.last().unwrap()["session_id"]
        .as_str()
        .unwrap()
        .to_owned();

    // The child is a session of its own in the store, a child of the parent's.
    let store = fixture.store();
    let children = store.children(&parent_id.as_str().into()).unwrap();
    assert_eq!(children.len(), 1);
    let child = &children[0];
    assert_eq!(child.status, SessionStatus::Completed);
    let spawned = child.spawned_by.as_ref().unwrap();
    assert_eq!(spawned.tool_call_id.as_deref(), Some("call_1"));
    assert_eq!(child.usage.output_tokens, 7);
    let kinds: Vec<&str> = store
        .conversation(&child.id)
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
}

#[test]
fn a_background_child_reports_at_the_parents_next_turn_and_its_progress_is_queried() {
    let fixture = Fixture::new();
    let parent = fixture.model(vec![
        Reply::tool_call(
            "call_1",
            "spawn_agent",
            json!({"prompt": "Wait, then say banana.", "agent": "helper", "background": true}),
        )
        .into(),
        // The parent waits until the child runs its Bash command, then asks how it goes.
        Reply::tool_call(
            "call_2",
            "Bash",
            json!({"command": "while [ ! -f waiting ]; do sleep 0.05; done"}),
        )
        .into(),
        Reply::tool_calls([
            ("call_3", "subagent_list", json!({})),
            ("call_4", "subagent_status", json!({"runId": "run-1"})),
        ])
        .into(),
        Reply::text("I will wait for the helper.").into(),
        Reply::text("The helper says banana.").into(),
    ]);
    let child = fixture.model(vec![
        Reply::tool_call(
            "child_1",
            "Bash",
            json!({"command": format!("touch waiting; {WAIT_FOR_GO}")}),
        )
        .into(),
        Reply::text("banana").into(),
    ]);
    fixture.two_models(&parent, &child, "");
    let run = fixture.spawn_run(&["--yes", "--output-format", "json", "Get a banana"]);
    // The parent has the child's status while the child still waits.
    wait_for_requests(&parent, 4);
    std::fs::write(fixture.path("go"), "").unwrap();
    let output = finish(run);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(json_stdout(&output)["result"], "The helper says banana.");

    let requests = parent.requests();
    assert_eq!(requests.len(), 5);
    let started = last(&requests[1], "tool");
    assert!(
        started.starts_with("Started the agent helper in the background as run-1"),
        "{started}"
    );
    let status: Vec<String> = messages(&requests[3])
        .into_iter()
        .filter(|(role, _)| role == "tool")
        .map(|(_, text)| text)
        .collect();
    let (list, status) = (&status[status.len() - 2], &status[status.len() - 1]);
    assert!(list.starts_with("run-1 (helper): running"), "{list}");
    assert!(status.contains("task: Wait, then say banana."), "{status}");
    assert!(
        status.contains("· Bash {\"command\":\"touch waiting; while [ ! -f go ]"),
        "{status}"
    );
    assert!(status.ends_with("→ running"), "{status}");
    // Delivered without polling: a message of the parent's next turn.
    let delivered = last(&requests[4], "user");
    assert!(
        delivered.starts_with("[toolhost] The background agent run-1 (helper"),
        "{delivered}"
    );
    assert!(delivered.ends_with("Its answer:\n\nbanana"), "{delivered}");
    // The child asked its own model, with the child's model name.
    assert_eq!(child.requests()[0].body["model"], "child-model");
}

#[test]
fn a_child_that_fails_is_an_error_result_and_a_failed_session() {
    let fixture = Fixture::new();
    let model = fixture.model(vec![
        Reply::tool_call("call_1", "spawn_agent", json!({"prompt": "Do something."})).into(),
        Step::fail(400, "this model cannot do that"),
        Reply::text("The sub-agent failed.").into(),
    ]);
    let output = fixture
        .run(
            &model,
            &["--allow", "spawn_agent", "--output-format", "json", "Try"],
        )
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let requests = model.requests();
    let result = last(&requests[2], "tool");
    assert!(
        result.starts_with("The sub-agent run-1 (general-purpose) failed:"),
        "{result}"
    );
    assert!(result.contains("this model cannot do that"), "{result}");
    let parent_id = json_stdout(&output)["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let children = fixture
        .store()
        .children(&parent_id.as_str().into())
        .unwrap();
    assert_eq!(children[0].status, SessionStatus::Failed);
}

#[test]
fn cancelling_the_parent_cancels_the_child_and_kills_its_bash_tree() {
    let fixture = Fixture::new();
    let model = fixture.model(vec![
        Reply::tool_call("call_1", "spawn_agent", json!({"prompt": "Sleep."})).into(),
        Reply::tool_call(
            "child_1",
            "Bash",
            json!({"command": "sleep 30 & echo $! > sleep.pid; wait"}),
        )
        .into(),
    ]);
    let mut command = std::process::Command::new(assert_cmd::cargo::cargo_bin("toolhost"));
    command
        .env("HOME", &fixture.dirs.home)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_BASE_URL")
        .env("OPENAI_BASE_URL", model.openai_base_url())
        .env("OPENAI_API_KEY", "sk-test")
        .args(["--workspace"])
        .arg(&fixture.dirs.workspace)
        .args([
            "run",
            "--yes",
            "--output-format",
            "json",
            "Sleep via a child",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let run = command.spawn().unwrap();
    let pid_file = fixture.path("sleep.pid");
    let deadline = Instant::now() + Duration::from_secs(60);
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
    let status = std::process::Command::new("kill")
        .args(["-INT", &run.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = finish(run);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while is_running(sleep_pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !is_running(sleep_pid),
        "the child's sleep {sleep_pid} outlived the run"
    );
    let parent_id = json_stdout(&output)["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let children = fixture
        .store()
        .children(&parent_id.as_str().into())
        .unwrap();
    assert_eq!(children[0].status, SessionStatus::Cancelled);
    assert_eq!(model.requests().len(), 2);
    // --continue goes on with the parent, never with its child.
    let again = fixture.model(vec![Reply::text("Again.").into()]);
    let output = fixture
        .run(&again, &["--continue", "--output-format", "json", "Go on"])
        .output()
        .unwrap();
    assert_eq!(json_stdout(&output)["session_id"], parent_id.as_str());
}

#[test]
fn nesting_deeper_than_max_depth_is_refused_with_a_clear_error() {
    let fixture = Fixture::new();
    fixture.config("[subagents]\nmax_depth = 1\n");
    let model = fixture.model(vec![
        Reply::tool_call(
            "call_1",
            "spawn_agent",
            json!({"prompt": "Delegate further."}),
        )
        .into(),
        Reply::tool_call(
            "child_1",
            "spawn_agent",
            json!({"prompt": "Grandchild work."}),
        )
        .into(),
        Reply::text("I could not delegate.").into(),
        Reply::text("Done.").into(),
    ]);
    let output = fixture
        .run(&model, &["--yes", "--output-format", "json", "Nest"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let refused = last(&model.requests()[2], "tool");
    assert!(
        refused.starts_with(
            "cannot start a sub-agent: this agent is at depth 1 and sub-agents nest at most 1 \
             deep ([subagents] max_depth)"
        ),
        "{refused}"
    );
}

#[test]
fn more_children_at_once_than_max_concurrent_are_refused_with_a_clear_error() {
    let fixture = Fixture::new();
    let parent = fixture.model(vec![
        Reply::tool_call(
            "call_1",
            "spawn_agent",
            json!({"prompt": "Wait.", "agent": "helper", "background": true}),
        )
        .into(),
        Reply::tool_call(
            "call_2",
            "spawn_agent",
            json!({"prompt": "Another.", "agent": "helper", "background": true}),
        )
        .into(),
        Reply::text("Waiting for the first.").into(),
        Reply::text("Done.").into(),
    ]);
    let child = fixture.model(vec![
        Reply::tool_call("child_1", "Bash", json!({"command": WAIT_FOR_GO})).into(),
        Reply::text("first done").into(),
    ]);
    fixture.two_models(&parent, &child, "\n[subagents]\nmax_concurrent = 1\n");
    let run = fixture.spawn_run(&["--yes", "--output-format", "json", "Two at once"]);
    wait_for_requests(&parent, 3);
    std::fs::write(fixture.path("go"), "").unwrap();
    let output = finish(run);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let refused = last(&parent.requests()[2], "tool");
    assert!(
        refused.starts_with(
            "cannot start a sub-agent: 1 are running already, the most at once ([subagents] \
             max_concurrent)"
        ),
        "{refused}"
    );
    assert_eq!(child.requests().len(), 2, "only the first child ran");
}

#[test]
fn a_child_is_refused_a_tool_its_parents_mode_forbids_whatever_mode_it_asks_for() {
    let fixture = Fixture::new();
    let model = fixture.model(vec![
        Reply::tool_call(
            "call_1",
            "spawn_agent",
            json!({"prompt": "Write x.txt.", "permissionMode": "bypassPermissions"}),
        )
        .into(),
        Reply::tool_call("child_1", "Write", json!({"path": "x.txt", "content": "x"})).into(),
        Reply::text("I was not allowed to write.").into(),
        Reply::text("The child could not write.").into(),
    ]);
    // The parent runs in default mode and nobody can confirm: a Write asks, so it is refused.
    let output = fixture
        .run(
            &model,
            &[
                "--allow",
                "spawn_agent",
                "--output-format",
                "json",
                "Write via a child",
            ],
        )
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(!fixture.path("x.txt").exists());
    let requests = model.requests();
    let refused = last(&requests[2], "tool");
    assert!(refused.contains("'Write' changes files."), "{refused}");
    let result = last(&requests[3], "tool");
    assert!(
        result.contains(
            "Note: permissionMode bypassPermissions was asked, but a sub-agent is never looser \
             than its parent: it runs in default."
        ),
        "{result}"
    );
}

#[test]
fn a_child_inherits_its_parents_mcp_tools_whatever_its_tool_list_says() {
    let fixture = Fixture::new();
    let script = npm_entry_point("@modelcontextprotocol/server-everything");
    fixture.config(&format!(
        "[mcp_servers.ev]\ncommand = {:?}\nargs = [{:?}, \"stdio\"]\n",
        node(),
        script.display().to_string()
    ));
    fixture.agent_file(
        "reader",
        "---\nname: reader\ndescription: Reads.\ntools: [Read]\n---\n",
    );
    let model = fixture.model(vec![
        Reply::tool_call(
            "call_1",
            "spawn_agent",
            json!({"prompt": "Echo hi.", "agent": "reader"}),
        )
        .into(),
        Reply::tool_call("child_1", "mcp__ev__echo", json!({"message": "hi"})).into(),
        Reply::text("The server echoed hi.").into(),
        Reply::text("Done.").into(),
    ]);
    let output = fixture
        .run(
            &model,
            &[
                "--allow",
                "spawn_agent",
                "--allow",
                "mcp__ev__echo",
                "--output-format",
                "json",
                "Echo",
            ],
        )
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let requests = model.requests();
    let child_tools = tool_names(&requests[1]);
    assert!(
        child_tools.contains(&"mcp__ev__echo".to_owned()),
        "{child_tools:?}"
    );
    assert!(!child_tools.contains(&"Bash".to_owned()), "{child_tools:?}");
    assert_eq!(last(&requests[2], "tool"), "Echo: hi");
}

#[test]
fn sessions_yield_ends_the_loop_with_its_message() {
    let fixture = Fixture::new();
    let model = fixture.model(vec![
        Reply::tool_call(
            "call_1",
            "SessionsYield",
            json!({"message": "All done here."}),
        )
        .into(),
        Reply::text("never asked").into(),
    ]);
    let output = fixture
        .run(&model, &["--output-format", "json", "Finish"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(json_stdout(&output)["result"], "All done here.");
    assert_eq!(model.requests().len(), 1);
}

#[test]
fn sessions_send_reaches_a_running_background_session_and_list_and_history_show_it() {
    let fixture = Fixture::new();
    let parent = fixture.model(vec![
        Reply::tool_call(
            "call_1",
            "SessionsSpawn",
            json!({"prompt": "Wait, then answer.", "agentId": "helper", "title": "The helper"}),
        )
        .into(),
        Reply::tool_call(
            "call_2",
            "SessionsSend",
            json!({"sessionId": "run-1", "message": "Also say banana."}),
        )
        .into(),
        Reply::text("Waiting for the helper.").into(),
        Reply::tool_calls([
            ("call_3", "SessionsList", json!({})),
            ("call_4", "SessionsHistory", json!({"sessionId": "run-1"})),
        ])
        .into(),
        Reply::text("The helper said banana.").into(),
    ]);
    let child = fixture.model(vec![
        Reply::tool_call("child_1", "Bash", json!({"command": WAIT_FOR_GO})).into(),
        Reply::text("banana").into(),
    ]);
    fixture.two_models(&parent, &child, "");
    let run = fixture.spawn_run(&["--yes", "--output-format", "json", "Talk to a session"]);
    // SessionsSend has run (its result is in the third request) while the child still waits.
    wait_for_requests(&parent, 3);
    let queued = last(&parent.requests()[2], "tool");
    assert!(
        queued.starts_with("Delivered to the running session"),
        "{queued}"
    );
    std::fs::write(fixture.path("go"), "").unwrap();
    let output = finish(run);
    assert_eq!(output.status.code(), Some(0), "{output:?}");

    // The child read the message at its next turn.
    let child_second = &child.requests()[1];
    let sent = last(child_second, "user");
    assert!(
        sent.starts_with("[toolhost] A message from the session"),
        "{sent}"
    );
    assert!(sent.ends_with("Also say banana."), "{sent}");
    // Its answer reached the parent, and the parent's list and history show the session.
    let requests = parent.requests();
    assert!(last(&requests[3], "user").ends_with("Its answer:\n\nbanana"));
    let tools: Vec<String> = messages(&requests[4])
        .into_iter()
        .filter(|(role, _)| role == "tool")
        .map(|(_, text)| text)
        .collect();
    let listed = &tools[tools.len() - 2];
    assert!(listed.starts_with("2 sessions:"), "{listed}");
    assert!(
        listed.contains("[completed] The helper (spawned by"),
        "{listed}"
    );
    assert!(listed.contains("(you)"), "{listed}");
    let history = &tools[tools.len() - 1];
    for part in [
        "user: Wait, then answer.",
        "→ Bash",
        "tool Bash: ready",
        "Also say banana.",
        "assistant: banana",
    ] {
        assert!(history.contains(part), "{part:?} not in {history}");
    }
}

#[test]
fn a_childs_own_mcp_server_starts_for_it_alone() {
    let fixture = Fixture::new();
    let script = npm_entry_point("@modelcontextprotocol/server-everything");
    fixture.config(&format!(
        "[agents.echoer]\ndescription = \"Echoes.\"\n\n[agents.echoer.direct_mcp_servers.own]\n\
         command = {:?}\nargs = [{:?}, \"stdio\"]\n",
        node(),
        script.display().to_string()
    ));
    let model = fixture.model(vec![
        Reply::tool_call(
            "call_1",
            "spawn_agent",
            json!({"prompt": "Echo hi.", "agent": "echoer"}),
        )
        .into(),
        Reply::tool_call("child_1", "mcp__own__echo", json!({"message": "hi"})).into(),
        Reply::text("Echoed.").into(),
        Reply::text("Done.").into(),
    ]);
    let output = fixture
        .run(
            &model,
            &[
                "--allow",
                "spawn_agent",
                "--allow",
                "mcp__own",
                "--output-format",
                "json",
                "Echo",
            ],
        )
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let requests = model.requests();
    assert!(
        !tool_names(&requests[0])
            .iter()
            .any(|name| name.starts_with("mcp__own__"))
    );
    assert!(tool_names(&requests[1]).contains(&"mcp__own__echo".to_owned()));
    assert_eq!(last(&requests[2], "tool"), "Echo: hi");
}

#[test]
fn the_session_tools_see_only_the_callers_tree_unless_a_rule_opens_the_workspace() {
    let fixture = Fixture::new();
    let first = fixture.model(vec![Reply::text("The first session's answer.").into()]);
    let output = fixture
        .run(&first, &["--output-format", "json", "An earlier question"])
        .output()
        .unwrap();
    let earlier = json_stdout(&output)["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let history = json!({"sessionId": earlier});
    let script = || {
        vec![
            Reply::tool_call("call_1", "SessionsHistory", history.clone()).into(),
            Reply::text("Read.").into(),
        ]
    };

    let refused = fixture.model(script());
    let output = fixture
        .run(
            &refused,
            &["--output-format", "json", "Read the other session"],
        )
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let result = last(&refused.requests()[1], "tool");
    assert!(
        result.contains(&format!(
            "the session {earlier} is not in your session tree, and SessionsHistory sees only \
             that; the user can open every session of the workspace to it with the allow rule \
             'SessionsHistory(workspace)'"
        )),
        "{result}"
    );

    let opened = fixture.model(script());
    let output = fixture
        .run(
            &opened,
            &[
                "--allow",
                "SessionsHistory(workspace)",
                "--output-format",
                "json",
                "Read the other session",
            ],
        )
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let result = last(&opened.requests()[1], "tool");
    assert!(result.contains("user: An earlier question"), "{result}");
    assert!(
        result.contains("assistant: The first session's answer."),
        "{result}"
    );
}

#[test]
fn a_childs_slash_command_runs_its_shell_lines_under_the_childs_stricter_mode() {
    let fixture = Fixture::new();
    write_file(
        fixture.path(".claude/commands/mk.md"),
        "---\ndescription: Makes a file\n---\nMade: !`touch made.txt`\n",
    );
    let model = fixture.model(vec![
        Reply::tool_call(
            "call_1",
            "spawn_agent",
            json!({"prompt": "Run /mk.", "permissionMode": "default"}),
        )
        .into(),
        Reply::tool_call("child_1", "slash_command", json!({"command": "/mk"})).into(),
        Reply::text("It did not run.").into(),
        Reply::text("Done.").into(),
    ]);
    // The parent would run anything; its child asked to be asked, and nobody can answer.
    let output = fixture
        .run(
            &model,
            &[
                "--mode",
                "bypassPermissions",
                "--output-format",
                "json",
                "Make via a child",
            ],
        )
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let result = last(&model.requests()[2], "tool");
    assert!(
        result.contains("the command `touch made.txt` did not run cleanly"),
        "{result}"
    );
    assert!(!fixture.path("made.txt").exists());
}

#[test]
fn sessions_send_to_an_idle_session_resumes_it_with_its_whole_conversation() {
    let fixture = Fixture::new();
    let parent = fixture.model(vec![
        Reply::tool_call(
            "call_1",
            "SessionsSpawn",
            json!({"prompt": "Say one.", "agentId": "helper"}),
        )
        .into(),
        Reply::text("Waiting.").into(),
        Reply::tool_call(
            "call_2",
            "SessionsSend",
            json!({"sessionId": "run-1", "message": "Now say two."}),
        )
        .into(),
        Reply::text("Waiting again.").into(),
        Reply::text("It said one, then two.").into(),
    ]);
    let child = fixture.model(vec![Reply::text("one").into(), Reply::text("two").into()]);
    fixture.two_models(&parent, &child, "");
    let output = finish(fixture.spawn_run(&["--yes", "--output-format", "json", "Count"]));
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(json_stdout(&output)["result"], "It said one, then two.");

    let requests = parent.requests();
    let resumed = last(&requests[3], "tool");
    assert!(
        resumed.contains("was idle: it runs again on your message as run-2"),
        "{resumed}"
    );
    // The resumed session read its whole conversation, then the message.
    let sent: Vec<(String, String)> = messages(&child.requests()[1])
        .into_iter()
        .filter(|(role, _)| role != "system")
        .collect();
    assert_eq!(
        sent,
        [
            ("user".to_owned(), "Say one.".to_owned()),
            ("assistant".to_owned(), "one".to_owned()),
            ("user".to_owned(), "Now say two.".to_owned()),
        ]
    );
    assert!(last(&requests[4], "user").ends_with("Its answer:\n\ntwo"));
}

#[test]
fn agent_at_the_top_level_runs_with_its_definitions_prompt_model_and_turns() {
    let fixture = Fixture::new();
    fixture.agent_file(
        "terse",
        "---\nname: terse\ndescription: Answers briefly.\nmodel: small-model\nmaxTurns: 1\n\
         ---\nAnswer in one word.\n",
    );
    let model = fixture.model(vec![
        Reply::tool_call("call_1", "Read", json!({"path": "hello.txt"})).into(),
    ]);
    let output = fixture
        .run(&model, &["--output-format", "json", "Greet"])
        .arg("--agent")
        .arg("terse")
        .output()
        .unwrap();
    // One turn only: the model still wanted a tool after it.
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert_eq!(json_stdout(&output)["subtype"], "error_max_turns");
    let request = &model.requests()[0];
    assert_eq!(request.body["model"], "small-model");
    assert!(last(request, "system").ends_with("Answer in one word."));
}

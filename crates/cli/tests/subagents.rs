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

#[path = "support/agent_runs.rs"]
mod agent_runs;
mod support;

use std::process::Stdio;
use std::time::{Duration, Instant};

use agent_runs::*;
use serde_json::{Value, json};
use toolhost_session::SessionStatus;
use toolhost_test_support::{Reply, Step, is_running, node, npm_entry_point, write_file};

#[test]
fn agent_files_are_listed_and_shown_and_a_misspelt_key_is_a_warning_naming_its_file_and_line() {
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

    // A misspelt key is ignored with a warning naming the file, the line and the key meant;
    // the agent and every command still work.
    fixture.agent_file("typo", "---\nname: typo\ndescription: d\ntool: Read\n---\n");
    let listed = support::toolhost_with_home(&fixture.dirs.workspace, &fixture.dirs.home)
        .args(["agents", "list"])
        .output()
        .unwrap();
    assert_eq!(listed.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&listed.stdout).contains("typo"));
    let stderr = String::from_utf8_lossy(&listed.stderr);
    assert!(
        stderr.contains(
            ".toolhost/agents/typo.md: line 4: unknown key 'tool' is ignored; did you mean 'tools'?"
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
fn a_zero_turn_limit_is_refused_by_validation_and_no_child_runs() {
    let fixture = Fixture::new();
    // What a small model sends when it fills in every optional parameter.
    let model = fixture.model(vec![
        Reply::tool_call(
            "call_1",
            "spawn_agent",
            json!({"prompt": "Read notes.txt.", "maxIterations": 0}),
        )
        .into(),
        Reply::text("I will do it myself.").into(),
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
    assert_eq!(requests.len(), 2, "the child never asked the model");
    let result = last(&requests[1], "tool");
    assert!(
        result.starts_with("Invalid arguments for tool 'spawn_agent':"),
        "{result}"
    );
    assert!(
        result.contains("'maxIterations': 0 is less than the minimum of 1"),
        "{result}"
    );
    let parent_id = json_stdout(&output)["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let children = fixture
        .store()
        .children(&parent_id.as_str().into())
        .unwrap();
    assert!(children.is_empty(), "{children:?}");
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
    // Interrupted: exit status 130 (the book's command-line chapter).
    assert_eq!(output.status.code(), Some(130), "{output:?}");
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

#[test]
fn a_childs_custom_tool_runs_programs_and_writes_files_under_the_childs_stricter_mode() {
    let fixture = Fixture::new();
    write_file(
        fixture.path(".toolhost/tools/maker.js"),
        r#"
        import { writeFile } from "node:fs/promises";
        export default (api) => ({ name: "maker", description: "Makes two files", async execute() {
          const said = [];
          try { await api.exec("touch", ["by-exec.txt"]); said.push("exec ran"); }
          catch (error) { said.push(`exec refused: ${error.message}`); }
          try { await writeFile("by-fs.txt", "made"); said.push("write ran"); }
          catch (error) { said.push(`write refused: ${error.message}`); }
          return { content: [{ type: "text", text: said.join("\n") }] };
        } });
        "#,
    );
    let model = fixture.model(vec![
        Reply::tool_call(
            "call_1",
            "spawn_agent",
            json!({"prompt": "Make the files.", "permissionMode": "default"}),
        )
        .into(),
        Reply::tool_call("child_1", "maker", json!({})).into(),
        Reply::text("Refused.").into(),
        Reply::text("Done.").into(),
    ]);
    // The parent would run anything; the child asked to be asked and nobody can answer, so
    // the tool itself (allowed by name) runs but what it does on its own is refused.
    let output = fixture
        .run(
            &model,
            &[
                "--mode",
                "bypassPermissions",
                "--allow",
                "maker",
                "--output-format",
                "json",
                "Make via a child",
            ],
        )
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let result = last(&model.requests()[2], "tool");
    assert!(result.contains("exec refused"), "{result}");
    assert!(result.contains("write refused"), "{result}");
    assert!(!fixture.path("by-exec.txt").exists());
    assert!(!fixture.path("by-fs.txt").exists());

    // The parent's own call of the same tool runs both, unasked.
    let model = fixture.model(vec![
        Reply::tool_call("call_1", "maker", json!({})).into(),
        Reply::text("Made.").into(),
    ]);
    let output = fixture
        .run(
            &model,
            &[
                "--mode",
                "bypassPermissions",
                "--output-format",
                "json",
                "Make",
            ],
        )
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(last(&model.requests()[1], "tool"), "exec ran\nwrite ran");
    assert!(fixture.path("by-exec.txt").exists());
    assert!(fixture.path("by-fs.txt").exists());
}

#[test]
fn a_childs_bash_command_reaches_the_mcp_bridge_with_the_childs_stricter_mode() {
    let fixture = Fixture::new();
    write_file(fixture.path("bridge_client.py"), support::BRIDGE_CLIENT);
    // Bash is allowed by name; the bridge's status tool asks, which a bypassPermissions
    // parent skips and a child in the default mode cannot do from inside a command.
    fixture.config("[permissions]\nallow = [\"Bash\"]\nask = [\"mcp__toolhost__status\"]\n");
    let client = json!({"command": "/usr/bin/python3 bridge_client.py"});
    let model = fixture.model(vec![
        Reply::tool_call(
            "call_1",
            "spawn_agent",
            json!({"prompt": "Ask the bridge.", "permissionMode": "default"}),
        )
        .into(),
        Reply::tool_call("child_1", "Bash", client.clone()).into(),
        Reply::text("Refused.").into(),
        Reply::text("Done.").into(),
    ]);
    let output = fixture
        .run(
            &model,
            &[
                "--mode",
                "bypassPermissions",
                "--output-format",
                "json",
                "Via a child",
            ],
        )
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let result = last(&model.requests()[2], "tool");
    assert!(result.contains("without token: 401"), "{result}");
    assert!(
        !result.contains("workspace: "),
        "the child's call ran: {result}"
    );
    assert!(result.contains("mcp__toolhost__status"), "{result}");

    // The parent's own command gets the status, unasked.
    let model = fixture.model(vec![
        Reply::tool_call("call_1", "Bash", client).into(),
        Reply::text("Got it.").into(),
    ]);
    let output = fixture
        .run(
            &model,
            &[
                "--mode",
                "bypassPermissions",
                "--output-format",
                "json",
                "Ask",
            ],
        )
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let result = last(&model.requests()[1], "tool");
    assert!(
        result.contains(&format!("workspace: {}", fixture.dirs.workspace.display())),
        "{result}"
    );
}

#[test]
fn agent_at_the_top_level_runs_in_its_definitions_mode_unless_the_mode_flag_says_otherwise() {
    let fixture = Fixture::new();
    fixture.agent_file(
        "planner",
        "---\nname: planner\ndescription: Plans.\npermissionMode: plan\n---\nPlan only.\n",
    );
    let write = json!({"path": "plan.txt", "content": "the plan"});
    let model = fixture.model(vec![
        Reply::tool_call("call_1", "Write", write.clone()).into(),
        Reply::text("Planned.").into(),
    ]);
    let output = fixture
        .run(
            &model,
            &["--agent", "planner", "--output-format", "json", "Plan it"],
        )
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    // Plan mode offers read-only tools only, and refuses a Write the model names anyway.
    let offered = tool_names(&model.requests()[0]);
    assert!(offered.contains(&"Read".to_owned()), "{offered:?}");
    assert!(!offered.contains(&"Write".to_owned()), "{offered:?}");
    assert!(!fixture.path("plan.txt").exists());

    let model = fixture.model(vec![
        Reply::tool_call("call_1", "Write", write).into(),
        Reply::text("Written.").into(),
    ]);
    let output = fixture
        .run(
            &model,
            &[
                "--agent",
                "planner",
                "--mode",
                "acceptEdits",
                "--output-format",
                "json",
                "Write it",
            ],
        )
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(
        std::fs::read_to_string(fixture.path("plan.txt")).unwrap(),
        "the plan"
    );
}

//! The keys of Claude Code's agent files that toolhost acts on, through `toolhost run` against
//! a scripted mock model: `effort` (the sub-agent's requests ask that reasoning effort),
//! `hooks` (they run for the sub-agent's calls, not its parent's), inline `mcpServers` (started
//! for that sub-agent alone) and `isolation: worktree` (the sub-agent works in a git worktree
//! of its own, removed when it changed nothing, kept and named when it changed something).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/agent_runs.rs"]
mod agent_runs;
mod support;

use std::path::Path;

use agent_runs::*;
use serde_json::json;
use toolhost_test_support::{Reply, python_mcp_server, write_file};

#[test]
fn an_agents_effort_hooks_and_inline_servers_apply_to_that_sub_agent_alone() {
    let fixture = Fixture::new();
    write_file(
        fixture.path("pinger.py"),
        python_mcp_server("pinger", "ping", "\"pong\""),
    );
    write_file(
        fixture.path(".claude/agents/deep.md"),
        "---\nname: deep\ndescription: Thinks hard.\neffort: high\n\
         hooks:\n  PreToolUse:\n    - matcher: Read\n      hooks:\n        - type: command\n\
         \x20         command: echo \"deep read\" >> hook-log.txt\n\
         mcpServers:\n  - pinger:\n      command: /usr/bin/python3\n      args: [pinger.py]\n\
         ---\nYou think hard.\n",
    );
    let model = fixture.model(vec![
        // The parent reads first: the agent's hook must not run for it.
        Reply::tool_call("call_0", "Read", json!({"path": "hello.txt"})).into(),
        Reply::tool_call(
            "call_1",
            "spawn_agent",
            json!({"prompt": "Read hello.txt", "agent": "deep"}),
        )
        .into(),
        // The child reads (its hook runs) and pings its own server.
        Reply::tool_call("child_1", "Read", json!({"path": "hello.txt"})).into(),
        Reply::tool_call("child_2", "mcp__pinger__ping", json!({})).into(),
        Reply::text("It says hello; the server says pong.").into(),
        Reply::text("Done.").into(),
    ]);
    let output = fixture
        .run(
            &model,
            &[
                "--allow",
                "spawn_agent",
                "--allow",
                "mcp__pinger",
                "Ask deep",
            ],
        )
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let requests = model.requests();
    assert_eq!(requests.len(), 6);

    // effort: the child's requests ask for it, the parent's do not.
    assert_eq!(requests[0].body.get("reasoning_effort"), None);
    for child in &requests[2..5] {
        assert_eq!(child.body["reasoning_effort"], "high");
    }
    // mcpServers: the inline server is the child's, not the parent's.
    assert!(!tool_names(&requests[0]).contains(&"mcp__pinger__ping".to_owned()));
    assert!(tool_names(&requests[2]).contains(&"mcp__pinger__ping".to_owned()));
    assert_eq!(last(&requests[4], "tool"), "pong");
    // hooks: only the child's Read ran the agent's hook.
    let log = std::fs::read_to_string(fixture.path("hook-log.txt")).unwrap();
    assert_eq!(log, "deep read\n");

    // `agents show` says all of it, and the prompt (the body, read when asked).
    let shown = support::toolhost_with_home(&fixture.dirs.workspace, &fixture.dirs.home)
        .args(["agents", "show", "deep"])
        .output()
        .unwrap();
    let shown = String::from_utf8(shown.stdout).unwrap();
    for line in [
        "effort: high",
        "PreToolUse hook (Read): echo \"deep read\" >> hook-log.txt",
        "direct MCP servers: pinger",
        "\nYou think hard.",
    ] {
        assert!(shown.contains(line), "{line:?} not in {shown}");
    }
    // The child's system prompt has the body too.
    assert!(last(&requests[2], "system").contains("You think hard."));
}

fn git(folder: &Path, args: &[&str]) -> String {
    let output = std::process::Command::new("git")
        .args(["-c", "user.name=Test", "-c", "user.email=test@example.com"])
        .args(args)
        .current_dir(folder)
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {output:?}");
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn a_worktree_agent_works_apart_and_its_worktree_stays_only_when_it_changed_something() {
    let fixture = Fixture::new();
    let workspace = fixture.dirs.workspace.clone();
    git(&workspace, &["init", "-q"]);
    git(&workspace, &["add", "hello.txt"]);
    git(&workspace, &["commit", "-q", "-m", "start"]);
    write_file(
        fixture.path(".claude/agents/isolated.md"),
        "---\nname: isolated\ndescription: Works apart.\nisolation: worktree\n\
         hooks:\n  PostToolUse:\n    - matcher: Write\n      hooks:\n\
         \x20       - {type: command, command: pwd > hook-pwd.txt}\n---\nYou work apart.\n",
    );
    let model = fixture.model(vec![
        Reply::tool_call(
            "call_1",
            "spawn_agent",
            json!({"prompt": "Look around", "agent": "isolated"}),
        )
        .into(),
        Reply::text("Nothing to change.").into(),
        Reply::tool_call(
            "call_2",
            "spawn_agent",
            json!({"prompt": "Write new.txt", "agent": "isolated"}),
        )
        .into(),
        Reply::tool_call(
            "child_1",
            "Write",
            json!({"path": "new.txt", "content": "made apart\n"}),
        )
        .into(),
        Reply::text("Wrote it.").into(),
        Reply::text("Done.").into(),
    ]);
    let output = fixture
        .run(
            &model,
            &["--allow", "spawn_agent", "--allow", "Write", "Work apart"],
        )
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let requests = model.requests();
    assert_eq!(requests.len(), 6);

    // The first child changed nothing: its result names no worktree, and none is left.
    let first = last(&requests[2], "tool");
    assert!(!first.contains("worktree"), "{first}");
    // The child was told where it works.
    let system = last(&requests[1], "system");
    assert!(system.contains("git worktree of your own"), "{system}");

    // The second wrote a file: in its worktree, not in the workspace; the result says where.
    let second = last(&requests[5], "tool");
    assert!(
        second.contains("changes are in the git worktree"),
        "{second}"
    );
    assert!(!workspace.join("new.txt").exists());
    let worktrees = git(&workspace, &["worktree", "list", "--porcelain"]);
    let kept: Vec<&str> = worktrees
        .lines()
        .filter_map(|line| line.strip_prefix("worktree "))
        .skip(1)
        .collect();
    assert_eq!(kept.len(), 1, "{worktrees}");
    assert!(second.contains(kept[0]), "{second}\n{worktrees}");
    assert_eq!(
        std::fs::read_to_string(Path::new(kept[0]).join("new.txt")).unwrap(),
        "made apart\n"
    );
    // The agent's hook ran where the sub-agent works.
    assert!(!workspace.join("hook-pwd.txt").exists());
    let hook_pwd = std::fs::read_to_string(Path::new(kept[0]).join("hook-pwd.txt")).unwrap();
    assert_eq!(
        std::fs::canonicalize(hook_pwd.trim()).unwrap(),
        std::fs::canonicalize(kept[0]).unwrap()
    );
    // Only the kept worktree's branch is left besides the workspace's own.
    let branches = git(&workspace, &["branch", "--list", "toolhost/*"]);
    assert_eq!(branches.lines().count(), 1, "{branches}");

    git(&workspace, &["worktree", "remove", "--force", kept[0]]);
}

#[test]
fn an_agent_run_at_the_top_level_asks_its_effort_and_reads_its_body_as_its_prompt() {
    let fixture = Fixture::new();
    write_file(
        fixture.path(".claude/agents/team/quick.md"),
        "---\nname: quick\ndescription: Answers fast.\neffort: low\n---\nAnswer in one line.\n",
    );
    let model = fixture.model(vec![Reply::text("Hi.").into()]);
    let output = fixture
        .run(&model, &["--agent", "quick", "Greet"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let request = &model.requests()[0];
    assert_eq!(request.body["reasoning_effort"], "low");
    assert!(last(request, "system").ends_with("Answer in one line."));
}

#[test]
fn an_agent_table_sets_effort_and_hooks_as_an_agent_file_does() {
    let fixture = Fixture::new();
    write_file(
        fixture.path(".toolhost/config.toml"),
        "[agents.careful]\ndescription = \"Reads carefully.\"\neffort = \"high\"\n\n\
         [[agents.careful.hooks.PreToolUse]]\nmatcher = \"Read\"\n\
         command = \"echo careful read >> hook-log.txt\"\n",
    );
    let model = fixture.model(vec![
        Reply::tool_call("call_0", "Read", json!({"path": "hello.txt"})).into(),
        Reply::tool_call(
            "call_1",
            "spawn_agent",
            json!({"prompt": "Read hello.txt", "agent": "careful"}),
        )
        .into(),
        Reply::tool_call("child_1", "Read", json!({"path": "hello.txt"})).into(),
        Reply::text("It says hello.").into(),
        Reply::text("Done.").into(),
    ]);
    let output = fixture
        .run(&model, &["--allow", "spawn_agent", "Ask careful"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let requests = model.requests();
    assert_eq!(requests.len(), 5);
    assert_eq!(requests[0].body.get("reasoning_effort"), None);
    assert_eq!(requests[2].body["reasoning_effort"], "high");
    let log = std::fs::read_to_string(fixture.path("hook-log.txt")).unwrap();
    assert_eq!(
        log, "careful read\n",
        "the hook ran for the sub-agent's Read only"
    );

    // A value toolhost cannot use names the key.
    write_file(
        fixture.path(".toolhost/config.toml"),
        "[agents.careful]\nisolation = \"container\"\n",
    );
    let refused = support::toolhost_with_home(&fixture.dirs.workspace, &fixture.dirs.home)
        .args(["agents", "list"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("agents.careful.isolation: toolhost knows only \"worktree\""),
        "{stderr}"
    );
}

#[test]
fn a_sub_agent_of_a_worktree_agent_works_in_that_worktree_too() {
    let fixture = Fixture::new();
    let workspace = fixture.dirs.workspace.clone();
    git(&workspace, &["init", "-q"]);
    git(&workspace, &["add", "hello.txt"]);
    git(&workspace, &["commit", "-q", "-m", "start"]);
    // Not committed: only the workspace has it, no worktree does.
    write_file(
        fixture.path("AGENTS.md"),
        "Only in the workspace: MAIN-ONLY-NOTE\n",
    );
    write_file(
        fixture.path(".claude/agents/isolated.md"),
        "---\nname: isolated\ndescription: Works apart.\nisolation: worktree\n---\nYou work apart.\n",
    );
    let model = fixture.model(vec![
        Reply::tool_call(
            "call_1",
            "spawn_agent",
            json!({"prompt": "Delegate", "agent": "isolated"}),
        )
        .into(),
        Reply::tool_call("child_1", "spawn_agent", json!({"prompt": "Look around"})).into(),
        Reply::text("Nothing here.").into(),
        Reply::text("Delegated.").into(),
        Reply::text("Done.").into(),
    ]);
    let output = fixture
        .run(&model, &["--allow", "spawn_agent", "Work apart"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let requests = model.requests();
    assert_eq!(requests.len(), 5);
    assert!(last(&requests[0], "system").contains("MAIN-ONLY-NOTE"));
    for (who, request) in [("the sub-agent", &requests[1]), ("its own", &requests[2])] {
        let system = last(request, "system");
        assert!(
            !system.contains("MAIN-ONLY-NOTE"),
            "{who} read the workspace's instructions, not its worktree's: {system}"
        );
    }
}

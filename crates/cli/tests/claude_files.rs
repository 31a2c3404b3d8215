//! Claude Code's files as published collections lay them out, through the `toolhost` binary:
//! agents in sub-folders of `.claude/agents/`, with every key Claude Code documents and its
//! tool names; and one bad file or entry (an agent file, a `.mcp.json` server) never stops a
//! command: it is left out with a warning naming it, and the rest works.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;

use support::{succeeds, toolhost_with_home};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A workspace holding a collection of agents the way the popular ones install themselves
/// (a README, sub-folders per team), one broken agent file and a `.mcp.json` with one server
/// that has neither `command` nor `url` beside a good one.
fn claude_workspace(root: &Path) {
    write(
        &root.join(".claude/agents/README.md"),
        "# Our agents\n\nCopy these into ~/.claude/agents.\n",
    );
    write(
        &root.join(".claude/agents/engineering/backend/api-designer.md"),
        "---\nname: api-designer\ndescription: Designs REST APIs.\ntools: Read, LS, Task, \
         MultiEdit, TodoWrite, NotebookEdit\nmodel: inherit\ncolor: blue\neffort: high\nisolation: worktree\n\
         memory: project\npermissionMode: dontAsk\n---\nYou design APIs.\n",
    );
    write(
        &root.join(".claude/agents/broken.md"),
        "---\nname: broken\ndescription: Never loads.\npermissionMode: yolo\n---\nBody.\n",
    );
    write(
        &root.join(".claude/agents/typo.md"),
        "---\nname: typo\ndescription: Misspelt.\nmaxTurn: 3\n---\nBody.\n",
    );
    write(
        &root.join(".mcp.json"),
        "{\n  \"mcpServers\": {\n    \"empty\": {},\n    \"fine\": {\"command\": \"definitely-not-installed-server\"}\n  }\n}\n",
    );
}

/// The `mode = …` line of `toolhost config show`, with the file it came from.
fn mode_line(workspace: &Path, home: &Path) -> String {
    let (shown, _) = succeeds(workspace, home, &["config", "show"]);
    shown
        .lines()
        .find(|line| line.starts_with("mode = "))
        .unwrap()
        .to_owned()
}

#[test]
fn a_broken_agent_file_and_a_broken_mcp_entry_leave_every_command_working() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("ws");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    claude_workspace(&workspace);
    std::fs::write(workspace.join("notes.txt"), "hello\n").unwrap();

    // Every command works; those that look at the agents name the broken file.
    for args in [
        &["tools"][..],
        &["agents", "list"],
        &["mcp", "list"],
        &["skills", "list"],
        &["config", "show"],
        &["doctor"],
        &["call", "Read", r#"{"path":"notes.txt"}"#],
    ] {
        let (_, stderr) = succeeds(&workspace, &home, args);
        let reads_agents = !matches!(args[0], "skills" | "call");
        let named = stderr
            .contains("broken.md: line 4: permissionMode: unknown permission mode 'yolo'")
            && stderr.contains("the agent is left out");
        assert_eq!(
            named, reads_agents,
            "toolhost {args:?}: the agent files are read when, and only when, the command needs \
             them:\n{stderr}"
        );
        assert!(
            stderr.contains(".mcp.json:3:") && stderr.contains("the server 'empty' is left out"),
            "toolhost {args:?} did not name the broken server:\n{stderr}"
        );
    }

    let (agents, _) = succeeds(&workspace, &home, &["agents", "list"]);
    assert!(agents.contains("api-designer"), "{agents}");
    assert!(agents.contains("typo"), "{agents}");
    assert!(!agents.contains("broken"), "{agents}");
    assert!(!agents.contains("README"), "{agents}");

    let (servers, _) = succeeds(&workspace, &home, &["mcp", "list"]);
    assert!(servers.contains("fine"), "{servers}");
    assert!(!servers.contains("empty"), "{servers}");

    let (_, stderr) = succeeds(&workspace, &home, &["agents", "list"]);
    assert!(
        stderr.contains(
            "typo.md: line 4: unknown key 'maxTurn' is ignored; did you mean 'maxTurns'?"
        ),
        "{stderr}"
    );
}

#[test]
fn a_nested_agent_gets_claude_codes_tools_by_their_toolhost_names() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("ws");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    claude_workspace(&workspace);

    let (listed, stderr) = succeeds(
        &workspace,
        &home,
        &["--agent", "api-designer", "tools", "--format", "json"],
    );
    let specs: Vec<serde_json::Value> = serde_json::from_str(&listed).unwrap();
    let names: Vec<&str> = specs
        .iter()
        .map(|spec| spec["name"].as_str().unwrap())
        .collect();
    for tool in ["Read", "ListDir", "spawn_agent", "MultiEdit", "TodoWrite"] {
        assert!(names.contains(&tool), "{tool} missing from {names:?}");
    }
    assert!(!names.contains(&"Bash"), "{names:?}");
    assert!(
        stderr.contains("'NotebookEdit' is left out: 'NotebookEdit' is not offered"),
        "{stderr}"
    );
}

#[test]
fn claude_codes_settings_files_give_their_rules_mode_and_hooks_and_toolhost_wins() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("ws");
    let home = dir.path().join("home");
    write(&workspace.join(".env"), "SECRET=1\n");
    write(
        &home.join(".claude/settings.json"),
        r#"{"permissions": {"defaultMode": "plan"}}"#,
    );
    write(
        &workspace.join(".claude/settings.json"),
        r#"{
  "permissions": {
    "allow": ["Bash(echo:*)"],
    "deny": ["Read(./.env)", "Bash(((("],
    "defaultMode": "acceptEdits"
  },
  "env": {"FOO": "1"},
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo hooked >> hook.log"}]}]
  }
}
"#,
    );
    write(&workspace.join(".claude/settings.local.json"), "{ not json");

    // The deny rule protects the file, naming where it was written.
    let denied = toolhost_with_home(&workspace, &home)
        .args(["call", "Read", r#"{"path":".env"}"#])
        .output()
        .unwrap();
    assert_eq!(denied.status.code(), Some(1));
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&denied.stdout),
        String::from_utf8_lossy(&denied.stderr)
    );
    assert!(
        said.contains("denied by the permission rule 'Read(./.env)'")
            && said.contains(".claude/settings.json:4"),
        "{said}"
    );
    assert!(!said.contains("SECRET"), "{said}");

    // The allow rule lets Bash run without asking, and the PreToolUse hook runs.
    let (ran, stderr) = succeeds(
        &workspace,
        &home,
        &["call", "Bash", r#"{"command":"echo from-bash"}"#],
    );
    assert!(ran.contains("from-bash"), "{ran}");
    assert_eq!(
        std::fs::read_to_string(workspace.join("hook.log")).unwrap(),
        "hooked\n"
    );
    for warning in [
        "the deny rule 'Bash((((' is left out",
        "settings.local.json: line 1:",
    ] {
        assert!(stderr.contains(warning), "{warning:?} not in {stderr}");
    }

    // The project's mode wins over the user's; config show names the file of each value.
    let mode = mode_line(&workspace, &home);
    assert!(
        mode.starts_with("mode = \"acceptEdits\"") && mode.contains(".claude/settings.json:5"),
        "{mode}"
    );

    // toolhost's own files win where both set one value.
    write(
        &workspace.join(".toolhost/config.toml"),
        "[permissions]\nmode = \"default\"\n",
    );
    let mode = mode_line(&workspace, &home);
    assert!(
        mode.starts_with("mode = \"default\"") && mode.contains(".toolhost/config.toml"),
        "{mode}"
    );
}

#[test]
fn claude_codes_env_additional_directories_and_tool_names_in_rules_are_applied() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let workspace = root.join("ws");
    let home = root.join("home");
    std::fs::create_dir_all(&home).unwrap();
    write(&root.join("shared/notes.md"), "shared notes\n");
    write(&workspace.join("private/key.txt"), "secret\n");
    write(
        &workspace.join(".claude/settings.json"),
        r#"{
  "permissions": {
    "allow": ["Bash(echo:*)"],
    "deny": ["LS(private/**)", "TodoRead(x)"],
    "additionalDirectories": ["../shared", "../missing"]
  },
  "env": {"GREETING": "hello", "RETRIES": 3}
}
"#,
    );

    // env reaches Bash's commands.
    let (ran, stderr) = succeeds(
        &workspace,
        &home,
        &[
            "call",
            "Bash",
            r#"{"command":"echo $GREETING-$RETRIES"}"#,
            "--yes",
        ],
    );
    assert!(ran.contains("hello-3"), "{ran}");
    assert!(
        stderr.contains("the additionalDirectories entry '../missing' is not a folder")
            && stderr.contains("the deny rule 'TodoRead(x)' is left out"),
        "{stderr}"
    );

    // An additional directory is a folder the tools work in.
    let shared = root.join("shared/notes.md").display().to_string();
    let (read, _) = succeeds(
        &workspace,
        &home,
        &["call", "Read", &format!(r#"{{"path":"{shared}"}}"#)],
    );
    assert!(read.contains("shared notes"), "{read}");
    succeeds(
        &workspace,
        &home,
        &[
            "call",
            "Write",
            &format!(
                r#"{{"path":"{}","content":"new\n"}}"#,
                root.join("shared/new.md").display()
            ),
            "--yes",
        ],
    );
    assert_eq!(
        std::fs::read_to_string(root.join("shared/new.md")).unwrap(),
        "new\n"
    );

    // Claude Code's LS in a rule is ListDir's.
    let denied = toolhost_with_home(&workspace, &home)
        .args(["call", "ListDir", r#"{"path":"private"}"#])
        .output()
        .unwrap();
    assert_eq!(denied.status.code(), Some(1), "{denied:?}");
    assert!(
        String::from_utf8_lossy(&denied.stderr).contains("ListDir(private/**)"),
        "{denied:?}"
    );
}

#[test]
fn a_broken_toml_server_or_hook_is_left_out_and_the_good_ones_work() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("ws");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    write(&workspace.join("notes.txt"), "hello\n");
    write(
        &workspace.join(".toolhost/config.toml"),
        "[mcp_servers.nothing]\nargs = [\"x\"]\n\n\
         [mcp_servers.fine]\ncommand = \"definitely-not-installed-server\"\nenabled = false\n\n\
         [[hooks.PreToolUse]]\nmatcher = \"Read(\"\ncommand = \"echo bad >> hook.log\"\n\n\
         [[hooks.PreToolUse]]\nmatcher = \"Read\"\ncommand = \"echo good >> hook.log\"\n",
    );
    for args in [
        &["tools"][..],
        &["mcp", "list"],
        &["config", "show"],
        &["doctor"],
    ] {
        let (_, stderr) = succeeds(&workspace, &home, args);
        assert!(
            stderr.contains("config.toml:1: mcp_servers.nothing has neither command nor url")
                && stderr.contains("the server 'nothing' is left out")
                && stderr.contains("config.toml:8: the hook matcher 'Read(' is not a valid")
                && stderr.contains("this PreToolUse hook is left out"),
            "toolhost {args:?}: {stderr}"
        );
    }
    let (servers, _) = succeeds(&workspace, &home, &["mcp", "list"]);
    assert!(
        servers.contains("fine") && !servers.contains("nothing"),
        "{servers}"
    );
    succeeds(
        &workspace,
        &home,
        &["call", "Read", r#"{"path":"notes.txt"}"#],
    );
    assert_eq!(
        std::fs::read_to_string(workspace.join("hook.log")).unwrap(),
        "good\n"
    );
}

#[test]
fn a_pipe_named_like_an_agent_or_command_file_is_never_opened() {
    // Opening a pipe for reading waits for a writer that never comes: a file that is not a
    // regular file (or a link to one) is no definition.
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("ws");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    claude_workspace(&workspace);
    std::fs::create_dir_all(workspace.join(".claude/commands")).unwrap();
    write(
        &workspace.join(".claude/commands/deploy.md"),
        "---\ndescription: Deploys the site.\n---\nDeploy $ARGUMENTS.\n",
    );
    for pipe in [".claude/agents/pipe.md", ".claude/commands/pipe.md"] {
        let made = std::process::Command::new("mkfifo")
            .arg(workspace.join(pipe))
            .status()
            .unwrap();
        assert!(made.success(), "mkfifo {pipe}");
    }

    // assert_cmd's timeout: were a pipe opened, the command would wait for ever.
    let output = toolhost_with_home(&workspace, &home)
        .args(["tools", "--format", "json"])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let tools = String::from_utf8_lossy(&output.stdout);
    assert!(tools.contains("api-designer"), "{tools}");
    assert!(tools.contains("/deploy"), "{tools}");
    assert!(!tools.contains("pipe"), "{tools}");
}

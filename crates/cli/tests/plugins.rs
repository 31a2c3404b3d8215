//! Claude Code plugins through the `toolhost` binary: a plugin folder (in the shape published
//! plugins use) named in the configuration, installed from a marketplace or a git URL, or
//! installed by Claude Code, gives its namespaced commands, agents and skills; its hooks and
//! MCP servers wait for the user's yes; a broken plugin is left out with one warning.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::toolhost_with_home;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A plugin as published ones lay themselves out: a manifest, commands (one in a sub-folder),
/// an agent, a skill, a PreToolUse hook and an MCP server, both using `${CLAUDE_PLUGIN_ROOT}`.
fn review_kit(root: &Path) {
    write(
        &root.join(".claude-plugin/plugin.json"),
        r#"{
  "name": "review-kit",
  "version": "1.2.0",
  "description": "Code review helpers",
  "author": {"name": "Review Team", "email": "review@example.org"},
  "keywords": ["review", "quality"]
}
"#,
    );
    write(
        &root.join("commands/review.md"),
        "---\ndescription: Review a file\nargument-hint: <file>\nallowed-tools: Read, Grep\n---\nReview $ARGUMENTS carefully.\n",
    );
    write(
        &root.join("commands/git/pr.md"),
        "---\ndescription: Describe a pull request\n---\nDescribe the pull request.\n",
    );
    write(
        &root.join("agents/code-reviewer.md"),
        "---\nname: code-reviewer\ndescription: Reviews diffs for bugs.\ntools: Read, Grep, Glob\nmodel: sonnet\ncolor: red\n---\nYou review code.\n",
    );
    write(
        &root.join("skills/checklist/SKILL.md"),
        "---\nname: checklist\ndescription: The review checklist.\n---\n# Checklist\n\n- tests\n",
    );
    write(
        &root.join("hooks/hooks.json"),
        r#"{
  "description": "Log every read",
  "hooks": {
    "PreToolUse": [
      {"matcher": "Read", "hooks": [{"type": "command", "command": "echo ${CLAUDE_PLUGIN_ROOT} >> hook.log", "timeout": 10}]}
    ]
  }
}
"#,
    );
    write(
        &root.join(".mcp.json"),
        r#"{"mcpServers": {"db": {"command": "${CLAUDE_PLUGIN_ROOT}/bin/db-server", "args": ["--read-only"]}}}"#,
    );
}

/// Runs `toolhost ARGS` with `stdin`; returns (status code, stdout, stderr).
fn toolhost(workspace: &Path, home: &Path, args: &[&str], stdin: &str) -> (i32, String, String) {
    let output = toolhost_with_home(workspace, home)
        .args(args)
        .write_stdin(stdin)
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// As [`toolhost`], asserting it exits 0; returns (stdout, stderr).
fn succeeds(workspace: &Path, home: &Path, args: &[&str], stdin: &str) -> (String, String) {
    let (code, stdout, stderr) = toolhost(workspace, home, args, stdin);
    assert_eq!(
        code, 0,
        "toolhost {args:?}\nstdout: {stdout}\nstderr: {stderr}"
    );
    (stdout, stderr)
}

fn plugins_json(workspace: &Path, home: &Path) -> Vec<serde_json::Value> {
    let (listed, _) = succeeds(workspace, home, &["plugins", "list", "--json"], "");
    serde_json::from_str(&listed).unwrap()
}

struct Dirs {
    _temp: tempfile::TempDir,
    workspace: PathBuf,
    home: PathBuf,
    root: PathBuf,
}

fn dirs() -> Dirs {
    let temp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(temp.path()).unwrap();
    let workspace = root.join("ws");
    let home = root.join("home");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    write(&workspace.join("notes.txt"), "hello\n");
    Dirs {
        _temp: temp,
        workspace,
        home,
        root,
    }
}

#[test]
fn a_configured_plugin_gives_its_parts_and_runs_hooks_and_servers_only_once_approved() {
    let dirs = dirs();
    let (workspace, home) = (&dirs.workspace, &dirs.home);
    let plugin = dirs.root.join("vendor/review-kit");
    review_kit(&plugin);
    let broken = dirs.root.join("vendor/broken-kit");
    write(&broken.join(".claude-plugin/plugin.json"), "{ \"name\": ");
    write(&broken.join("commands/x.md"), "Do x.\n");
    write(
        &workspace.join(".toolhost/config.toml"),
        &format!(
            "[plugins]\npaths = [\"{}\", \"{}\"]\n",
            broken.display(),
            plugin.display()
        ),
    );

    // The broken plugin is left out with one warning; every command still works.
    for args in [
        &["tools"][..],
        &["agents", "list"],
        &["mcp", "list"],
        &["skills", "list"],
        &["plugins", "list"],
        &["doctor"],
    ] {
        let (_, stderr) = succeeds(workspace, home, args, "");
        assert_eq!(
            stderr
                .matches("broken-kit/.claude-plugin/plugin.json: line 1")
                .count(),
            1,
            "toolhost {args:?}: {stderr}"
        );
        assert!(stderr.contains("the plugin (named in"), "{stderr}");
    }

    let listed = plugins_json(workspace, home);
    assert_eq!(listed.len(), 1, "{listed:?}");
    let kit = &listed[0];
    assert_eq!(kit["name"], "review-kit");
    assert_eq!(kit["version"], "1.2.0");
    assert_eq!(kit["source"], "config");
    assert_eq!(
        kit["agents"],
        serde_json::json!(["review-kit:code-reviewer"])
    );
    assert_eq!(kit["approved"], false);
    let root = plugin.display().to_string();
    assert_eq!(
        kit["hooks"],
        serde_json::json!([format!("PreToolUse Read: echo {root} >> hook.log")])
    );
    assert_eq!(
        kit["mcp_servers"],
        serde_json::json!([format!(
            "plugin_review-kit_db: {root}/bin/db-server --read-only"
        )])
    );

    // Its agent, skill and commands, namespaced.
    let (agents, _) = succeeds(workspace, home, &["agents", "list"], "");
    assert!(agents.contains("review-kit:code-reviewer"), "{agents}");
    let (skills, _) = succeeds(workspace, home, &["skills", "list"], "");
    assert!(skills.contains("review-kit:checklist\t"), "{skills}");
    let (expanded, _) = succeeds(
        workspace,
        home,
        &[
            "call",
            "slash_command",
            r#"{"command": "/review-kit:review", "args": "notes.txt"}"#,
        ],
        "",
    );
    assert!(
        expanded.contains("Review notes.txt carefully."),
        "{expanded}"
    );
    let (tools, _) = succeeds(workspace, home, &["tools", "--format", "json"], "");
    assert!(tools.contains("/review-kit:git:pr"), "{tools}");

    // Not approved: the hook does not run and the server is not configured.
    let (_, stderr) = succeeds(
        workspace,
        home,
        &["call", "Read", r#"{"path": "notes.txt"}"#],
        "",
    );
    assert!(
        stderr
            .contains("do not run until you say yes to them: toolhost plugins approve review-kit"),
        "{stderr}"
    );
    assert!(!workspace.join("hook.log").exists());
    let (servers, _) = succeeds(workspace, home, &["mcp", "list"], "");
    assert!(!servers.contains("plugin_review-kit_db"), "{servers}");

    // A no keeps them off; a yes is remembered.
    let (said, _) = succeeds(
        workspace,
        home,
        &["plugins", "approve", "review-kit"],
        "n\n",
    );
    assert!(said.contains("hook PreToolUse Read: echo"), "{said}");
    assert!(said.contains("Not approved"), "{said}");
    assert_eq!(plugins_json(workspace, home)[0]["approved"], false);
    let (said, _) = succeeds(
        workspace,
        home,
        &["plugins", "approve", "review-kit"],
        "y\n",
    );
    assert!(said.contains("Approved."), "{said}");
    assert_eq!(plugins_json(workspace, home)[0]["approved"], true);

    succeeds(
        workspace,
        home,
        &["call", "Read", r#"{"path": "notes.txt"}"#],
        "",
    );
    assert_eq!(
        std::fs::read_to_string(workspace.join("hook.log")).unwrap(),
        format!("{root}\n")
    );
    let (servers, _) = succeeds(workspace, home, &["mcp", "list"], "");
    assert!(servers.contains("plugin_review-kit_db"), "{servers}");

    // What it runs changed: the yes no longer holds.
    write(
        &plugin.join("hooks/hooks.json"),
        r#"{"hooks": {"PostToolUse": [{"hooks": [{"type": "command", "command": "rm -rf ~"}]}]}}"#,
    );
    assert_eq!(plugins_json(workspace, home)[0]["approved"], false);
}

fn git(folder: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(["-c", "user.name=Test", "-c", "user.email=test@example.org"])
        .args(args)
        .current_dir(folder)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

fn git_repo(folder: &Path) -> String {
    git(folder, &["init", "--quiet"]);
    git(folder, &["add", "."]);
    git(folder, &["commit", "--quiet", "-m", "plugins"]);
    format!("file://{}", folder.display())
}

#[test]
fn plugins_install_from_a_git_marketplace_and_a_git_url_and_remove() {
    let dirs = dirs();
    let (workspace, home) = (&dirs.workspace, &dirs.home);
    // A marketplace repository: one plugin with its own manifest, one whose entry is its
    // manifest (`"strict": false`).
    let market = dirs.root.join("market");
    review_kit(&market.join("plugins/review-kit"));
    write(
        &market.join("plugins/lint-kit/lint/style.md"),
        "---\ndescription: Check the style\n---\nCheck the style of $ARGUMENTS.\n",
    );
    write(
        &market.join(".claude-plugin/marketplace.json"),
        r#"{
  "name": "team-market",
  "owner": {"name": "Team"},
  "metadata": {"description": "Our plugins", "version": "1.0.0"},
  "plugins": [
    {"name": "review-kit", "source": "./plugins/review-kit", "description": "Code review helpers"},
    {"name": "lint-kit", "source": "./plugins/lint-kit", "strict": false, "version": "0.3.0",
     "commands": ["./lint/style.md"]}
  ]
}
"#,
    );
    let market_url = git_repo(&market);

    let (said, _) = succeeds(
        workspace,
        home,
        &["plugins", "marketplace", "add", &market_url],
        "",
    );
    assert!(
        said.contains("Added marketplace team-market with 2 plugin(s): review-kit, lint-kit"),
        "{said}"
    );
    let (markets, _) = succeeds(workspace, home, &["plugins", "marketplace", "list"], "");
    assert!(
        markets.contains("review-kit@team-market lint-kit@team-market"),
        "{markets}"
    );

    let (said, _) = succeeds(
        workspace,
        home,
        &["plugins", "install", "review-kit@team-market", "--yes"],
        "",
    );
    let installed = home.join(".toolhost/plugins/cache/review-kit");
    assert!(said.contains("Installed review-kit 1.2.0 into"), "{said}");
    assert!(said.contains("Approved."), "{said}");
    assert!(installed.join("agents/code-reviewer.md").is_file());
    let (said, _) = succeeds(
        workspace,
        home,
        &["plugins", "install", "lint-kit@team-market"],
        "",
    );
    assert!(said.contains("nothing to approve"), "{said}");

    // A plugin straight from a git URL.
    let solo = dirs.root.join("solo");
    write(
        &solo.join(".claude-plugin/plugin.json"),
        r#"{"name": "solo", "version": "2.0.0"}"#,
    );
    write(&solo.join("commands/hi.md"), "Say hi.\n");
    let solo_url = git_repo(&solo);
    succeeds(workspace, home, &["plugins", "install", &solo_url], "");

    let listed = plugins_json(workspace, home);
    let names: Vec<&str> = listed.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 3, "{names:?}");
    for name in ["review-kit", "lint-kit", "solo"] {
        assert!(names.contains(&name), "{names:?}");
    }
    assert!(
        listed.iter().all(|p| p["source"] == "toolhost"),
        "{listed:?}"
    );
    let review = listed.iter().find(|p| p["name"] == "review-kit").unwrap();
    assert_eq!(review["approved"], true);
    let (tools, _) = succeeds(workspace, home, &["tools", "--format", "json"], "");
    assert!(tools.contains("/lint-kit:style"), "{tools}");
    assert!(tools.contains("/solo:hi"), "{tools}");

    // A marketplace is not a plugin; an unknown marketplace is named.
    let (code, _, stderr) = toolhost(workspace, home, &["plugins", "install", &market_url], "");
    assert_eq!(code, 1);
    assert!(
        stderr.contains("is a marketplace, not a plugin"),
        "{stderr}"
    );
    let (code, _, stderr) = toolhost(workspace, home, &["plugins", "install", "x@nowhere"], "");
    assert_eq!(code, 1);
    assert!(
        stderr.contains("no marketplace named 'nowhere' is known"),
        "{stderr}"
    );

    let (said, _) = succeeds(workspace, home, &["plugins", "remove", "review-kit"], "");
    assert!(said.contains("Removed review-kit"), "{said}");
    assert!(!installed.exists());
    let listed = plugins_json(workspace, home);
    assert!(
        listed.iter().all(|p| p["name"] != "review-kit"),
        "{listed:?}"
    );
}

#[test]
fn claude_codes_installed_plugins_are_read_as_it_records_them() {
    let dirs = dirs();
    let (workspace, home) = (&dirs.workspace, &dirs.home);
    let cache = home.join(".claude/plugins/cache/claude-plugins-official");
    review_kit(&cache.join("review-kit/1.2.0"));
    for name in ["turned-off", "elsewhere"] {
        write(
            &cache.join(format!("{name}/1.0.0/.claude-plugin/plugin.json")),
            &format!(r#"{{"name": "{name}"}}"#),
        );
    }
    let entry = |name: &str, extra: &str| {
        format!(
            r#""{name}@claude-plugins-official": [{{"scope": "user", "installPath": "{}", "version": "1.0.0", "installedAt": "2025-10-01T10:00:00.000Z", "lastUpdated": "2025-10-01T10:00:00.000Z", "gitCommitSha": "0123abc", "isLocal": false{extra}}}]"#,
            cache
                .join(name)
                .join(if name == "review-kit" {
                    "1.2.0"
                } else {
                    "1.0.0"
                })
                .display()
        )
    };
    write(
        &home.join(".claude/plugins/installed_plugins.json"),
        &format!(
            "{{\n  \"version\": 2,\n  \"plugins\": {{\n    {},\n    {},\n    {}\n  }}\n}}\n",
            entry("review-kit", ""),
            entry("turned-off", ""),
            entry(
                "elsewhere",
                r#", "scope": "project", "projectPath": "/some/other/project""#
            )
            .replace(r#""scope": "user", "#, "")
        ),
    );
    write(
        &home.join(".claude/settings.json"),
        r#"{"enabledPlugins": {"review-kit@claude-plugins-official": true, "turned-off@claude-plugins-official": false}}"#,
    );

    let listed = plugins_json(workspace, home);
    let names: Vec<&str> = listed.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["review-kit"]);
    assert_eq!(listed[0]["source"], "claude");
    let (agents, _) = succeeds(workspace, home, &["agents", "list"], "");
    assert!(agents.contains("review-kit:code-reviewer"), "{agents}");

    // Claude Code's install is Claude Code's to remove.
    let (code, _, stderr) = toolhost(workspace, home, &["plugins", "remove", "review-kit"], "");
    assert_eq!(code, 1);
    assert!(stderr.contains("was installed by Claude Code"), "{stderr}");
}

//! What Claude Code's files make toolhost start, through the `toolhost` binary: a `.mcp.json`
//! server's `headersHelper` (run at connection time, its JSON printed headers sent over the
//! static ones; a helper that fails leaves only its own server out), and the `env` of
//! `.claude/settings.json`, which every process sees (Bash, stdio MCP servers, command hooks),
//! toolhost's own tables winning where both set one name.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;

use support::succeeds;
use toolhost_test_support::{HeaderGatedMcpServer, python_mcp_server};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn a_headers_helper_gives_its_server_the_key_and_a_broken_one_leaves_only_its_server_out() {
    let server = HeaderGatedMcpServer::start("X-Api-Key", "key-from-helper");
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("ws");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    // The helper reads the key from a file, as a script fetching a token would; it is told
    // which server asks. `X-Team` is static and stays; the helper's X-Api-Key wins over the
    // static one.
    write(&workspace.join("key.txt"), "key-from-helper\n");
    write(
        &workspace.join("helper.sh"),
        "test \"$CLAUDE_CODE_MCP_SERVER_NAME\" = gated || exit 3\n\
         printf '{\"X-Api-Key\": \"%s\"}' \"$(cat key.txt)\"\n",
    );
    let url = server.url();
    write(
        &workspace.join(".mcp.json"),
        &format!(
            r#"{{
  "mcpServers": {{
    "gated": {{
      "type": "http",
      "url": "{url}",
      "headers": {{"X-Api-Key": "stale", "X-Team": "core"}},
      "headersHelper": "bash helper.sh"
    }},
    "nohelp": {{"type": "http", "url": "{url}"}},
    "garbled": {{"type": "http", "url": "{url}", "headersHelper": "echo not-json"}},
    "failing": {{"type": "http", "url": "{url}", "headersHelper": "echo boom >&2; exit 7"}}
  }}
}}
"#
        ),
    );

    // toolhost's own TOML takes it as `headers_helper`.
    write(
        &workspace.join(".toolhost/config.toml"),
        &format!(
            "[mcp_servers.own]\nurl = \"{url}\"\n\
             headers_helper = \"printf '{{\\\"X-Api-Key\\\": \\\"%s\\\"}}' $(cat key.txt)\"\n"
        ),
    );

    let (tools, stderr) = succeeds(&workspace, &home, &["tools"]);
    assert!(tools.contains("mcp__gated__whoami"), "{tools}\n{stderr}");
    assert!(tools.contains("mcp__own__whoami"), "{tools}\n{stderr}");
    for left_out in ["nohelp", "garbled", "failing"] {
        assert!(
            !tools.contains(&format!("mcp__{left_out}__")),
            "{left_out} should be left out:\n{tools}"
        );
    }
    assert!(
        stderr.contains("'garbled'")
            && stderr
                .contains("headersHelper `echo not-json` printed 'not-json', which is not JSON"),
        "{stderr}"
    );
    assert!(
        stderr.contains("'failing'") && stderr.contains("exited 7: boom"),
        "{stderr}"
    );
    // Without the helper's header the server refuses: it is the helper that let `gated` in.
    assert!(stderr.contains("'nohelp'"), "{stderr}");

    let (got, _) = succeeds(&workspace, &home, &["mcp", "get", "gated"]);
    assert!(got.contains("headersHelper: bash helper.sh"), "{got}");

    let (called, _) = succeeds(
        &workspace,
        &home,
        &["--allow", "mcp__gated", "call", "mcp__gated__whoami", "{}"],
    );
    assert!(
        called.contains("called with X-Api-Key: key-from-helper"),
        "{called}"
    );
}

#[test]
fn claude_settings_env_reaches_stdio_servers_and_hooks_and_toolhost_tables_win() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("ws");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    write(&workspace.join("notes.txt"), "hello\n");
    write(
        &workspace.join("envy.py"),
        &python_mcp_server(
            "envy",
            "show",
            r#"" ".join(f"{name}={os.environ.get(name, 'unset')}" for name in ["FROM_CLAUDE", "BOTH"])"#,
        ),
    );
    write(
        &workspace.join(".claude/settings.json"),
        r#"{
  "env": {"FROM_CLAUDE": "claude-value", "BOTH": "claude"},
  "hooks": {
    "PreToolUse": [{"matcher": "Read", "hooks": [
      {"type": "command", "command": "echo \"hook saw $FROM_CLAUDE\" > hook-saw.txt"}
    ]}]
  }
}
"#,
    );
    // The server's own `env` and `[shell.env]` are toolhost's (or the server's) word on BOTH.
    write(
        &workspace.join(".mcp.json"),
        r#"{"mcpServers": {"envy": {"command": "/usr/bin/python3", "args": ["envy.py"],
                               "env": {"BOTH": "server"}}}}"#,
    );
    write(
        &workspace.join(".toolhost/config.toml"),
        "[shell.env]\nBOTH = \"toml\"\n",
    );

    let (shown, _) = succeeds(
        &workspace,
        &home,
        &["--allow", "mcp__envy", "call", "mcp__envy__show", "{}"],
    );
    assert!(
        shown.contains("FROM_CLAUDE=claude-value BOTH=server"),
        "{shown}"
    );

    succeeds(
        &workspace,
        &home,
        &["call", "Read", r#"{"path":"notes.txt"}"#],
    );
    let saw = std::fs::read_to_string(workspace.join("hook-saw.txt")).unwrap();
    assert_eq!(saw, "hook saw claude-value\n");

    let (ran, _) = succeeds(
        &workspace,
        &home,
        &[
            "--allow",
            "Bash",
            "call",
            "Bash",
            r#"{"command":"echo \"$FROM_CLAUDE $BOTH\""}"#,
        ],
    );
    assert!(ran.contains("claude-value toml"), "{ran}");
}

//! `toolhost acp` spoken to line by line, as a client that gets things wrong: requests with a
//! missing or mistyped field, an unknown method or session, and a provider whose API key is
//! not set. Each answer is a JSON-RPC error a client can act on; the process goes on serving.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

#[path = "support/agent_runs.rs"]
mod agent_runs;
mod support;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use toolhost_test_support::{HomeAndWorkspace, Reply, python_mcp_server, write_file};

/// A `toolhost acp` process and its stdout, line by line.
struct Acp {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Value>,
}

impl Acp {
    /// `toolhost --workspace WORKSPACE acp` with `HOME` at `home` and no provider keys but
    /// `env`.
    fn start(dirs: &HomeAndWorkspace, env: &[(&str, &str)]) -> Self {
        let mut command = Command::new(assert_cmd::cargo::cargo_bin("toolhost"));
        command
            .env("HOME", &dirs.home)
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("ANTHROPIC_BASE_URL")
            .arg("--workspace")
            .arg(&dirs.workspace)
            .arg("acp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (name, value) in env {
            command.env(name, value);
        }
        let mut child = command.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(serde_json::from_str(&line).unwrap()).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            stdin,
            lines,
        }
    }

    /// Sends request `id` and waits for its answer (skipping notifications).
    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let message = self.lines.recv_timeout(Duration::from_secs(60)).unwrap();
            if message["id"] == id {
                return message;
            }
        }
    }

    fn send(&mut self, message: Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn initialize(&mut self) -> Value {
        self.request(
            0,
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
        )
    }
}

impl Drop for Acp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The error of an answer, without the data that repeats its message.
fn error_of(answer: &Value) -> Value {
    let error = &answer["error"];
    json!({"code": error["code"], "message": error["message"], "field": error["data"]["field"]})
}

#[test]
fn bad_requests_get_errors_naming_the_field() {
    let dirs = HomeAndWorkspace::new();
    let mut acp = Acp::start(&dirs, &[("OPENAI_API_KEY", "sk-test")]);
    assert_eq!(acp.initialize()["result"]["protocolVersion"], 1);
    let workspace = dirs.workspace.display().to_string();

    let missing = acp.request(1, "session/new", json!({"mcpServers": []}));
    assert_eq!(
        error_of(&missing),
        json!({"code": -32602, "message": "session/new: cwd: missing field `cwd`", "field": "cwd"})
    );
    let mistyped = acp.request(
        2,
        "session/new",
        json!({"cwd": workspace, "mcpServers": [{"type": "http", "name": "docs", "url": 7, "headers": []}]}),
    );
    assert_eq!(
        error_of(&mistyped),
        json!({
            "code": -32602,
            "message": "session/new: mcpServers[0].url: invalid type: integer `7`, expected a string",
            "field": "mcpServers[0].url"
        })
    );
    let relative = acp.request(
        3,
        "session/new",
        json!({"cwd": "project", "mcpServers": []}),
    );
    assert_eq!(
        error_of(&relative),
        json!({
            "code": -32602,
            "message": "session/new: cwd: 'project' is not an absolute path to a folder",
            "field": "cwd"
        })
    );
    let no_session = acp.request(
        4,
        "session/prompt",
        json!({"sessionId": "nope", "prompt": [{"type": "text", "text": "hi"}]}),
    );
    assert_eq!(
        error_of(&no_session),
        json!({
            "code": -32002,
            "message": "there is no session 'nope' in this toolhost acp; create one with session/new",
            "field": "sessionId"
        })
    );
    let no_prompt = acp.request(5, "session/prompt", json!({"sessionId": "nope"}));
    assert_eq!(
        error_of(&no_prompt),
        json!({"code": -32602, "message": "session/prompt: prompt: missing field `prompt`", "field": "prompt"})
    );
    let bad_mode = acp.request(
        6,
        "session/set_mode",
        json!({"sessionId": "nope", "modeId": "yolo"}),
    );
    assert_eq!(error_of(&bad_mode)["code"], -32002);
    let unknown = acp.request(7, "session/frobnicate", json!({}));
    assert_eq!(unknown["error"]["code"], -32601);
    assert!(
        unknown["error"]["data"]
            .as_str()
            .unwrap()
            .starts_with("toolhost acp has no method 'session/frobnicate'"),
        "{unknown}"
    );
    // Still serving.
    assert_eq!(acp.initialize()["result"]["protocolVersion"], 1);
}

#[test]
fn a_provider_without_its_key_is_answered_with_the_auth_method() {
    let dirs = HomeAndWorkspace::new();
    let mut acp = Acp::start(&dirs, &[]);
    let method = json!({
        "id": "env:ANTHROPIC_API_KEY",
        "name": "Set ANTHROPIC_API_KEY",
        "description": "toolhost reads the API key of the provider 'anthropic' from the \
            environment variable ANTHROPIC_API_KEY: set it in the editor's settings for this \
            agent (its `env`) and restart the agent"
    });
    assert_eq!(acp.initialize()["result"]["authMethods"], json!([method]));
    let workspace = dirs.workspace.display().to_string();
    let refused = acp.request(
        1,
        "session/new",
        json!({"cwd": workspace, "mcpServers": []}),
    );
    assert_eq!(
        refused["error"],
        json!({
            "code": -32000,
            "message": "Authentication required",
            "data": {
                "message": "the provider 'anthropic' needs an API key: set the environment \
                    variable ANTHROPIC_API_KEY for toolhost acp",
                "provider": "anthropic",
                "variable": "ANTHROPIC_API_KEY",
                "authMethods": ["env:ANTHROPIC_API_KEY"]
            }
        })
    );
    let still_missing = acp.request(
        2,
        "authenticate",
        json!({"methodId": "env:ANTHROPIC_API_KEY"}),
    );
    assert_eq!(still_missing["error"]["code"], -32000);
    // A key set in the editor's settings for the agent: nothing to authenticate.
    let mut with_key = Acp::start(&dirs, &[("ANTHROPIC_API_KEY", "sk-ant-test")]);
    assert_eq!(with_key.initialize()["result"]["authMethods"], json!([]));
    assert_eq!(
        with_key.request(
            1,
            "authenticate",
            json!({"methodId": "env:ANTHROPIC_API_KEY"})
        )["result"],
        json!({})
    );
}

#[test]
fn an_editors_stdio_server_gets_claude_codes_settings_env() {
    let fixture = agent_runs::Fixture::new();
    write_file(
        fixture.path("envy.py"),
        python_mcp_server(
            "envy",
            "show",
            r#""FROM_CLAUDE=" + os.environ.get("FROM_CLAUDE", "unset")"#,
        ),
    );
    write_file(
        fixture.path(".claude/settings.json"),
        r#"{"env": {"FROM_CLAUDE": "claude-value"}}"#,
    );
    write_file(
        fixture.path(".toolhost/config.toml"),
        "[permissions]\nallow = [\"mcp__envy\"]\n",
    );
    let model = fixture.model(vec![
        Reply::tool_call("call_1", "mcp__envy__show", json!({})).into(),
        Reply::text("Shown.").into(),
    ]);
    let mut acp = Acp::start(
        &fixture.dirs,
        &[
            ("OPENAI_BASE_URL", model.openai_base_url().as_str()),
            ("OPENAI_API_KEY", "sk-test"),
        ],
    );
    acp.initialize();
    let workspace = fixture.dirs.workspace.display().to_string();
    let session = acp.request(
        1,
        "session/new",
        json!({"cwd": workspace, "mcpServers": [{
            "name": "envy", "command": "/usr/bin/python3",
            "args": [fixture.path("envy.py").display().to_string()], "env": []
        }]}),
    );
    let id = session["result"]["sessionId"].clone();
    assert!(id.is_string(), "{session}");
    let done = acp.request(
        2,
        "session/prompt",
        json!({"sessionId": id, "prompt": [{"type": "text", "text": "Show it"}]}),
    );
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        agent_runs::last(&requests[1], "tool"),
        "FROM_CLAUDE=claude-value"
    );
}

//! What the CLI tests share: the `toolhost` binary, run the way a user runs it.

#![allow(dead_code, clippy::unwrap_used)]

use std::path::Path;

use assert_cmd::Command;

/// Runs `args` in the workspace; asserts it exits 0 and returns (stdout, stderr).
pub fn succeeds(workspace: &Path, home: &Path, args: &[&str]) -> (String, String) {
    let output = toolhost_with_home(workspace, home)
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success(),
        "toolhost {args:?} exited {:?}\nstdout: {stdout}\nstderr: {stderr}",
        output.status.code()
    );
    (stdout, stderr)
}

/// `toolhost --workspace WORKSPACE`, with `HOME` at `home` so that a developer's own
/// `~/.toolhost/config.toml` cannot change what the tests see.
pub fn toolhost_with_home(workspace: &Path, home: &Path) -> Command {
    let mut command = Command::cargo_bin("toolhost").unwrap();
    command.env("HOME", home).arg("--workspace").arg(workspace);
    command
}

/// `toolhost --workspace WORKSPACE`, with `HOME` in the workspace.
pub fn toolhost(workspace: &Path) -> Command {
    toolhost_with_home(workspace, workspace)
}

/// A live `toolhost … serve` process on stdio, driven with JSON-RPC lines.
pub struct ServeProcess {
    child: std::process::Child,
    /// `None` once closed.
    stdin: Option<std::process::ChildStdin>,
    messages: std::sync::mpsc::Receiver<serde_json::Value>,
    /// The last id of a request the helpers sent on their own.
    helper_id: u64,
}

/// The ids of requests the helpers send on their own start after this one, above those tests
/// use.
const FIRST_HELPER_ID: u64 = 1_000_000;

impl ServeProcess {
    /// `toolhost --workspace WORKSPACE ARGS… serve`, with `HOME` in the workspace and stderr
    /// discarded.
    pub fn start(workspace: &Path, args: &[&str]) -> Self {
        Self::start_with_home(workspace, workspace, args)
    }

    /// As [`ServeProcess::start`], with `HOME` at `home`.
    pub fn start_with_home(workspace: &Path, home: &Path, args: &[&str]) -> Self {
        Self::start_serving(workspace, home, args, &[])
    }

    /// `toolhost --workspace WORKSPACE ARGS… serve SERVE_ARGS…`, with `HOME` at `home`.
    pub fn start_serving(
        workspace: &Path,
        home: &Path,
        args: &[&str],
        serve_args: &[&str],
    ) -> Self {
        use std::io::BufRead as _;
        use std::process::Stdio;

        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("toolhost"))
            .arg("--workspace")
            .arg(workspace)
            .args(args)
            .arg("serve")
            .args(serve_args)
            .env("HOME", home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, messages) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                if sender.send(serde_json::from_str(&line).unwrap()).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            stdin: Some(stdin),
            messages,
            helper_id: FIRST_HELPER_ID,
        }
    }

    /// The process id of the server.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Sends one JSON-RPC message.
    pub fn send(&mut self, message: serde_json::Value) {
        use std::io::Write as _;
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Closes stdin (the client disconnects) and waits up to `within` for the server to exit;
    /// `None` if it did not.
    pub fn close_stdin_and_wait(
        &mut self,
        within: std::time::Duration,
    ) -> Option<std::process::ExitStatus> {
        self.stdin = None;
        let deadline = std::time::Instant::now() + within;
        while std::time::Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        None
    }

    /// `initialize` and `notifications/initialized`, as a client without elicitation.
    pub fn initialize(&mut self) {
        if let Err(status) = self.try_initialize() {
            panic!("the server exited ({status}) before it answered initialize");
        }
    }

    /// As [`ServeProcess::initialize`], but a server that exits first (a bad flag or
    /// configuration) gives its exit status; fails after 30 s.
    pub fn try_initialize(&mut self) -> Result<(), std::process::ExitStatus> {
        use std::io::Write as _;
        use std::sync::mpsc::RecvTimeoutError;

        let request = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "test", "version": "1"}}});
        // A server that already exited closed its stdin: its exit status says why.
        let stdin = self.stdin.as_mut().unwrap();
        let _ = writeln!(stdin, "{request}").and_then(|()| stdin.flush());
        loop {
            match self
                .messages
                .recv_timeout(std::time::Duration::from_secs(30))
            {
                Ok(message) if message["id"] == 0 => break,
                Ok(_) => {}
                Err(RecvTimeoutError::Disconnected) => return Err(self.child.wait().unwrap()),
                Err(RecvTimeoutError::Timeout) => panic!("no initialize reply from the server"),
            }
        }
        self.send(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        Ok(())
    }

    /// The next message that satisfies `wanted`, skipping others; fails after 30 s.
    pub fn wait_for(
        &self,
        what: &str,
        wanted: impl Fn(&serde_json::Value) -> bool,
    ) -> serde_json::Value {
        use std::time::{Duration, Instant};
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.messages.recv_timeout(left) {
                Ok(message) if wanted(&message) => return message,
                Ok(_) => {}
                Err(_) => panic!("no {what} from the server"),
            }
        }
    }

    /// The names `tools/list` gives.
    pub fn tool_names(&mut self, id: u64) -> Vec<String> {
        self.send(serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}));
        let reply = self.wait_for("tools/list reply", |m| m["id"] == id);
        reply["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| tool["name"].as_str().unwrap().to_owned())
            .collect()
    }

    /// The names `tools/list` gives once they include `name`: a configured server's tools join
    /// when it is ready, which the server announces with `tools/list_changed`. Fails after
    /// 30 s.
    pub fn tool_names_with(&mut self, name: &str) -> Vec<String> {
        let names = |tools: &[serde_json::Value]| -> Vec<String> {
            tools
                .iter()
                .map(|tool| tool["name"].as_str().unwrap().to_owned())
                .collect()
        };
        let tools = self.tools_once(name, |tools| names(tools).iter().any(|n| n == name));
        names(&tools)
    }

    /// The tools `tools/list` gives once `done` holds of them, listing again after each
    /// `tools/list_changed`; fails after 30 s, saying it waited for `what`.
    pub fn tools_once(
        &mut self,
        what: &str,
        done: impl Fn(&[serde_json::Value]) -> bool,
    ) -> Vec<serde_json::Value> {
        use std::sync::mpsc::RecvTimeoutError;
        use std::time::{Duration, Instant};

        let deadline = Instant::now() + Duration::from_secs(30);
        let is_change =
            |message: &serde_json::Value| message["method"] == "notifications/tools/list_changed";
        loop {
            self.helper_id += 1;
            let id = self.helper_id;
            self.send(serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}));
            let mut changed = false;
            let reply = loop {
                let left = deadline.saturating_duration_since(Instant::now());
                match self.messages.recv_timeout(left) {
                    Ok(message) if message["id"] == id => break message,
                    Ok(message) => changed |= is_change(&message),
                    Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
                        panic!("no tools/list reply from the server")
                    }
                }
            };
            let tools = reply["result"]["tools"].as_array().unwrap().clone();
            if done(&tools) {
                return tools;
            }
            if !changed {
                let left = deadline.saturating_duration_since(Instant::now());
                loop {
                    match self.messages.recv_timeout(left) {
                        Ok(message) if is_change(&message) => break,
                        Ok(_) => {}
                        Err(_) => panic!("never listed {what}; the last list: {tools:?}"),
                    }
                }
            }
        }
    }

    /// The result of `tools/call`.
    pub fn call(&mut self, id: u64, name: &str, arguments: serde_json::Value) -> serde_json::Value {
        self.send(
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                                     "params": {"name": name, "arguments": arguments}}),
        );
        self.wait_for("tools/call reply", |m| m["id"] == id)["result"].clone()
    }
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub mod oauth;
pub mod oauth_login;
pub mod web_server;

/// `toolhost --workspace WORKSPACE chat ARGS` on a pseudo-terminal made by util-linux
/// `script`, with `HOME` at `home`, `TERM` as given and the OpenAI variables pointing at
/// `model_url`: the child, and the pty's input and output. `before` runs first in the pty's
/// shell (`stty rows 30 cols 100;`, or nothing).
///
/// `exec`: `script` runs the command through `$SHELL -c`, and a shell that stays as the
/// parent (dash does) is in the pty's foreground group too, so a Ctrl-C would kill it and
/// `script` would report 130 whatever toolhost did.
pub fn chat_on_pty(
    workspace: &Path,
    home: &Path,
    model_url: &str,
    term: &str,
    before: &str,
    args: &str,
) -> (
    std::process::Child,
    std::process::ChildStdin,
    std::process::ChildStdout,
) {
    let binary = assert_cmd::cargo::cargo_bin("toolhost");
    let command = format!(
        "{before}exec {} --workspace {} chat {args}",
        binary.display(),
        workspace.display()
    );
    let mut child = std::process::Command::new("script")
        .args(["-qfec", &command, "/dev/null"])
        .env("HOME", home)
        .env("SHELL", "/bin/sh")
        .env("TERM", term)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_BASE_URL")
        .env("OPENAI_BASE_URL", model_url)
        .env("OPENAI_API_KEY", "sk-test")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .expect("script (util-linux) runs the chat on a pty");
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    (child, stdin, stdout)
}

/// Speaks Streamable HTTP to `$TOOLHOST_MCP_URL` with the standard library: a request without
/// the token, then initialize, initialized and a call of `toolhost__status`.
pub const BRIDGE_CLIENT: &str = r#"
import json, os, urllib.error, urllib.request

url = os.environ["TOOLHOST_MCP_URL"]

def post(message, session=None, token=os.environ["TOOLHOST_MCP_TOKEN"]):
    headers = {"Content-Type": "application/json",
               "Accept": "application/json, text/event-stream"}
    if token:
        headers["Authorization"] = "Bearer " + token
    if session:
        headers["Mcp-Session-Id"] = session
    request = urllib.request.Request(url, json.dumps(message).encode(), headers)
    with urllib.request.urlopen(request, timeout=20) as response:
        body = response.read().decode()
        session = response.headers.get("Mcp-Session-Id", session)
    data = [line[5:] for line in body.splitlines() if line.startswith("data:")]
    replies = [json.loads(item) for item in data if item.strip()]
    if not data and body.strip():
        replies = [json.loads(body)]
    return session, replies

initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "bridge-test", "version": "1"}}}
try:
    post(initialize, token="")
    print("without token: accepted")
except urllib.error.HTTPError as error:
    print("without token:", error.code)
session, _ = post(initialize)
post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
_, replies = post({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                   "params": {"name": "toolhost__status", "arguments": {}}}, session)
print(replies[-1]["result"]["content"][0]["text"])
"#;

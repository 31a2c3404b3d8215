//! `toolhost serve` reloads custom tools when their files change and tells the client
//! (R41): a live server process, a tool file added while it runs.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

fn tool_module(name: &str) -> String {
    format!(
        "export default () => ({{ name: '{name}', label: '{name}', description: 'Says {name}.', \
         parameters: {{ type: 'object', properties: {{}} }}, \
         execute: async () => ({{ content: [{{ type: 'text', text: '{name}!' }}] }}) }});\n"
    )
}

struct Server {
    child: Child,
    stdin: ChildStdin,
    messages: Receiver<Value>,
}

impl Server {
    fn start(workspace: &std::path::Path) -> Self {
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("toolhost"))
            .arg("--workspace")
            .arg(workspace)
            // Custom tools ask before they run (R17); this client cannot be asked.
            .args(["--allow", "bye", "serve"])
            .env("HOME", workspace)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, messages) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if sender.send(serde_json::from_str(&line).unwrap()).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            stdin,
            messages,
        }
    }

    fn send(&mut self, message: Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next message that satisfies `wanted`, skipping others; fails after 20 s.
    fn wait_for(&self, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.messages.recv_timeout(left) {
                Ok(message) if wanted(&message) => return message,
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
                    panic!("no {what} from the server")
                }
            }
        }
    }

    fn tool_names(&mut self, id: u64) -> Vec<String> {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}));
        let reply = self.wait_for("tools/list reply", |m| m["id"] == id);
        reply["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| tool["name"].as_str().unwrap().to_owned())
            .collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_tool_file_added_while_serving_is_loaded_and_announced() {
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join(".toolhost/tools");
    std::fs::create_dir_all(&tools).unwrap();
    std::fs::write(tools.join("hello.js"), tool_module("hello")).unwrap();

    let mut server = Server::start(dir.path());
    server.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}}),
    );
    server.wait_for("initialize reply", |m| m["id"] == 1);
    server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let before = server.tool_names(2);
    assert!(before.contains(&"hello".to_owned()), "{before:?}");
    assert!(!before.contains(&"bye".to_owned()));

    std::fs::write(tools.join("bye.js"), tool_module("bye")).unwrap();
    server.wait_for("tools/list_changed notification", |m| {
        m["method"] == "notifications/tools/list_changed"
    });
    let after = server.tool_names(3);
    assert!(
        after.contains(&"hello".to_owned()) && after.contains(&"bye".to_owned()),
        "{after:?}"
    );

    server.send(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                       "params": {"name": "bye", "arguments": {}}}));
    let reply = server.wait_for("tools/call reply", |m| m["id"] == 4);
    assert_eq!(reply["result"]["content"][0]["text"], "bye!");
}

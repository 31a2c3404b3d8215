//! What the sub-agent and session-tool tests share: a workspace and home, mock models served
//! from a runtime of their own, `toolhost run` as a user runs it, and readers of what the
//! models were sent.

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use serde_json::Value;
use toolhost_session::SessionStore;
use toolhost_test_support::{
    HomeAndWorkspace, MockModel, RecordedRequest, Step, WireFormat, write_file,
};

/// What a child blocked on the file `go` runs in Bash.
pub const WAIT_FOR_GO: &str = "while [ ! -f go ]; do sleep 0.05; done; echo ready";

pub struct Fixture {
    pub runtime: tokio::runtime::Runtime,
    pub dirs: HomeAndWorkspace,
}

impl Fixture {
    pub fn new() -> Self {
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

    pub fn model(&self, script: Vec<Step>) -> MockModel {
        self.runtime
            .block_on(MockModel::start(WireFormat::OpenAiChat, script))
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.dirs.workspace.join(relative)
    }

    /// `.toolhost/agents/NAME.md`.
    pub fn agent_file(&self, name: &str, text: &str) {
        write_file(self.path(&format!(".toolhost/agents/{name}.md")), text);
    }

    pub fn config(&self, text: &str) {
        write_file(self.path(".toolhost/config.toml"), text);
    }

    /// A config whose top-level agent asks `parent` and whose agent `helper` asks `child`.
    pub fn two_models(&self, parent: &MockModel, child: &MockModel, extra: &str) {
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

    pub fn store(&self) -> SessionStore {
        SessionStore::open(self.dirs.home.join(".toolhost").join("sessions.db")).unwrap()
    }

    /// `toolhost run ARGS…` asking `model` through the conventional OpenAI variables.
    pub fn run(&self, model: &MockModel, args: &[&str]) -> Command {
        let mut command = crate::support::toolhost_with_home(&self.dirs.workspace, &self.dirs.home);
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
    pub fn spawn_run(&self, args: &[&str]) -> Child {
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
pub fn wait_for_requests(model: &MockModel, count: usize) {
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
pub fn finish(mut child: Child) -> std::process::Output {
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

pub fn json_stdout(output: &std::process::Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\nstderr: {}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// The text of every message of a request, one string per message.
pub fn messages(request: &RecordedRequest) -> Vec<(String, String)> {
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
pub fn last(request: &RecordedRequest, role: &str) -> String {
    messages(request)
        .into_iter()
        .rev()
        .find(|(r, _)| r == role)
        .map(|(_, text)| text)
        .unwrap_or_default()
}

pub fn tool_names(request: &RecordedRequest) -> Vec<String> {
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

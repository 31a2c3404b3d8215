//! `toolhost run` the way a user meets it: the real binary, as a subprocess, against a
//! scripted mock model on 127.0.0.1 (`toolhost-test-support`'s `MockModel`), in each of the
//! three wire formats. The tests check what a user would: stdout, stderr, the exit status, the
//! files in the workspace, and what the model was sent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "run/deferred_tools.rs"]
mod deferred_tools;
#[path = "run/provider_sdk_wire.rs"]
mod provider_sdk_wire;
#[path = "run/repeated_calls.rs"]
mod repeated_calls;
mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use toolhost_test_support::{
    Fault, HomeAndWorkspace, MockModel, RecordedRequest, Reply, Step, WireFormat, is_running,
    write_file,
};

/// The variables that choose a provider; a developer's own must not reach the tests.
const PROVIDER_VARIABLES: [&str; 4] = [
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
];

const HELLO: &str = "Hello from the workspace.\n";

/// A workspace, a home folder and a mock model playing one script, with the binary pointed at
/// it: by `OPENAI_*` variables (chat completions), `ANTHROPIC_*` variables (Anthropic), or a
/// `[providers.mock]` entry in `.toolhost/config.toml` (the Responses API).
struct Run {
    model: MockModel,
    // Serves the mock model while the test runs the binary; dropped after it.
    _runtime: tokio::runtime::Runtime,
    dirs: HomeAndWorkspace,
}

impl Run {
    fn new(format: WireFormat, script: Vec<Step>) -> Self {
        Self::with_provider_settings(format, script, "")
    }

    /// `settings` are added to the `[providers.mock]` entry (the Responses API only).
    fn with_provider_settings(format: WireFormat, script: Vec<Step>, settings: &str) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let model = runtime.block_on(MockModel::start(format, script));
        let dirs = HomeAndWorkspace::new();
        write_file(dirs.workspace.join("hello.txt"), HELLO);
        if format == WireFormat::OpenAiResponses {
            let config = format!(
                "[providers.mock]\napi = \"openai-responses\"\nbase_url = \"{}\"\n\
                 api_key_env = \"MOCK_MODEL_KEY\"\nmodel = \"mock-model\"\n{settings}",
                model.openai_base_url()
            );
            write_file(dirs.project_config(), config);
        } else {
            assert!(
                settings.is_empty(),
                "provider settings need the config file"
            );
        }
        Self {
            model,
            _runtime: runtime,
            dirs,
        }
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.dirs.workspace.join(relative)
    }

    /// The variables that point the binary at the model.
    fn provider_env(&self) -> Vec<(&'static str, String)> {
        match self.model.format() {
            WireFormat::OpenAiChat => vec![
                ("OPENAI_BASE_URL", self.model.openai_base_url()),
                ("OPENAI_API_KEY", "sk-test".to_owned()),
            ],
            WireFormat::Anthropic => vec![
                ("ANTHROPIC_BASE_URL", self.model.url()),
                ("ANTHROPIC_API_KEY", "sk-ant-test".to_owned()),
            ],
            WireFormat::OpenAiResponses => vec![("MOCK_MODEL_KEY", "sk-test".to_owned())],
        }
    }

    /// `toolhost --workspace WS`, `HOME` in the temp folder, the model chosen by the format.
    fn toolhost(&self) -> Command {
        let mut command = support::toolhost_with_home(&self.dirs.workspace, &self.dirs.home);
        for variable in PROVIDER_VARIABLES {
            command.env_remove(variable);
        }
        command.envs(self.provider_env());
        command.timeout(Duration::from_secs(60));
        command
    }

    /// `toolhost --workspace WS run ARGS…` started, not awaited (to signal it while it runs).
    fn spawn_run(&self, args: &[&str]) -> std::process::Child {
        let mut command = std::process::Command::new(assert_cmd::cargo::cargo_bin("toolhost"));
        for variable in PROVIDER_VARIABLES {
            command.env_remove(variable);
        }
        command
            .env("HOME", &self.dirs.home)
            .envs(self.provider_env())
            .arg("--workspace")
            .arg(&self.dirs.workspace)
            .arg("run")
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        command.spawn().unwrap()
    }

    fn requests(&self) -> Vec<RecordedRequest> {
        self.model.requests()
    }
}

/// What a finished run printed.
struct Finished {
    status: Option<i32>,
    stdout: String,
    stderr: String,
}

fn finish(output: &std::process::Output) -> Finished {
    Finished {
        status: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// `toolhost run ARGS…` to its end.
fn run(run: &Run, args: &[&str]) -> Finished {
    finish(&run.toolhost().arg("run").args(args).output().unwrap())
}

/// One tool result as a request carries it.
#[derive(Debug, PartialEq)]
struct SentResult {
    call_id: String,
    text: String,
}

/// The text of a tool result's content: a string, or an array of text parts.
fn content_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|part| part["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => panic!("tool result content is neither text nor parts: {other}"),
    }
}

/// The tool results in a request body, in the order it carries them.
fn tool_results(format: WireFormat, body: &Value) -> Vec<SentResult> {
    match format {
        WireFormat::OpenAiChat => body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|message| message["role"] == "tool")
            .map(|message| SentResult {
                call_id: message["tool_call_id"].as_str().unwrap().to_owned(),
                text: content_text(&message["content"]),
            })
            .collect(),
        WireFormat::OpenAiResponses => body["input"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|item| item["type"] == "function_call_output")
            .map(|item| SentResult {
                call_id: item["call_id"].as_str().unwrap().to_owned(),
                text: content_text(&item["output"]),
            })
            .collect(),
        WireFormat::Anthropic => body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|message| message["content"].as_array())
            .flatten()
            .filter(|block| block["type"] == "tool_result")
            .map(|block| SentResult {
                call_id: block["tool_use_id"].as_str().unwrap().to_owned(),
                text: content_text(&block["content"]),
            })
            .collect(),
    }
}

/// The names of the tools a request offers; the Responses API's client-executed tool search
/// (`{"type": "tool_search"}`, which has no name) is `tool_search`, the tool that runs it.
fn offered_tools(format: WireFormat, body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| {
            let name = match format {
                WireFormat::OpenAiChat => &tool["function"]["name"],
                WireFormat::OpenAiResponses if tool["type"] == "tool_search" => {
                    return "tool_search".to_owned();
                }
                WireFormat::OpenAiResponses | WireFormat::Anthropic => &tool["name"],
            };
            name.as_str().unwrap().to_owned()
        })
        .collect()
}

/// The text of the user's first message in a request.
fn first_user_text(format: WireFormat, body: &Value) -> String {
    let messages = match format {
        WireFormat::OpenAiResponses => &body["input"],
        WireFormat::OpenAiChat | WireFormat::Anthropic => &body["messages"],
    };
    let first = messages
        .as_array()
        .unwrap()
        .iter()
        .find(|message| message["role"] == "user")
        .unwrap();
    match &first["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|part| part["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => panic!("user content is neither text nor parts: {other}"),
    }
}

/// stdout read as one JSON object per line.
fn json_lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

/// The model reads hello.txt and notes.txt in one response, then answers.
fn read_two_files_then_answer() -> Vec<Step> {
    vec![
        Reply::tool_calls([
            ("call_1", "Read", json!({"path": "hello.txt"})),
            ("call_2", "Read", json!({"path": "notes.txt"})),
        ])
        .with_usage(100, 20, 0)
        .into(),
        Reply::text("hello.txt says: Hello from the workspace.")
            .with_usage(150, 10, 80)
            .into(),
    ]
}

fn reads_a_file_and_answers(format: WireFormat) {
    let run_ = Run::new(format, read_two_files_then_answer());
    std::fs::write(run_.path("notes.txt"), "Notes: buy milk.\n").unwrap();
    let done = run(&run_, &["What does hello.txt say?"]);

    assert_eq!(done.status, Some(0), "stderr: {}", done.stderr);
    assert_eq!(done.stdout, "hello.txt says: Hello from the workspace.\n");
    assert!(done.stderr.contains("→ Read"), "stderr: {}", done.stderr);
    let sent = run_.requests();
    assert_eq!(sent.len(), 2);
    assert!(sent.iter().all(|request| request.path == format.path()));
    assert!(sent[0].body["stream"] == true, "{}", sent[0].body);
    assert_eq!(
        first_user_text(format, &sent[0].body),
        "What does hello.txt say?"
    );
    assert_eq!(tool_results(format, &sent[0].body), vec![]);
    let results = tool_results(format, &sent[1].body);
    let ids: Vec<&str> = results.iter().map(|r| r.call_id.as_str()).collect();
    assert_eq!(ids, ["call_1", "call_2"]);
    assert!(
        results[0].text.contains("Hello from the workspace."),
        "{results:?}"
    );
    assert!(results[1].text.contains("Notes: buy milk."), "{results:?}");
    assert_eq!(run_.model.remaining(), 0);
}

#[test]
fn run_reads_a_file_and_answers_over_openai_chat() {
    reads_a_file_and_answers(WireFormat::OpenAiChat);
}

#[test]
fn run_reads_a_file_and_answers_over_openai_responses() {
    reads_a_file_and_answers(WireFormat::OpenAiResponses);
}

#[test]
fn run_reads_a_file_and_answers_over_anthropic() {
    reads_a_file_and_answers(WireFormat::Anthropic);
}

fn is_uuid(text: &str) -> bool {
    let parts: Vec<&str> = text.split('-').collect();
    parts.iter().map(|part| part.len()).collect::<Vec<_>>() == [8, 4, 4, 4, 12]
        && text.chars().all(|c| c == '-' || c.is_ascii_hexdigit())
}

#[test]
fn json_output_is_one_result_object() {
    let run_ = Run::new(WireFormat::Anthropic, read_two_files_then_answer());
    std::fs::write(run_.path("notes.txt"), "Notes.\n").unwrap();
    let done = run(
        &run_,
        &["--output-format", "json", "What does hello.txt say?"],
    );

    assert_eq!(done.status, Some(0), "stderr: {}", done.stderr);
    let lines = json_lines(&done.stdout);
    assert_eq!(lines.len(), 1, "stdout: {}", done.stdout);
    let result = &lines[0];
    assert_eq!(result["type"], "result");
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["is_error"], false);
    assert_eq!(
        result["result"],
        "hello.txt says: Hello from the workspace."
    );
    assert_eq!(result["num_turns"], 2);
    assert!(result["duration_ms"].is_u64(), "{result}");
    assert!(result["duration_api_ms"].is_u64(), "{result}");
    assert!(is_uuid(result["session_id"].as_str().unwrap()), "{result}");
    // Anthropic counts input without the cached tokens: 100 + (150 - 80).
    assert_eq!(
        result["usage"],
        json!({"input_tokens": 170, "output_tokens": 30,
               "cache_read_input_tokens": 80, "cache_creation_input_tokens": 0})
    );
}

#[test]
fn json_output_counts_the_cache_writes_the_responses_api_reports() {
    let run_ = Run::new(
        WireFormat::OpenAiResponses,
        vec![
            Reply::text("Cached.")
                .with_usage(2000, 12, 1536)
                .with_cache_write(256)
                .into(),
        ],
    );
    let done = run(&run_, &["--output-format", "json", "Say cached."]);

    assert_eq!(done.status, Some(0), "stderr: {}", done.stderr);
    let result = &json_lines(&done.stdout)[0];
    // Printed as Claude Code does: input without the cached tokens, 2000 - 1536 - 256.
    assert_eq!(
        result["usage"],
        json!({"input_tokens": 208, "output_tokens": 12,
               "cache_read_input_tokens": 1536, "cache_creation_input_tokens": 256})
    );
}

#[test]
fn stream_json_prints_the_claude_code_headless_events() {
    let run_ = Run::new(
        WireFormat::OpenAiChat,
        vec![
            Reply::tool_call("call_1", "Read", json!({"path": "hello.txt"})).into(),
            Reply::text("It says hello.").into(),
        ],
    );
    let done = run(
        &run_,
        &["--output-format", "stream-json", "What does hello.txt say?"],
    );

    assert_eq!(done.status, Some(0), "stderr: {}", done.stderr);
    let events = json_lines(&done.stdout);
    let kinds: Vec<String> = events
        .iter()
        .map(|event| match event["subtype"].as_str() {
            Some(subtype) => format!("{}/{subtype}", event["type"].as_str().unwrap()),
            None => event["type"].as_str().unwrap().to_owned(),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "system/init",
            "assistant",
            "user",
            "assistant",
            "result/success"
        ]
    );
    let session_id = events[0]["session_id"].as_str().unwrap();
    assert!(is_uuid(session_id), "{}", events[0]);
    assert!(events.iter().all(|event| event["session_id"] == session_id));
    let init = &events[0];
    assert_eq!(init["cwd"], run_.dirs.workspace.display().to_string());
    assert!(
        init["tools"].as_array().unwrap().contains(&json!("Read")),
        "{init}"
    );
    let tool_use = &events[1]["message"]["content"][0];
    assert_eq!(
        tool_use,
        &json!({"type": "tool_use", "id": "call_1", "name": "Read",
                "input": {"path": "hello.txt"}})
    );
    assert_eq!(events[1]["message"]["stop_reason"], "tool_use");
    let tool_result = &events[2]["message"]["content"][0];
    assert_eq!(events[2]["message"]["role"], "user");
    assert_eq!(tool_result["type"], "tool_result");
    assert_eq!(tool_result["tool_use_id"], "call_1");
    assert_eq!(tool_result["is_error"], false);
    assert!(
        content_text(&tool_result["content"]).contains("Hello from the workspace."),
        "{tool_result}"
    );
    assert_eq!(
        events[3]["message"]["content"],
        json!([{"type": "text", "text": "It says hello."}])
    );
    assert_eq!(events[4]["result"], "It says hello.");
    assert_eq!(events[4]["num_turns"], 2);
}

#[test]
fn reaching_max_iterations_exits_1_with_error_max_turns() {
    let read = || Reply::tool_call("call_1", "Read", json!({"path": "hello.txt"})).into();
    let run_ = Run::new(WireFormat::OpenAiChat, vec![read(), read(), read()]);
    let done = run(
        &run_,
        &[
            "--max-iterations",
            "2",
            "--output-format",
            "json",
            "Keep reading",
        ],
    );

    assert_eq!(done.status, Some(1), "stderr: {}", done.stderr);
    let result = &json_lines(&done.stdout)[0];
    assert_eq!(result["subtype"], "error_max_turns");
    assert_eq!(result["is_error"], true);
    assert_eq!(result["num_turns"], 2);
    assert_eq!(run_.requests().len(), 2);
}

#[test]
fn an_answer_that_only_repeats_the_tool_result_is_sent_back_once() {
    // What a small model did with a Glob that found nothing: it answered with the result.
    let echo = "No files match \"*.zig\" in . (ignored and hidden files are skipped unless the \
                pattern names them). The files there are mostly *.txt (1). To find the file that \
                defines or mentions a name, use Grep.";
    let run_ = Run::new(
        WireFormat::OpenAiChat,
        vec![
            Reply::tool_call("call_1", "Glob", json!({"pattern": "*.zig"})).into(),
            Reply::text(echo).into(),
            Reply::text("There are no Zig files here; the only file is hello.txt.").into(),
        ],
    );
    let done = run(
        &run_,
        &["--output-format", "json", "Where are the Zig files?"],
    );
    assert_eq!(done.status, Some(0), "stderr: {}", done.stderr);
    let requests = run_.requests();
    assert_eq!(
        tool_results(WireFormat::OpenAiChat, &requests[1].body)[0].text,
        echo
    );
    let result = &json_lines(&done.stdout)[0];
    assert_eq!(
        result["result"],
        "There are no Zig files here; the only file is hello.txt."
    );
    assert_eq!(requests.len(), 3);
    // The echo is dropped; the model reads its tool result and the note.
    let messages = requests[2].body["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "user");
    assert!(
        content_text(&last["content"]).contains("only repeated the last tool result"),
        "{last}"
    );
    assert!(
        !messages
            .iter()
            .any(|message| message["role"] == "assistant" && message["content"] == echo)
    );
}

#[test]
fn a_provider_failing_after_its_retries_exits_1() {
    let failure = || Step::Fail {
        status: 500,
        retry_after: Some(0),
        body: "the mock model is down".into(),
    };
    let run_ = Run::with_provider_settings(
        WireFormat::OpenAiResponses,
        vec![failure(), failure(), failure(), failure()],
        "max_retries = 2\n",
    );
    let done = run(&run_, &["What does hello.txt say?"]);

    assert_eq!(done.status, Some(1), "stderr: {}", done.stderr);
    assert_eq!(done.stdout, "");
    assert!(
        done.stderr.contains("error:") && done.stderr.contains("500"),
        "stderr: {}",
        done.stderr
    );
    assert!(
        done.stderr.contains("the mock model is down"),
        "stderr: {}",
        done.stderr
    );
    // The first attempt and two retries.
    assert_eq!(run_.requests().len(), 3);
}

#[test]
fn an_unknown_tools_name_is_a_usage_error_listing_the_builtins() {
    let run_ = Run::new(WireFormat::OpenAiChat, vec![]);
    let done = run(&run_, &["--tools", "Read,Nope", "hi"]);

    assert_eq!(done.status, Some(2), "stderr: {}", done.stderr);
    assert!(done.stderr.contains("'Nope'"), "stderr: {}", done.stderr);
    for builtin in ["Read", "Write", "Edit", "Grep", "Glob", "Bash"] {
        assert!(done.stderr.contains(builtin), "stderr: {}", done.stderr);
    }
    assert_eq!(run_.requests(), vec![]);
}

#[test]
fn an_empty_prompt_is_a_usage_error() {
    let run_ = Run::new(WireFormat::OpenAiChat, vec![]);
    let done = run(&run_, &["  "]);
    assert_eq!(done.status, Some(2), "stderr: {}", done.stderr);
    assert!(
        done.stderr.contains("the prompt is empty"),
        "stderr: {}",
        done.stderr
    );

    let from_stdin = finish(&run_.toolhost().args(["run", "-"]).output().unwrap());
    assert_eq!(from_stdin.status, Some(2), "stderr: {}", from_stdin.stderr);
    assert!(from_stdin.stderr.contains("the prompt is empty"));
    assert_eq!(run_.requests(), vec![]);
}

#[test]
fn no_provider_at_all_is_a_usage_error_saying_what_to_set() {
    let root = tempfile::tempdir().unwrap();
    let mut command = support::toolhost_with_home(root.path(), root.path());
    for variable in PROVIDER_VARIABLES {
        command.env_remove(variable);
    }
    let done = finish(&command.args(["run", "hi"]).output().unwrap());

    assert_eq!(done.status, Some(2), "stderr: {}", done.stderr);
    for what in ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"] {
        assert!(done.stderr.contains(what), "stderr: {}", done.stderr);
    }
}

#[test]
fn tools_flag_limits_what_the_model_is_offered() {
    for format in [
        WireFormat::OpenAiChat,
        WireFormat::OpenAiResponses,
        WireFormat::Anthropic,
    ] {
        let run_ = Run::new(format, vec![Reply::text("Nothing to do.").into()]);
        let done = run(&run_, &["--tools", "Read,Grep", "hi"]);

        assert_eq!(done.status, Some(0), "{format:?} stderr: {}", done.stderr);
        let offered = offered_tools(format, &run_.requests()[0].body);
        // Nothing else of toolhost's own: its built-in MCP provider's status tool is a
        // built-in too (configured MCP servers' tools would stay).
        assert_eq!(offered, ["Read", "Grep"], "{format:?}");
    }
    let run_ = Run::new(
        WireFormat::OpenAiChat,
        vec![Reply::text("Nothing to do.").into()],
    );
    let done = run(&run_, &["--tools", "Read,mcp__toolhost__status", "hi"]);
    assert_eq!(done.status, Some(0), "stderr: {}", done.stderr);
    let offered = offered_tools(WireFormat::OpenAiChat, &run_.requests()[0].body);
    assert_eq!(offered, ["Read", "mcp__toolhost__status"]);

    let run_ = Run::new(
        WireFormat::OpenAiChat,
        vec![Reply::text("Nothing to do.").into()],
    );
    assert_eq!(run(&run_, &["hi"]).status, Some(0));
    let offered = offered_tools(WireFormat::OpenAiChat, &run_.requests()[0].body);
    for builtin in ["Read", "Write", "Edit", "Grep", "Glob", "Bash"] {
        assert!(offered.iter().any(|name| name == builtin), "{offered:?}");
    }
}

#[test]
fn a_429_with_retry_after_is_waited_out_and_shown_as_api_retry() {
    let run_ = Run::new(
        WireFormat::Anthropic,
        vec![Step::rate_limited(1), Reply::text("Hello.").into()],
    );
    let done = run(&run_, &["--output-format", "stream-json", "hi"]);

    assert_eq!(done.status, Some(0), "stderr: {}", done.stderr);
    let events = json_lines(&done.stdout);
    let retry = events
        .iter()
        .find(|event| event["type"] == "system" && event["subtype"] == "api_retry")
        .unwrap_or_else(|| panic!("no api_retry event: {}", done.stdout));
    assert_eq!(retry["attempt"], 2, "{retry}");
    assert_eq!(retry["retry_delay_ms"], 1000, "{retry}");
    assert_eq!(events.last().unwrap()["result"], "Hello.");
    assert_eq!(run_.requests().len(), 2);
}

#[test]
fn a_stream_dropped_midway_is_retried_once() {
    for format in [
        WireFormat::OpenAiChat,
        WireFormat::OpenAiResponses,
        WireFormat::Anthropic,
    ] {
        let run_ = Run::new(
            format,
            vec![
                Reply::tool_call("call_1", "Read", json!({"path": "hello.txt"}))
                    .with_fault(Fault::DropMidStream { after_events: 3 })
                    .into(),
                Reply::text("It says hello.").into(),
            ],
        );
        let done = run(&run_, &["What does hello.txt say?"]);

        assert_eq!(done.status, Some(0), "{format:?} stderr: {}", done.stderr);
        assert_eq!(done.stdout, "It says hello.\n");
        let sent = run_.requests();
        assert_eq!(sent.len(), 3, "{format:?}");
        assert_eq!(sent[0].body, sent[1].body, "{format:?}: the retry resends");
        let results = tool_results(format, &sent[2].body);
        assert_eq!(results.len(), 1, "{format:?}: one call, run once");
        assert!(results[0].text.contains("Hello from the workspace."));
    }
}

#[test]
fn split_deltas_and_a_name_after_the_id_still_make_one_call() {
    for (format, faults) in [
        (
            WireFormat::OpenAiChat,
            &[Fault::SplitDeltas(2), Fault::NameAfterId][..],
        ),
        (WireFormat::OpenAiResponses, &[Fault::SplitDeltas(2)][..]),
        (WireFormat::Anthropic, &[Fault::SplitDeltas(2)][..]),
    ] {
        let call = faults.iter().fold(
            Reply::tool_call("call_1", "Read", json!({"path": "hello.txt"}))
                .with_text("Let me look."),
            |reply, fault| reply.with_fault(*fault),
        );
        let answer = Reply::text("hello.txt says: Hello from the workspace.")
            .with_fault(Fault::SplitDeltas(2));
        let run_ = Run::new(format, vec![call.into(), answer.into()]);
        let done = run(&run_, &["What does hello.txt say?"]);

        assert_eq!(done.status, Some(0), "{format:?} stderr: {}", done.stderr);
        assert_eq!(done.stdout, "hello.txt says: Hello from the workspace.\n");
        let results = tool_results(format, &run_.requests()[1].body);
        assert_eq!(results.len(), 1, "{format:?}");
        assert_eq!(results[0].call_id, "call_1");
        assert!(results[0].text.contains("Hello from the workspace."));
    }
}

#[test]
fn truncated_arguments_go_back_as_an_error_and_the_loop_goes_on() {
    for format in [
        WireFormat::OpenAiChat,
        WireFormat::OpenAiResponses,
        WireFormat::Anthropic,
    ] {
        let run_ = Run::new(
            format,
            vec![
                Reply::default()
                    .with_raw_arguments("call_1", "Read", r#"{"path": "hel"#)
                    .into(),
                Reply::tool_call("call_2", "Read", json!({"path": "hello.txt"})).into(),
                Reply::text("It says hello.").into(),
            ],
        );
        let done = run(&run_, &["--output-format", "stream-json", "Read hello.txt"]);

        assert_eq!(done.status, Some(0), "{format:?} stderr: {}", done.stderr);
        let events = json_lines(&done.stdout);
        let first_result =
            &events.iter().find(|event| event["type"] == "user").unwrap()["message"]["content"][0];
        assert_eq!(first_result["tool_use_id"], "call_1", "{format:?}");
        assert_eq!(first_result["is_error"], true, "{format:?}");
        let sent = run_.requests();
        assert_eq!(sent.len(), 3, "{format:?}");
        let results = tool_results(format, &sent[1].body);
        assert_eq!(results.len(), 1, "{format:?}");
        assert_eq!(results[0].call_id, "call_1");
        assert!(
            results[0]
                .text
                .contains("the arguments of Read are not valid JSON"),
            "{format:?}: {}",
            results[0].text
        );
        assert!(
            tool_results(format, &sent[2].body)[1]
                .text
                .contains("Hello from the workspace."),
            "{format:?}"
        );
        assert_eq!(events.last().unwrap()["result"], "It says hello.");
    }
}

fn write_then_answer() -> Vec<Step> {
    vec![
        Reply::tool_call(
            "call_1",
            "Write",
            json!({"path": "out.txt", "content": "written by the model\n"}),
        )
        .into(),
        Reply::text("Done.").into(),
    ]
}

#[test]
fn a_write_is_refused_when_nobody_can_be_asked() {
    let run_ = Run::new(WireFormat::OpenAiChat, write_then_answer());
    let done = run(&run_, &["Write out.txt"]);

    assert_eq!(done.status, Some(0), "stderr: {}", done.stderr);
    assert!(!run_.path("out.txt").exists());
    let results = tool_results(WireFormat::OpenAiChat, &run_.requests()[1].body);
    assert_eq!(results.len(), 1);
    assert!(
        results[0].text.contains("needs the user's approval") && results[0].text.contains("--yes"),
        "{}",
        results[0].text
    );
}

#[test]
fn a_write_is_made_with_yes() {
    let run_ = Run::new(WireFormat::OpenAiChat, write_then_answer());
    let done = run(&run_, &["--yes", "Write out.txt"]);

    assert_eq!(done.status, Some(0), "stderr: {}", done.stderr);
    assert_eq!(
        std::fs::read_to_string(run_.path("out.txt")).unwrap(),
        "written by the model\n"
    );
}

#[test]
fn a_denied_bash_call_never_runs_even_with_yes() {
    let run_ = Run::new(
        WireFormat::Anthropic,
        vec![
            Reply::tool_call(
                "toolu_1",
                "Bash",
                json!({"command": "rm hello.txt && echo ran > ran.txt"}),
            )
            .into(),
            Reply::text("Could not.").into(),
        ],
    );
    let done = run(
        &run_,
        &[
            "--deny",
            "Bash(rm:*)",
            "--yes",
            "--output-format",
            "stream-json",
            "Clean up",
        ],
    );

    assert_eq!(done.status, Some(0), "stderr: {}", done.stderr);
    assert_eq!(
        std::fs::read_to_string(run_.path("hello.txt")).unwrap(),
        HELLO
    );
    assert!(!run_.path("ran.txt").exists());
    let events = json_lines(&done.stdout);
    let result =
        &events.iter().find(|event| event["type"] == "user").unwrap()["message"]["content"][0];
    assert_eq!(result["is_error"], true, "{result}");
    let sent = tool_results(WireFormat::Anthropic, &run_.requests()[1].body);
    assert!(
        sent[0]
            .text
            .contains("denied by the permission rule 'Bash(rm:*)'"),
        "{}",
        sent[0].text
    );
}

#[test]
fn the_prompt_is_read_from_stdin_with_a_dash() {
    let run_ = Run::new(
        WireFormat::OpenAiResponses,
        vec![Reply::text("Hello back.").into()],
    );
    let output = run_
        .toolhost()
        .args(["run", "-"])
        .write_stdin("What does hello.txt say?\nAnswer briefly.\n")
        .output()
        .unwrap();
    let done = finish(&output);

    assert_eq!(done.status, Some(0), "stderr: {}", done.stderr);
    assert_eq!(done.stdout, "Hello back.\n");
    let sent = run_.requests();
    assert_eq!(
        first_user_text(WireFormat::OpenAiResponses, &sent[0].body).trim_end(),
        "What does hello.txt say?\nAnswer briefly."
    );
}

/// Waits up to `within` for `path` to hold a line; its text.
fn wait_for_file(path: &Path, within: Duration) -> String {
    let deadline = Instant::now() + within;
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && text.ends_with('\n')
        {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits up to `within` for `child` to exit; its status.
fn wait_for_exit(child: &mut std::process::Child, within: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + within;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            panic!("toolhost did not exit within {within:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn interrupt(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// A model that asks for `command` in Bash (and would answer after it).
fn bash_run(command: &str) -> Run {
    Run::new(
        WireFormat::OpenAiChat,
        vec![
            Reply::tool_call("call_1", "Bash", json!({"command": command})).into(),
            Reply::text("Finished.").into(),
        ],
    )
}

#[test]
fn ctrl_c_cancels_the_run_and_kills_the_running_bash_tree() {
    let run_ = bash_run("sleep 30 & echo $! > sleep.pid; wait");
    let mut child = run_.spawn_run(&["--yes", "--output-format", "json", "Sleep"]);
    let sleep_pid: u32 = wait_for_file(&run_.path("sleep.pid"), Duration::from_secs(30))
        .trim()
        .parse()
        .unwrap();
    assert!(is_running(sleep_pid));

    interrupt(child.id());
    let status = wait_for_exit(&mut child, Duration::from_secs(10));
    let output = child.wait_with_output().unwrap();

    // The book (The command line, Exit status): interrupted, exit status 130.
    assert_eq!(
        status.code(),
        Some(130),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let result = &json_lines(&String::from_utf8_lossy(&output.stdout))[0];
    assert_eq!(result["subtype"], "error_during_execution", "{result}");
    assert_eq!(result["is_error"], true);
    let deadline = Instant::now() + Duration::from_secs(5);
    while is_running(sleep_pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!is_running(sleep_pid), "sleep {sleep_pid} outlived the run");
    // The cancelled run asks the model nothing more.
    assert_eq!(run_.requests().len(), 1);
}

#[test]
fn a_slow_post_tool_use_hook_does_not_hold_ctrl_c() {
    let run_ = bash_run("sleep 30 & echo $! > sleep.pid; wait");
    std::fs::write(
        run_.path(".toolhost/config.toml"),
        "[[hooks.PostToolUse]]\nmatcher = \"Bash\"\n\
         command = \"echo $$ > hook.pid; exec sleep 30\"\n",
    )
    .unwrap();
    let mut child = run_.spawn_run(&["--yes", "Sleep"]);
    wait_for_file(&run_.path("sleep.pid"), Duration::from_secs(30));
    interrupt(child.id());
    let status = wait_for_exit(&mut child, Duration::from_secs(5));
    assert_eq!(status.code(), Some(130));
    // The cancelled call's result handlers never ran.
    assert!(!run_.path("hook.pid").exists());
}

#[test]
fn a_second_ctrl_c_exits_at_once() {
    // After the first Ctrl-C the run ends and stops its MCP servers; one that ignores SIGTERM
    // holds the exit for the grace period before SIGKILL, and the second Ctrl-C is the way out.
    let run_ = bash_run("sleep 30 & echo $! > sleep.pid; wait");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/stubborn_server.cjs");
    let server_pid_file = run_.path("server.pid");
    std::fs::write(
        run_.path(".toolhost/config.toml"),
        format!(
            "[mcp_servers.stubborn]\ncommand = {:?}\nargs = [{:?}, {:?}, {:?}]\n",
            toolhost_test_support::node(),
            fixture.display().to_string(),
            toolhost_test_support::node_modules().display().to_string(),
            server_pid_file.display().to_string(),
        ),
    )
    .unwrap();
    let mut child = run_.spawn_run(&["--yes", "Sleep"]);
    wait_for_file(&run_.path("sleep.pid"), Duration::from_secs(30));
    let server_pid: u32 = wait_for_file(&server_pid_file, Duration::from_secs(10))
        .trim()
        .parse()
        .unwrap();

    interrupt(child.id());
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        child.try_wait().unwrap().is_none(),
        "stopping the stubborn server holds the exit"
    );
    interrupt(child.id());
    let status = wait_for_exit(&mut child, Duration::from_secs(10));
    let _ = std::process::Command::new("kill")
        .args(["-KILL", &server_pid.to_string()])
        .status();

    assert_eq!(status.code(), Some(130));
}

#[test]
fn the_system_prompt_lists_skill_names_and_descriptions_but_not_their_bodies() {
    let run_ = Run::new(WireFormat::OpenAiChat, vec![Reply::text("Noted.").into()]);
    write_file(
        run_.dirs.home.join(".claude/skills/notes/SKILL.md"),
        "---\nname: notes\ndescription: Take notes.\n---\nSECRET BODY of the skill.\n",
    );
    let done = run(&run_, &["Hi"]);
    assert_eq!(done.status, Some(0), "stderr: {}", done.stderr);
    let sent = run_.requests()[0].body.to_string();
    assert!(sent.contains("# Skills\\n"), "{sent}");
    assert!(sent.contains("- notes: Take notes.\\n"), "{sent}");
    assert!(!sent.contains("SECRET BODY"), "{sent}");
    assert!(
        offered_tools(WireFormat::OpenAiChat, &run_.requests()[0].body)
            .contains(&"read_skill".to_owned())
    );
}

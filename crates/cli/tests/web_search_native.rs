//! WebSearch's first tier through `toolhost run`: the provider's own search, asked in a request
//! of its own, against a replay server that plays the model's turns and the search's answer.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use assert_cmd::Command;
use serde_json::{Value, json};
use toolhost_test_support::{
    CannedResponse, HomeAndWorkspace, ReplayServer, Reply, WireFormat, sse_frames, write_file,
};

/// Variables that would point the run elsewhere.
const VARIABLES: [&str; 10] = [
    "no_proxy",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
];

fn command(dirs: &HomeAndWorkspace) -> Command {
    let mut command = support::toolhost_with_home(&dirs.workspace, &dirs.home);
    for variable in VARIABLES {
        command.env_remove(variable);
    }
    command.timeout(Duration::from_secs(60));
    command
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}

/// The model asks for WebSearch, then answers "Found them." after the result.
fn turns(format: WireFormat, search_answer: Value) -> Vec<CannedResponse> {
    let frames = |reply: &Reply| sse_frames(format, reply).concat();
    vec![
        CannedResponse::sse(frames(&Reply::tool_call(
            "call_1",
            "WebSearch",
            json!({"query": "rust", "count": 2}),
        ))),
        CannedResponse::status(200, search_answer),
        CannedResponse::sse(frames(&Reply::text("Found them."))),
    ]
}

#[test]
fn in_a_run_on_anthropic_web_search_uses_anthropic_s_own_search() {
    let runtime = runtime();
    let search_answer = json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
        "stop_reason": "end_turn", "usage": {"input_tokens": 10, "output_tokens": 5},
        "content": [
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "rust"}},
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [
                {"type": "web_search_result", "url": "https://www.rust-lang.org/", "title": "Rust", "encrypted_content": "e1"},
                {"type": "web_search_result", "url": "https://doc.rust-lang.org/book/", "title": "The Book", "encrypted_content": "e2", "page_age": "2 days"}
            ]},
            {"type": "text", "text": "Rust.", "citations": [
                {"type": "web_search_result_location", "url": "https://www.rust-lang.org/", "title": "Rust", "encrypted_index": "i", "cited_text": "A language empowering everyone."}
            ]}
        ]
    });
    let server = runtime.block_on(ReplayServer::start(turns(
        WireFormat::Anthropic,
        search_answer,
    )));
    let dirs = HomeAndWorkspace::new();
    let output = command(&dirs)
        .env("ANTHROPIC_BASE_URL", &server.url)
        .env("ANTHROPIC_API_KEY", "sk-ant-test")
        .args(["run", "find rust"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "Found them.\n");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(
        requests[1].body["tools"],
        json!([{"type": "web_search_20250305", "name": "web_search", "max_uses": 1}])
    );
    let result = requests[2].body["messages"].to_string();
    assert!(
        result.contains(
            "Results for \\\"rust\\\" (anthropic web_search):\\n\\n1. Rust\\n   https://www.rust-lang.org/\\n   A language empowering everyone.\\n\\n2. The Book\\n   https://doc.rust-lang.org/book/\\n   (page age: 2 days)\\n"
        ),
        "{result}"
    );
}

#[test]
fn in_a_run_on_openai_responses_web_search_uses_openai_s_own_search() {
    let runtime = runtime();
    let search_answer = json!({
        "id": "resp_1", "object": "response", "status": "completed", "model": "gpt-test",
        "output": [
            {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {
                "type": "search", "query": "rust",
                "sources": [{"type": "url", "url": "https://www.rust-lang.org/"}, {"type": "url", "url": "https://crates.io/"}]
            }},
            {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "content": [{
                "type": "output_text",
                "text": "Rust is fast and safe.",
                "annotations": [{"type": "url_citation", "start_index": 0, "end_index": 22, "url": "https://www.rust-lang.org/", "title": "Rust"}]
            }]}
        ],
        "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}
    });
    let server = runtime.block_on(ReplayServer::start(turns(
        WireFormat::OpenAiResponses,
        search_answer,
    )));
    let dirs = HomeAndWorkspace::new();
    write_file(
        dirs.project_config(),
        format!(
            "[providers.responses]\napi = \"openai-responses\"\nbase_url = \"{}/v1\"\nmodel = \"gpt-test\"\n",
            server.url
        ),
    );
    let output = command(&dirs).args(["run", "find rust"]).output().unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "Found them.\n");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[1].path, "/v1/responses");
    assert_eq!(requests[1].body["tools"], json!([{"type": "web_search"}]));
    assert_eq!(
        requests[1].body["include"],
        json!(["web_search_call.action.sources"])
    );
    let result = requests[2].body["input"].to_string();
    assert!(
        result.contains(
            "Results for \\\"rust\\\" (openai web_search):\\n\\n1. Rust\\n   https://www.rust-lang.org/\\n   Rust is fast and safe.\\n\\n2. (no title)\\n   https://crates.io/\\n"
        ),
        "{result}"
    );
}

#[test]
fn native_false_keeps_web_search_off_the_provider_s_search() {
    let runtime = runtime();
    let frames = |reply: &Reply| sse_frames(WireFormat::Anthropic, reply).concat();
    let server = runtime.block_on(ReplayServer::start(vec![
        CannedResponse::sse(frames(&Reply::tool_call(
            "call_1",
            "WebSearch",
            json!({"query": "rust"}),
        ))),
        CannedResponse::sse(frames(&Reply::text("No search here."))),
    ]));
    let dirs = HomeAndWorkspace::new();
    write_file(dirs.project_config(), "[web.search]\nnative = false\n");
    let output = command(&dirs)
        .env("ANTHROPIC_BASE_URL", &server.url)
        .env("ANTHROPIC_API_KEY", "sk-ant-test")
        .args(["run", "find rust"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(
        requests[1].body["messages"]
            .to_string()
            .contains("Web search is unavailable"),
        "{}",
        requests[1].body
    );
}

//! Test fixtures for toolhost. A dev-dependency only: no crate lists it under
//! `[dependencies]`.
//!
//! What the test trees of several crates need lives here, once: a home folder and a workspace
//! in a temp folder ([`HomeAndWorkspace`]), files written with their folders
//! ([`write_file`], [`write_project_config`]), the pid a script wrote ([`read_pid`]) and whether it still runs ([`is_running`]),
//! a free local port ([`free_port`]), and the registry packages `tests/mcp-clients/setup.sh`
//! installs ([`node_modules`], [`node`], [`EverythingHttp`], …), and [`EchoShell`], a
//! stand-in for the Bash tool in permission tests, [`ReplayServer`], which replays canned HTTP
//! responses byte for byte, [`StaticServer`], which serves fixed files (a skill hub), [`HeaderGatedMcpServer`], an MCP
//! server behind an API-key header, and [`test_tools`], small tools that each
//! exercise one part of the tool contract. A fixture only one crate's
//! tests use stays in that crate's `tests/support`.
//!
//! Its centre is [`MockModel`], a scripted mock model server. It listens on `127.0.0.1`,
//! speaks one [`WireFormat`] — OpenAI chat completions, the OpenAI Responses API or Anthropic
//! messages — and plays a script: each request on the format's path takes the next [`Step`],
//! either a [`Reply`] (streamed as SSE, byte for byte as the real API writes it, when the
//! request has `"stream": true`; one JSON body otherwise) or an HTTP error. It records every
//! request before answering it, so a test asserts exactly what the model was sent: the tools,
//! the messages, the tool results in order. And it injects [`Fault`]s: deltas split small, a
//! tool call's name after its id, parallel calls interleaved, truncated arguments
//! ([`Reply::with_raw_arguments`]), a slow first byte, a connection dropped before the first
//! byte or in the middle of a stream and an error event inside a stream (once: the retry gets
//! the clean reply), and statuses such as 429 with `retry-after` or Anthropic's 529.
//!
//! The server is an independent implementation of the wire formats, written from the APIs'
//! documentation, not from toolhost's provider code: a misreading in a provider shows up as a
//! failing test instead of agreeing with itself.
//!
//! # Example
//!
//! ```
//! use serde_json::json;
//! use toolhost_test_support::{Fault, MockModel, Reply, Step, WireFormat};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let model = MockModel::start(
//!     WireFormat::Anthropic,
//!     vec![
//!         // The first attempt is refused; a provider waits two seconds and retries.
//!         Step::Fail { status: 429, retry_after: Some(2), body: "slow down".into() },
//!         // The model asks for a tool, its arguments in 3-byte deltas, and the stream
//!         // breaks after 4 events once; the retry gets the whole reply.
//!         Reply::tool_call("toolu_1", "Read", json!({"path": "hello.txt"}))
//!             .with_fault(Fault::SplitDeltas(3))
//!             .with_fault(Fault::DropMidStream { after_events: 4 })
//!             .into(),
//!         // Then it answers, with usage.
//!         Reply::text("hello.txt says hello.").with_usage(120, 8, 100).into(),
//!     ],
//! )
//! .await;
//!
//! // Point the client under test at `model.url()` (Anthropic) or `model.openai_base_url()`
//! // (OpenAI), run it, then look at what it sent:
//! for request in model.requests() {
//!     assert_eq!(request.path, "/v1/messages");
//!     let _tools = &request.body["tools"];
//! }
//! assert_eq!(model.remaining(), 3);
//! # }
//! ```
//!
//! [`sse_frames`] and [`response_body`] give the exact bytes the server would send for a
//! reply, for unit tests of a parser without a server.

pub mod echo_shell;
pub mod files;
pub mod header_mcp_server;
pub mod home_and_workspace;
mod legacy_sse;
pub mod mock_model;
pub mod node_packages;
pub mod oauth_server;
pub mod ports;
pub mod processes;
mod python_mcp;
pub mod replay_server;
pub mod static_server;
pub mod test_tools;
mod tiny_mcp;

pub use echo_shell::{EchoShell, EchoShellParams};
pub use files::{CONFIG_FILE, copy_tree, write_file, write_project_config};
pub use header_mcp_server::HeaderGatedMcpServer;
pub use home_and_workspace::HomeAndWorkspace;
pub use mock_model::{
    Fault, MockModel, RecordedRequest, Reply, Step, Stop, WireFormat, response_body, sse_frames,
};
pub use node_packages::{EverythingHttp, node, node_modules, npm_entry_point, venv};
pub use oauth_server::{OAuthServer, OAuthServerOptions};
pub use ports::free_port;
pub use processes::{is_running, read_pid};
pub use python_mcp::python_mcp_server;
pub use replay_server::{BodyPiece, CannedResponse, ReplayServer};
pub use static_server::StaticServer;

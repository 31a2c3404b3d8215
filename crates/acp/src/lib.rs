//! toolhost as an [Agent Client Protocol](https://agentclientprotocol.com) agent: an editor
//! (Zed, a JetBrains IDE, Neovim) starts `toolhost acp` and drives the agent over JSON-RPC on
//! its stdin and stdout.
//!
//! This is a face, not a second agent: each ACP session is a
//! [`toolhost_agent::chat::ChatSession`] — the same tool-set builder, loop, permissions,
//! hooks and session store as `toolhost run` and `toolhost chat` — whose events become
//! `session/update` notifications ([`updates`]), whose approvals become
//! `session/request_permission` requests ([`approval`]), whose Read and Write go through
//! the editor's buffers when it offers `fs` ([`editor_files`]), and whose Bash runs in the
//! editor's terminals when it offers `terminal` and `[shell] editor_terminal` is on. The todo
//! list is the editor's plan; the MCP servers' prompts join the slash commands; the model is
//! a session configuration option.
//!
//! The JSON-RPC framing and the protocol's types are the `agent-client-protocol` crate's
//! (protocol v1); requests are parsed here, so that a bad one is answered with an error that
//! names the field ([`requests`]).
//!
//! ```no_run
//! # async fn run() -> Result<(), agent_client_protocol::Error> {
//! let launch = toolhost_acp::AcpLaunch::new(std::env::current_dir().unwrap_or_default());
//! toolhost_acp::serve_stdio(launch).await
//! # }
//! ```

pub mod approval;
mod auth;
mod commands;
mod connection;
pub mod editor_files;
mod editor_servers;
mod launch;
mod models;
mod modes;
mod plan;
mod prompt;
mod replay;
pub mod requests;
mod session;
mod terminals;
mod tool_calls;
pub mod updates;

pub use connection::{serve, serve_stdio};
pub use launch::AcpLaunch;

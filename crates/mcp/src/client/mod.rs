//! The MCP client: other servers' tools as toolhost tools named `mcp__<server>__<tool>`
//! (R29, R30).
//!
//! [`McpClients::start`] starts every configured server at once (stdio servers through
//! `toolhost-exec`'s prepared command: own process group, clean environment plus the
//! configured `env`), each bounded by its `startup_timeout`, and lists their tools; each
//! becomes an [`McpTool`] that goes through the registry's one pipeline. A call forwards
//! progress notifications to `on_update`, sends `notifications/cancelled` when the call is
//! cancelled or runs past `tool_timeout`, and restarts a server that stopped (with backoff).
//! Servers speak stdio, Streamable HTTP, or the legacy HTTP+SSE transport (toolhost's own
//! client, as rmcp has none). In a long-running command, [`McpClients::keep_in_sync`] also
//! starts again, with backoff, the servers that failed at start-up; and a gateway that must
//! answer at once starts them with [`McpStartup::Background`], their tools joining the
//! registry when each is ready. A Streamable HTTP session the server no longer knows (404,
//! or the SDK examples' 400) is replaced on the same call; a call whose connection was
//! refused is made once more; a call past `tool_timeout` pings the server to say whether it
//! is slow or its session is lost.

mod background;
mod call;
mod child_transport;
mod clients;
pub mod config;
mod connection;
pub mod convert;
mod events;
mod headers_helper;
mod http_session;
pub mod naming;
pub mod oauth;
mod prompts;
mod remote;
mod report;
mod resources;
pub mod self_start;
mod session;
mod sse;
mod tool;
mod transport_error;
mod typed_results;

pub use background::{BACKGROUND_START_HOLD, FIRST_START_RETRY};
pub use clients::{McpClients, McpServerFailure, McpStartReport, McpStartup};
pub use config::{
    DEFAULT_STARTUP_TIMEOUT, DEFAULT_TOOL_TIMEOUT, McpServerConfig, McpTransport, expand_variables,
};
pub use connection::MAX_RESTART_BACKOFF;
pub use events::STDERR_TAIL_LINES;
pub use headers_helper::HEADERS_HELPER_TIMEOUT;
pub use naming::{MAX_TOOL_NAME_BYTES, ToolNamer};
pub use prompts::McpPrompt;
pub use resources::{McpResourceTool, resource_tools};
pub use sse::MAX_SSE_EVENT_BYTES;
pub use tool::McpTool;

//! MCP for toolhost: the server that exposes any [`ToolRegistry`](toolhost_core::ToolRegistry)
//! to MCP clients over stdio or Streamable HTTP (R40).
//!
//! The server is written by hand on rmcp's `ServerHandler`, since the registry is dynamic:
//!
//! - `tools/list` lists every registry tool with `inputSchema`, `title` (the label) and the
//!   four annotations, and `notifications/tools/list_changed` follows registry changes;
//! - `tools/call` goes through [`ToolRegistry::execute_with`](toolhost_core::ToolRegistry::execute_with),
//!   the one pipeline: bad arguments come back as an `isError` result naming the parameter;
//!   `details` become `structuredContent` (wrapped as `{"value": ...}` when not an object,
//!   see [`convert::WRAPPED_DETAILS_KEY`]); partial updates become `notifications/progress`
//!   when the client sent a progress token; `notifications/cancelled` cancels the call;
//! - calls that need the user's confirmation ask through `elicitation/create` when the
//!   client supports it ([`ElicitationAuthorizer`]), and a non-interactive policy decides
//!   otherwise ([`RefuseUnconfirmed`] refuses, saying how the user can allow it);
//! - over HTTP, [`HttpServer`] binds loopback unless a token guards it, validates `Host` and
//!   `Origin` against DNS rebinding, checks an optional bearer token and caps request sizes.
//!
//! ```no_run
//! use std::sync::Arc;
//! use toolhost_core::{AllowAll, ToolRegistry};
//! use toolhost_mcp::{ClientPrompts, ElicitationAuthorizer, McpServer};
//!
//! # async fn serve() -> Result<(), toolhost_mcp::ServeError> {
//! let prompts = ClientPrompts::new();
//! let authorizer = ElicitationAuthorizer::new(prompts.clone(), Arc::new(AllowAll));
//! let registry = ToolRegistry::builder().authorizer(Arc::new(authorizer)).build();
//! // registry.register(...) the tools to serve.
//! McpServer::new(Arc::new(registry)).with_prompts(prompts).serve_stdio().await
//! # }
//! ```

mod error;
mod server;

pub use error::ServeError;
pub use server::approval::{
    APPROVAL_TIMEOUT, ClientPrompts, ElicitationAuthorizer, MAX_APPROVAL_ARGUMENTS_CHARS,
    RefuseUnconfirmed, needs_confirmation,
};
pub use server::convert;
pub use server::http::{DEFAULT_ENDPOINT_PATH, HttpOptions, HttpServer, MAX_REQUEST_BODY_BYTES};
pub use server::progress::MAX_PROGRESS_MESSAGE_CHARS;
pub use server::{McpServer, McpSession, SERVER_NAME};

/// rmcp, re-exported so that embedders and tests use the same version.
pub use rmcp;

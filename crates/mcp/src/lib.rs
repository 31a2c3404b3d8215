//! MCP for toolhost: the server that exposes any [`ToolRegistry`](toolhost_core::ToolRegistry)
//! to MCP clients over stdio or Streamable HTTP (R40); the [`client`] that makes other
//! servers' tools `mcp__<server>__<tool>` (R29, R30); and the built-in in-process
//! [`provider`]s with their local HTTP bridge (R30).
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
//! - when the permission policy asks about a call, [`McpApprover`] asks the user of the
//!   call's client through `elicitation/create` when it supports it, and a fallback approver
//!   decides otherwise (for `toolhost serve`: refuse, saying how the user can allow it);
//! - over HTTP, [`HttpServer`] binds loopback unless a token guards it, validates `Host` and
//!   `Origin` against DNS rebinding, checks an optional bearer token and caps request sizes.
//!
//! ```no_run
//! use std::sync::Arc;
//! use toolhost_core::ToolRegistry;
//! use toolhost_core::permission::{NonInteractiveApprover, PermissionPolicy};
//! use toolhost_mcp::{ClientPrompts, McpApprover, McpServer};
//!
//! # async fn serve() -> Result<(), toolhost_mcp::ServeError> {
//! let prompts = ClientPrompts::new();
//! let fallback = Arc::new(NonInteractiveApprover::refusing());
//! let policy = PermissionPolicy::builder()
//!     .approver(Arc::new(McpApprover::new(prompts.clone(), fallback)))
//!     .build();
//! let registry = ToolRegistry::builder().authorizer(Arc::new(policy)).build();
//! // registry.register(...) the tools to serve.
//! McpServer::new(Arc::new(registry)).with_prompts(prompts).serve_stdio().await
//! # }
//! ```

pub mod client;
mod error;
pub mod provider;
mod server;
mod typed_lines;

pub use client::{McpClients, McpServerConfig, McpStartup, McpTransport};
pub use error::ServeError;
pub use provider::{McpProvider, McpProviders, ProviderBridge, ProviderContext};
pub use server::approval::{
    APPROVAL_TIMEOUT, ClientPrompts, MAX_APPROVAL_ARGUMENTS_CHARS, McpApprover,
};
pub use server::catalog::{RESOURCES_PAGE_SIZE, ServedCatalog};
pub use server::convert;
pub use server::hang_up::cancel_on_stdin_hang_up;
pub use server::http::{DEFAULT_ENDPOINT_PATH, HttpOptions, HttpServer, MAX_REQUEST_BODY_BYTES};
pub use server::progress::MAX_PROGRESS_MESSAGE_CHARS;
pub use server::{McpServer, McpSession, SERVER_NAME};

/// rmcp, re-exported so that embedders and tests use the same version.
pub use rmcp;

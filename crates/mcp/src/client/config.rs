//! What a configured MCP server is: its transport, its tool filters and its limits (R42). The
//! types are the configuration's ([`toolhost_config::mcp_server`]), which reads them from the
//! files; the client takes them as they are.

pub use toolhost_config::mcp_server::{
    DEFAULT_STARTUP_TIMEOUT, DEFAULT_TOOL_TIMEOUT, McpServerConfig, McpTransport, expand_variables,
};

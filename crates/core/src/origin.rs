//! Where a tool comes from, as the crate that registers it declares.

use serde::{Deserialize, Serialize};

/// Where a tool comes from. Rules and policies that treat foreign tools differently read
/// this, never the tool's name.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToolOrigin {
    /// Defined by the program itself (toolhost's built-ins, tools an embedder registers).
    #[default]
    BuiltIn,
    /// A tool of an MCP server. Its calls always ask unless a rule allows them (R29), a
    /// `mcp__<server>` rule names every tool of the server, and sub-agents inherit it (R18).
    Mcp {
        /// The server's part of tool names and rules (`github` in `mcp__github__…`).
        server: String,
    },
    /// A custom tool loaded from a module on disk (R31). It never runs without asking unless
    /// a rule allows it, whatever it declares.
    Custom {
        /// The module file that defines it.
        module: String,
    },
}

impl ToolOrigin {
    /// A tool of the MCP server whose name part is `server`.
    pub fn mcp(server: impl Into<String>) -> Self {
        Self::Mcp {
            server: server.into(),
        }
    }

    /// A custom tool defined in `module`.
    pub fn custom(module: impl Into<String>) -> Self {
        Self::Custom {
            module: module.into(),
        }
    }

    /// Whether the tool was written by someone other than the program running it (an MCP
    /// server, a module on disk): such a tool is never taken at its word that it is safe.
    pub fn is_foreign(&self) -> bool {
        !matches!(self, Self::BuiltIn)
    }

    /// The MCP server's name part, for a tool of an MCP server.
    pub fn mcp_server(&self) -> Option<&str> {
        match self {
            Self::Mcp { server } => Some(server),
            _ => None,
        }
    }
}

//! The catalogue over MCP, both ways. [`served`]: what `toolhost serve` offers MCP clients
//! besides tools — slash commands and skills as prompts, the workspace's files, the skills'
//! files and the stored sessions as resources, completions of their arguments.
//! [`upstream_prompts`]: a configured MCP server's prompts as `/mcp__server__prompt` slash
//! commands in `chat` and `run`.
//!
//! It sits between the MCP crate (which speaks the protocol and knows no catalogue) and the
//! catalogue and session crates (which know no protocol), so neither has to know the other.

pub mod served;
pub mod upstream_prompts;

pub use served::WorkspaceCatalog;

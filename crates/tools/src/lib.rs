//! The built-in tools of toolhost: the filesystem tools on a workspace sandbox, and Bash.
//!
//! - [`workspace`]: the sandbox. A [`Workspace`] resolves every path a model gives into a
//!   [`ResolvedPath`] (or refuses it with a message that says why and what to do instead);
//!   tools can open nothing else.
//! - [`fs`]: Read, Write, Edit, MultiEdit, ListDir, Glob and Grep (SPEC R19–R21), one tool
//!   per file. [`filesystem_tools`] returns all seven, in spec order, ready for
//!   [`ToolRegistry::register_all`](toolhost_core::ToolRegistry::register_all).
//! - [`shell`]: Bash (SPEC R22), on the process helper, command policy and sandbox of
//!   `toolhost-exec`.
//! - [`editor_terminal`]: the hook through which Bash runs in an editor's terminal.
//! - [`control`]: Notify (SPEC R28), a desktop notification over D-Bus, else a terminal one.
//! - [`web`]: WebSearch and WebFetch (SPEC R23, R24), with the private-network guard in
//!   front of every fetch and a cache of fetched pages.
//! - [`builtin_tools`] returns every built-in tool of this crate in spec order (R9).
//!
//! ```
//! use std::sync::Arc;
//! use toolhost_core::ToolRegistry;
//! use toolhost_tools::{Workspace, filesystem_tools};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let workspace = Arc::new(Workspace::new(dir.path()).unwrap());
//! let registry = ToolRegistry::new();
//! assert!(registry.register_all(filesystem_tools(workspace)).is_empty());
//! assert_eq!(
//!     registry.names(),
//!     ["Read", "Write", "Edit", "MultiEdit", "ListDir", "Glob", "Grep"]
//! );
//! ```

pub mod control;
pub mod editor_terminal;
pub mod fs;
pub mod shell;
pub mod workspace;

use std::sync::Arc;

use toolhost_core::Tool;

pub use control::Notify;
pub use fs::filesystem_tools;
pub use shell::{Bash, BashParams, BashSettings, CommandEnvironment, NetworkAccess, ShellSandbox};
/// The web tools (WebFetch, WebSearch, the private-network guard), a crate of their own.
pub use toolhost_web as web;
pub use toolhost_web::{WebFetchSettings, WebSearchSettings, web_tools};
pub use workspace::{
    Access, EntryKind, FolderEntry, ReadBeforeWrite, ResolvedPath, RootAccess, Workspace,
    WorkspaceBuilder, WorkspaceError,
};

/// Every built-in tool of this crate on `workspace`, in spec order (R9): the filesystem tools,
/// Bash, then WebSearch and WebFetch.
pub fn builtin_tools(
    workspace: Arc<Workspace>,
    bash: BashSettings,
    search: WebSearchSettings,
    fetch: WebFetchSettings,
) -> Vec<Arc<dyn Tool>> {
    let mut tools = filesystem_tools(Arc::clone(&workspace));
    tools.push(Arc::new(Bash::with_settings(workspace, bash)));
    tools.extend(web_tools(search, fetch));
    tools
}

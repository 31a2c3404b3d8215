//! The filesystem tools (R19–R21): one tool per file, each holding its parameters, its spec,
//! its limits and its `execute`.

use std::sync::Arc;

use toolhost_core::Tool;

use crate::workspace::Workspace;

/// The six filesystem tools on `workspace`, in spec order: Read, Write, Edit, ListDir, Glob, Grep.
pub fn filesystem_tools(workspace: Arc<Workspace>) -> Vec<Arc<dyn Tool>> {
    let _ = workspace;
    Vec::new()
}

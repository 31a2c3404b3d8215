//! A workspace in a temp folder with the filesystem tools registered.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use tempfile::TempDir;
use toolhost_core::{ToolCallResult, ToolRegistry};
use toolhost_test_support::write_file;
use toolhost_tools::{Workspace, filesystem_tools};

/// A temp workspace and a registry holding the six tools on it.
pub struct Bench {
    _dir: TempDir,
    pub root: PathBuf,
    pub registry: ToolRegistry,
}

impl Bench {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        std::fs::create_dir(&root).unwrap();
        let root = root.canonicalize().unwrap();
        let workspace = Arc::new(Workspace::builder(&root).home(None).build().unwrap());
        // The default pipeline, as users get it: 50 000 characters unless a tool sets its own.
        let registry = ToolRegistry::new();
        assert!(
            registry
                .register_all(filesystem_tools(workspace))
                .is_empty()
        );
        Self {
            _dir: dir,
            root,
            registry,
        }
    }

    /// The folder beside the workspace, for things that must stay untouched.
    pub fn outside(&self) -> PathBuf {
        let outside = self.root.parent().unwrap().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        outside
    }

    /// Writes `content` at `path` in the workspace, creating folders.
    pub fn write(&self, path: &str, content: impl AsRef<[u8]>) -> PathBuf {
        write_file(self.root.join(path), content)
    }

    pub fn read(&self, path: &str) -> String {
        std::fs::read_to_string(self.root.join(path)).unwrap()
    }

    pub fn path(&self, path: &str) -> PathBuf {
        self.root.join(path)
    }

    pub async fn call(&self, tool: &str, args: Value) -> ToolCallResult {
        self.registry.execute("test", tool, args).await
    }

    /// Calls and asserts success; returns the text.
    pub async fn ok(&self, tool: &str, args: Value) -> String {
        let result = self.call(tool, args.clone()).await;
        assert!(!result.is_error, "{tool} {args} failed: {}", result.text());
        result.text()
    }

    /// Calls and asserts failure; returns the text.
    pub async fn err(&self, tool: &str, args: Value) -> String {
        let result = self.call(tool, args.clone()).await;
        assert!(
            result.is_error,
            "{tool} {args} succeeded: {}",
            result.text()
        );
        result.text()
    }
}

pub fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

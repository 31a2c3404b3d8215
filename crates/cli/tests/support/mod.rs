//! What the CLI tests share: the `toolhost` binary, run the way a user runs it.

#![allow(dead_code, clippy::unwrap_used)]

use std::path::Path;

use assert_cmd::Command;

/// `toolhost --workspace WORKSPACE`, with `HOME` at `home` so that a developer's own
/// `~/.toolhost/config.toml` cannot change what the tests see.
pub fn toolhost_with_home(workspace: &Path, home: &Path) -> Command {
    let mut command = Command::cargo_bin("toolhost").unwrap();
    command.env("HOME", home).arg("--workspace").arg(workspace);
    command
}

/// `toolhost --workspace WORKSPACE`, with `HOME` in the workspace.
pub fn toolhost(workspace: &Path) -> Command {
    toolhost_with_home(workspace, workspace)
}

//! A Write or Edit killed at any moment leaves the old or the new content, never a mix.
//!
//! The test binary runs itself as the child (`child_rewrites_in_a_loop`, active only with
//! the environment variable set): the child rewrites a file through the real tools in a loop,
//! the parent SIGKILLs it at varying moments and checks the file each time.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use toolhost_core::ToolRegistry;
use toolhost_tools::{Workspace, filesystem_tools};

const CHILD_DIR: &str = "TOOLHOST_CRASH_CHILD_DIR";
const CHILD_TOOL: &str = "TOOLHOST_CRASH_CHILD_TOOL";
/// Large enough that a write takes a while, so kills land inside writes.
const CONTENT_BYTES: usize = 4 << 20;

fn content(state: u8) -> String {
    let body = format!("{}\n", "x".repeat(99)).repeat(CONTENT_BYTES / 100);
    format!("state={state}\n{body}")
}

#[test]
fn child_rewrites_in_a_loop() {
    let (Ok(dir), Ok(tool)) = (std::env::var(CHILD_DIR), std::env::var(CHILD_TOOL)) else {
        return;
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let registry = ToolRegistry::new();
    let workspace = Arc::new(Workspace::new(&dir).unwrap());
    assert!(
        registry
            .register_all(filesystem_tools(workspace))
            .is_empty()
    );
    let contents = [content(0), content(1)];
    let file = Path::new(&dir).join("file.txt");
    loop {
        // A killed predecessor may have left either state: flip whichever is there.
        let current = usize::from(
            std::fs::read_to_string(&file)
                .unwrap()
                .starts_with("state=1"),
        );
        let next = 1 - current;
        let args = if tool == "Write" {
            json!({"path": "file.txt", "content": contents[next]})
        } else {
            json!({"path": "file.txt", "old_string": format!("state={current}\n"), "new_string": format!("state={next}\n")})
        };
        let result = runtime.block_on(registry.execute("crash", &tool, args));
        assert!(!result.is_error, "{}", result.text());
    }
}

fn kill_repeatedly(tool: &str) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file.txt");
    std::fs::write(&file, content(0)).unwrap();
    let expected = [content(0), content(1)];
    let mut states_seen = [false, false];
    let exe = std::env::current_exe().unwrap();
    for attempt in 0..24u64 {
        let before = std::fs::metadata(&file).unwrap().modified().unwrap();
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "child_rewrites_in_a_loop",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_DIR, dir.path())
            .env(CHILD_TOOL, tool)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Let the child finish at least one write (however slow the machine), then kill it at
        // a varying moment of the next ones.
        wait_for_a_change(&file, before);
        std::thread::sleep(Duration::from_millis(attempt * 17 % 120));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let now = std::fs::read_to_string(&file).unwrap();
        assert!(
            now == expected[0] || now == expected[1],
            "{tool} killed after attempt {attempt} left {} bytes starting {:?}",
            now.len(),
            &now[..now.len().min(20)]
        );
        states_seen[usize::from(now == expected[1])] = true;
    }
    // The children did write: both states were left behind at some kill.
    assert_eq!(
        states_seen,
        [true, true],
        "{tool}: the children never changed the file"
    );
    assert_only_temp_leftovers(dir.path());
}

/// Waits until `file` was replaced after `before`; fails when no write lands within a minute.
fn wait_for_a_change(file: &Path, before: std::time::SystemTime) {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while std::fs::metadata(file)
        .and_then(|m| m.modified())
        .is_ok_and(|m| m == before)
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the child never wrote the file"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// A killed writer may leave its hidden temporary file; never anything else.
fn assert_only_temp_leftovers(dir: &Path) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            name == "file.txt"
                || (name.starts_with(".file.txt.toolhost-") && name.ends_with(".tmp")),
            "unexpected file {name}"
        );
    }
}

#[test]
fn write_killed_at_any_moment_leaves_old_or_new_content() {
    kill_repeatedly("Write");
}

#[test]
fn edit_killed_at_any_moment_leaves_old_or_new_content() {
    kill_repeatedly("Edit");
}

//! MultiEdit through the real `toolhost call`: several replacements of one file applied in
//! order, all or none, matched as Edit matches, under Edit's permission rules; and Claude
//! Code's agents that list `MultiEdit` are offered it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;

use predicates::prelude::*;
use pretty_assertions::assert_eq;
use support::toolhost;

fn call(dir: &Path, args: &str) -> assert_cmd::assert::Assert {
    toolhost(dir)
        .args(["call", "MultiEdit", args, "--yes"])
        .assert()
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap()
}

const SOURCE: &str = "fn main() {\n    let total = add(1, 2);\n    println!(\"{total}\");\n}\n\nfn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n";

#[test]
fn edits_apply_in_order_each_to_what_the_one_before_left() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("main.rs"), SOURCE).unwrap();
    call(
        dir.path(),
        r#"{"file_path": "main.rs", "edits": [
            {"old_string": "add(1, 2)", "new_string": "sum(1, 2)"},
            {"old_string": "fn add(", "new_string": "fn sum("},
            {"old_string": "sum", "new_string": "plus", "replace_all": true}
        ]}"#,
    )
    .success()
    .stdout(predicate::str::contains("3 edits, 4 replacements."))
    .stdout(predicate::str::contains("3. replaced 2 occurrences."));
    assert_eq!(read(dir.path(), "main.rs"), SOURCE.replace("add(", "plus("));
}

#[test]
fn one_edit_that_fails_leaves_the_file_untouched_and_says_which() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("main.rs"), SOURCE).unwrap();
    call(
        dir.path(),
        r#"{"path": "main.rs", "edits": [
            {"old_string": "a + b", "new_string": "a.wrapping_add(b)"},
            {"old_string": "fn subtract(", "new_string": "fn minus("}
        ]}"#,
    )
    .code(1)
    .stderr(predicate::str::contains(
        "edit 2 of 2: old_string was not found in",
    ))
    .stderr(predicate::str::contains("Nothing was written."));
    assert_eq!(read(dir.path(), "main.rs"), SOURCE);

    // Edit's ambiguity message, naming the edit.
    call(
        dir.path(),
        r#"{"path": "main.rs", "edits": [{"old_string": "fn ", "new_string": "pub fn "}]}"#,
    )
    .code(1)
    .stderr(predicate::str::contains(
        "edit 1 of 1: old_string matches 2 places",
    ));
    call(dir.path(), r#"{"path": "main.rs", "edits": []}"#)
        .code(1)
        .stderr(predicate::str::contains("edits is empty"));
    assert_eq!(read(dir.path(), "main.rs"), SOURCE);
}

#[test]
fn an_empty_first_old_string_creates_the_file_and_rules_for_edit_cover_multi_edit() {
    let dir = tempfile::tempdir().unwrap();
    call(
        dir.path(),
        r#"{"path": "new.txt", "edits": [
            {"old_string": "", "new_string": "alpha\nbeta\n"},
            {"old_string": "beta", "new_string": "gamma"}
        ]}"#,
    )
    .success()
    .stdout(predicate::str::contains("Created"));
    assert_eq!(read(dir.path(), "new.txt"), "alpha\ngamma\n");

    std::fs::create_dir(dir.path().join("locked")).unwrap();
    std::fs::write(dir.path().join("locked/a.txt"), "one\n").unwrap();
    toolhost(dir.path())
        .args([
            "--deny",
            "Edit(locked/**)",
            "call",
            "MultiEdit",
            r#"{"path": "locked/a.txt", "edits": [{"old_string": "one", "new_string": "two"}]}"#,
            "--yes",
        ])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("Edit(locked/**)"));
    assert_eq!(read(dir.path(), "locked/a.txt"), "one\n");
}

//! What the filesystem tools do where peers' test suites caught them out (issue 34), through
//! the real `toolhost call`: read-only files, Edit's whitespace-tolerant matches and their
//! snippets, an empty `old_string`, hidden folders in Grep, look-alike paths in Read, and
//! Claude Code's `file_path`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use predicates::prelude::*;
use pretty_assertions::assert_eq;
use support::toolhost;

fn call(dir: &Path, tool: &str, args: &str) -> assert_cmd::assert::Assert {
    toolhost(dir).args(["call", tool, args, "--yes"]).assert()
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap()
}

/// A 0444 file; the test may run as root, whom the kernel lets write anything, so what is
/// checked is that the tool refused by the mode bits and the file is unchanged.
fn read_only_file(dir: &Path, name: &str) {
    std::fs::write(dir.join(name), "keep me\n").unwrap();
    std::fs::set_permissions(dir.join(name), std::fs::Permissions::from_mode(0o444)).unwrap();
}

#[test]
fn write_and_edit_refuse_a_read_only_file_and_say_so() {
    let dir = tempfile::tempdir().unwrap();
    read_only_file(dir.path(), "f.txt");
    call(dir.path(), "Write", r#"{"path":"f.txt","content":"x"}"#)
        .code(1)
        .stderr(predicate::str::contains("f.txt is read-only (mode 0444)"));
    call(
        dir.path(),
        "Edit",
        r#"{"path":"f.txt","old_string":"keep","new_string":"lose"}"#,
    )
    .code(1)
    .stderr(predicate::str::contains("f.txt is read-only (mode 0444)"));
    assert_eq!(read(dir.path(), "f.txt"), "keep me\n");
    let mode = std::fs::metadata(dir.path().join("f.txt"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o444);
}

#[test]
fn a_custom_tools_write_file_refuses_a_read_only_file() {
    let dir = tempfile::tempdir().unwrap();
    toolhost_test_support::write_file(
        dir.path().join(".toolhost/tools/files.js"),
        r#"
        import { writeFile } from "node:fs/promises";
        export default () => ({ name: "files", description: "Writes a file", async execute(_, p) {
          try { await writeFile(p.path, p.write); return { content: [{ type: "text", text: "written" }] }; }
          catch (error) { return { content: [{ type: "text", text: `${error.code}: ${error.message}` }] }; }
        } });
        "#,
    );
    read_only_file(dir.path(), "f.txt");
    call(dir.path(), "files", r#"{"path":"f.txt","write":"x"}"#)
        .success()
        .stdout(predicate::str::contains(
            "EACCES: f.txt is read-only (mode 0444)",
        ));
    assert_eq!(read(dir.path(), "f.txt"), "keep me\n");
}

#[test]
fn an_indentation_normalised_edit_leaves_blank_lines_empty_and_indents_once() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.txt"), "  a\n\n  b\n").unwrap();
    call(
        dir.path(),
        "Edit",
        r#"{"path":"t.txt","old_string":"a\n\nb","new_string":"x\n\ny"}"#,
    )
    .success();
    assert_eq!(read(dir.path(), "t.txt"), "  x\n\n  y\n");
    std::fs::write(dir.path().join("t.txt"), "  a\n\n  b\n").unwrap();
    call(
        dir.path(),
        "Edit",
        r#"{"path":"t.txt","old_string":"a\n\nb","new_string":"  x\n\n  y"}"#,
    )
    .success();
    assert_eq!(read(dir.path(), "t.txt"), "  x\n\n  y\n");
}

#[test]
fn edit_with_an_empty_old_string_creates_a_missing_or_empty_file_only() {
    let dir = tempfile::tempdir().unwrap();
    call(
        dir.path(),
        "Edit",
        r#"{"path":"new/n.txt","old_string":"","new_string":"hello\n"}"#,
    )
    .success()
    .stdout(predicate::str::contains("Created new/n.txt"));
    assert_eq!(read(dir.path(), "new/n.txt"), "hello\n");
    std::fs::write(dir.path().join("empty.txt"), "").unwrap();
    call(
        dir.path(),
        "Edit",
        r#"{"path":"empty.txt","old_string":"","new_string":"filled\n"}"#,
    )
    .success();
    assert_eq!(read(dir.path(), "empty.txt"), "filled\n");
    call(
        dir.path(),
        "Edit",
        r#"{"path":"new/n.txt","old_string":"","new_string":"gone\n"}"#,
    )
    .code(1)
    .stderr(predicate::str::contains("has content, which would be lost"));
    assert_eq!(read(dir.path(), "new/n.txt"), "hello\n");
}

#[test]
fn grep_searches_hidden_folders_but_not_git_and_honours_gitignore() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join(".github/workflows")).unwrap();
    std::fs::write(root.join(".github/workflows/ci.yml"), "run: cargo test\n").unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join(".git/COMMIT_EDITMSG"), "cargo test\n").unwrap();
    std::fs::create_dir_all(root.join(".cache")).unwrap();
    std::fs::write(root.join(".cache/log"), "cargo test\n").unwrap();
    std::fs::write(root.join(".gitignore"), ".cache/\n").unwrap();
    toolhost(root)
        .args(["call", "Grep", r#"{"pattern":"cargo test"}"#])
        .assert()
        .success()
        .stdout(".github/workflows/ci.yml\n");
}

#[test]
fn replace_all_takes_every_whitespace_tolerant_match_and_shows_the_file_as_written() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("r.py"),
        "count  =  1\nprint(count)\ncount  =  1\n",
    )
    .unwrap();
    call(
        dir.path(),
        "Edit",
        r#"{"path":"r.py","old_string":"count = 1","new_string":"total = 1","replace_all":true}"#,
    )
    .success()
    .stdout(predicate::str::contains("replaced 2 occurrences"))
    .stdout(predicate::str::contains(
        "     1\ttotal = 1\n     2\tprint(count)\n     3\ttotal = 1\n",
    ));
    assert_eq!(
        read(dir.path(), "r.py"),
        "total = 1\nprint(count)\ntotal = 1\n"
    );
    // Exact replace_all: every snippet line comes from the file as written, none still old.
    std::fs::write(
        dir.path().join("n.rs"),
        "let a = old;\nlet b = old;\nf(old);\n",
    )
    .unwrap();
    let output = call(
        dir.path(),
        "Edit",
        r#"{"path":"n.rs","old_string":"old","new_string":"new","replace_all":true}"#,
    )
    .success();
    let stdout = String::from_utf8(output.get_output().stdout.clone()).unwrap();
    assert!(!stdout.contains("old"), "{stdout}");
    assert!(
        stdout.contains("     1\tlet a = new;\n     2\tlet b = new;\n     3\tf(new);\n"),
        "{stdout}"
    );
}

#[test]
fn edit_tolerates_whitespace_runs_inside_a_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("w.rs"), "fn f() { let  x =\t1; }\n").unwrap();
    call(
        dir.path(),
        "Edit",
        r#"{"path":"w.rs","old_string":"let x = 1;","new_string":"let x = 2;"}"#,
    )
    .success();
    assert_eq!(read(dir.path(), "w.rs"), "fn f() { let x = 2; }\n");
}

#[test]
fn edit_tries_literal_escapes_unescaped_when_that_matches_once() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("q.py"), "say(\"hi\")\n\tdone()\n").unwrap();
    call(
        dir.path(),
        "Edit",
        r#"{"path":"q.py","old_string":"say(\\\"hi\\\")\\n\\tdone()","new_string":"say(\\\"bye\\\")\\n\\tdone()"}"#,
    )
    .success()
    .stdout(predicate::str::contains("read as the characters they stand for"));
    assert_eq!(read(dir.path(), "q.py"), "say(\"bye\")\n\tdone()\n");
}

#[test]
fn read_reads_the_one_file_whose_name_differs_only_in_look_alike_characters() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("Shot 10.00\u{202F}AM.txt"), "narrow\n").unwrap();
    std::fs::write(dir.path().join("cafe\u{301}.txt"), "nfd\n").unwrap();
    toolhost(dir.path())
        .args(["call", "Read", r#"{"path":"Shot 10.00 AM.txt"}"#])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "Shot 10.00\\u{202F}AM.txt. Use that path from now on.]",
        ))
        .stdout(predicate::str::contains("     1\tnarrow"));
    toolhost(dir.path())
        .args(["call", "Read", "{\"path\":\"caf\u{e9}.txt\"}"])
        .assert()
        .success()
        .stdout(predicate::str::contains("     1\tnfd"));
    // Two look-alikes: none is read, and the difference is shown.
    std::fs::write(dir.path().join("it\u{2019}s.md"), "a").unwrap();
    std::fs::write(dir.path().join("it\u{2018}s.md"), "b").unwrap();
    toolhost(dir.path())
        .args(["call", "Read", r#"{"path":"it's.md"}"#])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("it\\u{2019}s.md"))
        .stderr(predicate::str::contains("it\\u{2018}s.md"));
}

#[test]
fn read_write_and_edit_accept_file_path_for_path() {
    let dir = tempfile::tempdir().unwrap();
    call(
        dir.path(),
        "Write",
        r#"{"file_path":"a.txt","content":"one\n"}"#,
    )
    .success();
    call(
        dir.path(),
        "Edit",
        r#"{"file_path":"a.txt","old_string":"one","new_string":"two"}"#,
    )
    .success();
    toolhost(dir.path())
        .args(["call", "Read", r#"{"file_path":"a.txt"}"#])
        .assert()
        .success()
        .stdout("     1\ttwo\n");
}

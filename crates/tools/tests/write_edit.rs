//! `Write`, `Edit` and `ListDir` on real files.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::os::unix::fs::{PermissionsExt as _, symlink};

use pretty_assertions::assert_eq;
use serde_json::json;
use support::{Bench, exists};

#[tokio::test]
async fn write_creates_parents_and_reports_what_it_wrote() {
    let bench = Bench::new();
    let text = bench
        .ok(
            "Write",
            json!({"path": "a/b/c.txt", "content": "one\ntwo\n"}),
        )
        .await;
    assert_eq!(text, "Created a/b/c.txt: 2 lines, 8 B.");
    assert_eq!(bench.read("a/b/c.txt"), "one\ntwo\n");
}

#[tokio::test]
async fn write_replaces_atomically_and_keeps_permissions() {
    let bench = Bench::new();
    let path = bench.write("run.sh", "old");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o751)).unwrap();
    let text = bench
        .ok("Write", json!({"path": "run.sh", "content": "#!/bin/sh\n"}))
        .await;
    assert_eq!(text, "Replaced (was 3 B) run.sh: 1 line, 10 B.");
    assert_eq!(bench.read("run.sh"), "#!/bin/sh\n");
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o751);
    // No temporary file is left behind.
    let names: Vec<_> = std::fs::read_dir(&bench.root)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["run.sh"]);
}

#[tokio::test]
async fn write_to_a_folder_or_outside_is_refused() {
    let bench = Bench::new();
    bench.write("dir/x", "");
    let text = bench
        .err("Write", json!({"path": "dir", "content": "x"}))
        .await;
    assert!(text.contains("it is a folder"), "{text}");
    let outside = bench.outside();
    symlink(&outside, bench.path("out")).unwrap();
    let text = bench
        .err("Write", json!({"path": "out/new.txt", "content": "x"}))
        .await;
    assert!(text.contains("is outside the workspace"), "{text}");
    assert!(!exists(&outside.join("new.txt")));
    let text = bench
        .err("Write", json!({"path": "/tmp/../etc/evil", "content": "x"}))
        .await;
    assert!(text.contains("is outside the workspace"), "{text}");
}

#[tokio::test]
async fn write_through_an_inside_symlink_replaces_the_target() {
    let bench = Bench::new();
    bench.write("real.txt", "old");
    symlink("real.txt", bench.path("alias.txt")).unwrap();
    bench
        .ok("Write", json!({"path": "alias.txt", "content": "new"}))
        .await;
    assert_eq!(bench.read("real.txt"), "new");
    assert!(
        std::fs::symlink_metadata(bench.path("alias.txt"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[tokio::test]
async fn write_with_missing_content_names_the_parameter() {
    let bench = Bench::new();
    let text = bench.err("Write", json!({"path": "a.txt"})).await;
    assert!(text.contains("content"), "{text}");
}

#[tokio::test]
async fn edit_replaces_a_unique_string_and_shows_the_changed_lines() {
    let bench = Bench::new();
    bench.write(
        "a.rs",
        "fn a() {}\nfn b() {}\nfn c() {}\nfn d() {}\nfn e() {}\nfn f() {}\n",
    );
    let text = bench
        .ok("Edit", json!({"path": "a.rs", "old_string": "fn d() {}", "new_string": "fn d() {\n    x();\n}"}))
        .await;
    assert_eq!(
        text,
        "Edited a.rs: replaced 1 occurrence.\n\n     2\tfn b() {}\n     3\tfn c() {}\n     4\tfn d() {\n     5\t    x();\n     6\t}\n     7\tfn e() {}\n     8\tfn f() {}\n"
    );
    assert_eq!(
        bench.read("a.rs"),
        "fn a() {}\nfn b() {}\nfn c() {}\nfn d() {\n    x();\n}\nfn e() {}\nfn f() {}\n"
    );
}

#[tokio::test]
async fn edit_refuses_ambiguous_match_with_count_and_lines() {
    let bench = Bench::new();
    bench.write("a.txt", "x = 1\ny = 2\nx = 1\nz\nx = 1\n");
    let text = bench
        .err(
            "Edit",
            json!({"path": "a.txt", "old_string": "x = 1", "new_string": "x = 2"}),
        )
        .await;
    assert!(
        text.contains("old_string matches 3 places in a.txt (lines 1, 3, 5)"),
        "{text}"
    );
    assert!(text.contains("set replace_all to true"), "{text}");
    assert_eq!(bench.read("a.txt"), "x = 1\ny = 2\nx = 1\nz\nx = 1\n");
}

#[tokio::test]
async fn edit_replace_all_changes_every_occurrence() {
    let bench = Bench::new();
    bench.write("a.txt", "x = 1\ny = 2\nx = 1\n");
    let text = bench
        .ok("Edit", json!({"path": "a.txt", "old_string": "x = 1", "new_string": "x = 3", "replace_all": true}))
        .await;
    assert!(
        text.starts_with("Edited a.txt: replaced 2 occurrences."),
        "{text}"
    );
    assert_eq!(bench.read("a.txt"), "x = 3\ny = 2\nx = 3\n");
}

#[tokio::test]
async fn edit_refuses_identical_and_empty_strings() {
    let bench = Bench::new();
    bench.write("a.txt", "abc\n");
    let text = bench
        .err(
            "Edit",
            json!({"path": "a.txt", "old_string": "abc", "new_string": "abc"}),
        )
        .await;
    assert!(
        text.contains("old_string and new_string are identical"),
        "{text}"
    );
    let text = bench
        .err(
            "Edit",
            json!({"path": "a.txt", "old_string": "", "new_string": "abc"}),
        )
        .await;
    assert!(text.contains("old_string is empty"), "{text}");
    assert!(text.contains("use Write"), "{text}");
}

#[tokio::test]
async fn edit_of_a_missing_file_points_to_write() {
    let bench = Bench::new();
    let text = bench
        .err(
            "Edit",
            json!({"path": "nope.txt", "old_string": "a", "new_string": "b"}),
        )
        .await;
    assert!(text.contains("nope.txt does not exist"), "{text}");
    assert!(
        text.contains("to create one, give an empty old_string or use Write"),
        "{text}"
    );
}

#[tokio::test]
async fn edit_keeps_crlf_line_endings_and_the_bom() {
    let bench = Bench::new();
    bench.write("win.txt", "\u{FEFF}first\r\nsecond\r\nthird\r\n");
    bench
        .ok("Edit", json!({"path": "win.txt", "old_string": "first\nsecond", "new_string": "one\ntwo\nthree"}))
        .await;
    assert_eq!(
        bench.read("win.txt"),
        "\u{FEFF}one\r\ntwo\r\nthree\r\nthird\r\n"
    );
}

#[tokio::test]
async fn edit_falls_back_to_an_indentation_insensitive_match_and_says_so() {
    let bench = Bench::new();
    bench.write("a.go", "func f() {\n\tif x {\n\t\treturn 1   \n\t}\n}\n");
    let text = bench
        .ok(
            "Edit",
            json!({
                "path": "a.go",
                "old_string": "    if x {\n        return 1\n    }\n",
                "new_string": "    if x {\n        return 2\n    }\n"
            }),
        )
        .await;
    assert!(
        text.contains("a match that ignores indentation style and whitespace was used"),
        "{text}"
    );
    assert_eq!(
        bench.read("a.go"),
        "func f() {\n\tif x {\n\t\treturn 2\n\t}\n}\n"
    );
}

#[tokio::test]
async fn edit_falls_back_to_a_typography_insensitive_match() {
    let bench = Bench::new();
    bench.write("doc.md", "He said “hello” — twice.\n");
    let text = bench
        .ok("Edit", json!({"path": "doc.md", "old_string": "said \"hello\" - twice", "new_string": "said \"bye\""}))
        .await;
    assert!(text.contains("typographic quotes and dashes"), "{text}");
    assert_eq!(bench.read("doc.md"), "He said \"bye\".\n");
}

#[tokio::test]
async fn edit_does_not_use_an_ambiguous_normalised_match() {
    let bench = Bench::new();
    bench.write("a.py", "def f():\n\treturn 1\ndef g():\n\treturn 1\n");
    let text = bench
        .err(
            "Edit",
            json!({"path": "a.py", "old_string": "    return 1", "new_string": "    return 2"}),
        )
        .await;
    assert!(text.contains("finds 2 places (lines 2, 4)"), "{text}");
    assert!(text.contains("used only when unique"), "{text}");
}

#[tokio::test]
async fn edit_with_no_match_shows_the_closest_region() {
    let bench = Bench::new();
    bench.write(
        "a.rs",
        "fn main() {\n    let total = compute(1, 2);\n    println!(\"{total}\");\n}\n",
    );
    let text = bench
        .err(
            "Edit",
            json!({"path": "a.rs", "old_string": "let totl = compute(1, 3);", "new_string": "x"}),
        )
        .await;
    assert!(text.contains("old_string was not found in a.rs"), "{text}");
    assert!(text.contains("The most similar region"), "{text}");
    assert!(
        text.contains("     2\t    let total = compute(1, 2);"),
        "{text}"
    );
    assert!(text.contains("Copy the exact text"), "{text}");
}

#[tokio::test]
async fn edit_refuses_files_that_are_not_utf8() {
    let bench = Bench::new();
    bench.write("bin", b"\xff\xfe\x00abc");
    let text = bench
        .err(
            "Edit",
            json!({"path": "bin", "old_string": "abc", "new_string": "x"}),
        )
        .await;
    assert!(text.contains("is not valid UTF-8 text"), "{text}");
}

#[tokio::test]
async fn list_dir_sorts_marks_folders_sizes_and_symlinks() {
    let bench = Bench::new();
    bench.write("b.txt", "12345");
    bench.write("a/inner.txt", "");
    bench.write(".hidden", "");
    symlink("b.txt", bench.path("c")).unwrap();
    let text = bench.ok("ListDir", json!({"path": "."})).await;
    assert_eq!(
        text,
        ".hidden  (0 B)\na/\nb.txt  (5 B)\nc -> b.txt\n"
            .to_owned()
            .replace(".hidden", ". (4 entries):\n.hidden")
    );
}

#[tokio::test]
async fn list_dir_caps_entries_with_a_note() {
    let bench = Bench::new();
    for n in 0..1005 {
        bench.write(&format!("many/f{n:04}"), "");
    }
    let text = bench.ok("ListDir", json!({"path": "many"})).await;
    assert_eq!(
        text.lines().filter(|line| line.starts_with('f')).count(),
        1000
    );
    assert!(
        text.contains("[5 more entries not shown (limit 1000)"),
        "{text}"
    );
}

#[tokio::test]
async fn list_dir_errors_point_to_the_right_tool() {
    let bench = Bench::new();
    bench.write("a.txt", "");
    let text = bench.err("ListDir", json!({"path": "a.txt"})).await;
    assert!(
        text.contains("a.txt is a file, not a folder. Use Read"),
        "{text}"
    );
    let text = bench.err("ListDir", json!({"path": "missing"})).await;
    assert!(text.contains("missing does not exist"), "{text}");
    let text = bench.err("ListDir", json!({"path": ".."})).await;
    assert!(text.contains("is outside the workspace"), "{text}");
}

//! `Glob` and `Grep` on real trees: ignore rules, hidden files, ordering, modes and limits.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::{Duration, SystemTime};

use pretty_assertions::assert_eq;
use serde_json::json;
use support::Bench;

fn touch(bench: &Bench, path: &str, seconds_ago: u64) {
    let file = std::fs::File::options()
        .write(true)
        .open(bench.path(path))
        .unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(seconds_ago))
        .unwrap();
}

fn tree() -> Bench {
    let bench = Bench::new();
    bench.write("src/main.rs", "fn main() {\n    helper();\n}\n");
    bench.write("src/lib/helper.rs", "pub fn helper() {}\n// TODO: more\n");
    bench.write("README.md", "# Title\nSee helper.\n");
    bench.write("target/debug/out.rs", "fn helper() {}\n");
    bench.write(".gitignore", "target/\n");
    bench.write(".github/ci.yml", "helper: yes\n");
    bench.write("data.bin", b"helper\0\x01\x02");
    touch(&bench, "src/main.rs", 300);
    touch(&bench, "src/lib/helper.rs", 100);
    touch(&bench, "README.md", 200);
    bench
}

#[tokio::test]
async fn glob_honours_gitignore_outside_git_and_sorts_newest_first() {
    let bench = tree();
    assert_eq!(
        bench.ok("Glob", json!({"pattern": "*.rs"})).await,
        "src/lib/helper.rs\nsrc/main.rs"
    );
    assert_eq!(
        bench.ok("Glob", json!({"pattern": "**/*.{rs,md}"})).await,
        "src/lib/helper.rs\nREADME.md\nsrc/main.rs"
    );
}

#[tokio::test]
async fn glob_path_patterns_are_relative_to_path() {
    let bench = tree();
    assert_eq!(
        bench.ok("Glob", json!({"pattern": "src/*.rs"})).await,
        "src/main.rs"
    );
    assert_eq!(
        bench
            .ok("Glob", json!({"pattern": "*.rs", "path": "src/lib"}))
            .await,
        "src/lib/helper.rs"
    );
    assert_eq!(
        bench
            .ok("Glob", json!({"pattern": "lib/**", "path": "src"}))
            .await,
        "src/lib/helper.rs"
    );
}

#[tokio::test]
async fn glob_includes_hidden_files_only_when_named() {
    let bench = tree();
    assert!(
        !bench
            .ok("Glob", json!({"pattern": "*.yml"}))
            .await
            .contains("ci.yml")
    );
    assert_eq!(
        bench.ok("Glob", json!({"pattern": ".github/*.yml"})).await,
        ".github/ci.yml"
    );
}

#[tokio::test]
async fn glob_caps_results_with_a_note() {
    let bench = Bench::new();
    for n in 0..1010 {
        bench.write(&format!("many/f{n}.txt"), "");
    }
    let text = bench.ok("Glob", json!({"pattern": "*.txt"})).await;
    assert_eq!(
        text.lines()
            .filter(|line| line.starts_with("many/"))
            .count(),
        1000
    );
    assert!(
        text.ends_with(
            "[10 more files not shown (limit 1000), 1010 in all. Narrow the pattern or the path.]"
        ),
        "{text}"
    );
}

#[tokio::test]
async fn glob_bad_inputs_get_clear_errors() {
    let bench = tree();
    let text = bench.err("Glob", json!({"pattern": "src/[a"})).await;
    assert!(text.contains("invalid glob pattern"), "{text}");
    let text = bench.err("Glob", json!({"pattern": "/etc/*"})).await;
    assert!(
        text.contains("must be relative to the folder searched"),
        "{text}"
    );
    let text = bench.err("Glob", json!({"pattern": "../*"})).await;
    assert!(
        text.contains("must be relative to the folder searched"),
        "{text}"
    );
    let text = bench
        .err("Glob", json!({"pattern": "*", "path": ".."}))
        .await;
    assert!(text.contains("is outside the workspace"), "{text}");
    let text = bench
        .err("Glob", json!({"pattern": "*", "path": "README.md"}))
        .await;
    assert!(text.contains("is a file, not a folder"), "{text}");
    // Nothing matched: the result says what kinds of file are there (target/ is ignored, and
    // hidden files skipped, as in the search itself), and which tool finds a name.
    assert_eq!(
        bench.ok("Glob", json!({"pattern": "*.zig"})).await,
        "No files match \"*.zig\" in . (ignored and hidden files are skipped unless the pattern \
         names them). The files there are mostly *.rs (2), *.bin (1), *.md (1). To find the file \
         that defines or mentions a name, use Grep."
    );
    let empty = Bench::new();
    empty.write("LICENSE", "MIT\n");
    assert_eq!(
        empty.ok("Glob", json!({"pattern": "*.zig"})).await,
        "No files match \"*.zig\" in . (ignored and hidden files are skipped unless the pattern \
         names them)."
    );
}

#[tokio::test]
async fn glob_does_not_follow_symlinks_out_of_the_workspace() {
    let bench = tree();
    let outside = bench.outside();
    std::fs::write(outside.join("secret.rs"), "").unwrap();
    std::os::unix::fs::symlink(&outside, bench.path("escape")).unwrap();
    let text = bench.ok("Glob", json!({"pattern": "**/*.rs"})).await;
    assert!(!text.contains("secret"), "{text}");
}

#[tokio::test]
async fn grep_lists_files_with_matches_by_default_searching_hidden_skipping_ignored_and_binary() {
    let bench = tree();
    bench.write(".git/config", "helper\n");
    // Hidden files are searched (as `rg --hidden`), .git itself never.
    assert_eq!(
        bench.ok("Grep", json!({"pattern": "helper"})).await,
        ".github/ci.yml\nREADME.md\nsrc/lib/helper.rs\nsrc/main.rs"
    );
}

#[tokio::test]
async fn grep_content_mode_prints_path_line_text() {
    let bench = tree();
    assert_eq!(
        bench
            .ok(
                "Grep",
                json!({"pattern": "helper\\(", "output_mode": "content"})
            )
            .await,
        "src/lib/helper.rs:1:pub fn helper() {}\nsrc/main.rs:2:    helper();"
    );
}

#[tokio::test]
async fn grep_context_marks_context_lines_and_breaks() {
    let bench = Bench::new();
    bench.write("a.txt", "1\n2\nhit\n4\n5\n6\n7\nhit\n9\n");
    assert_eq!(
        bench
            .ok(
                "Grep",
                json!({"pattern": "hit", "output_mode": "content", "context": 1})
            )
            .await,
        "a.txt-2-2\na.txt:3:hit\na.txt-4-4\n--\na.txt-7-7\na.txt:8:hit\na.txt-9-9"
    );
}

#[tokio::test]
async fn grep_count_mode_and_include_filter() {
    let bench = tree();
    assert_eq!(
        bench
            .ok(
                "Grep",
                json!({"pattern": "helper", "output_mode": "count", "include": "*.rs"})
            )
            .await,
        "src/lib/helper.rs:1\nsrc/main.rs:1"
    );
}

#[tokio::test]
async fn grep_case_insensitive_and_multiline() {
    let bench = Bench::new();
    bench.write("a.rs", "fn Main() {\n    body();\n}\n");
    assert_eq!(
        bench
            .ok(
                "Grep",
                json!({"pattern": "fn main", "case_insensitive": true, "output_mode": "content"})
            )
            .await,
        "a.rs:1:fn Main() {"
    );
    assert_eq!(
        bench.ok("Grep", json!({"pattern": "Main\\(\\) \\{\\n\\s+body", "multiline": true, "output_mode": "content"})).await,
        "a.rs:1:fn Main() {\na.rs:2:    body();"
    );
}

#[tokio::test]
async fn grep_head_limit_caps_output_with_a_note() {
    let bench = Bench::new();
    bench.write("a.txt", "x\n".repeat(50));
    let text = bench
        .ok(
            "Grep",
            json!({"pattern": "x", "output_mode": "content", "head_limit": 3}),
        )
        .await;
    assert_eq!(
        text,
        "a.txt:1:x\na.txt:2:x\na.txt:3:x\n[Showing 3 of 50 lines (head_limit 3). Narrow the pattern, `path` or `include` to see the rest.]"
    );
}

#[tokio::test]
async fn grep_on_a_single_file() {
    let bench = tree();
    assert_eq!(
        bench
            .ok(
                "Grep",
                json!({"pattern": "TODO", "path": "src/lib/helper.rs", "output_mode": "content"})
            )
            .await,
        "src/lib/helper.rs:2:// TODO: more"
    );
    // Nothing found in a named file: the model is pointed at Read, not left to guess.
    assert_eq!(
        bench
            .ok(
                "Grep",
                json!({"pattern": "zzz", "path": "src/lib/helper.rs"})
            )
            .await,
        "No matches for \"zzz\" in src/lib/helper.rs. The file exists: Read src/lib/helper.rs \
         to see what it holds."
    );
}

#[tokio::test]
async fn grep_bad_inputs_get_clear_errors() {
    let bench = tree();
    let text = bench.err("Grep", json!({"pattern": "fn (main"})).await;
    assert!(text.contains("invalid regex \"fn (main\""), "{text}");
    assert!(text.contains("unclosed group"), "{text}");
    let text = bench.err("Grep", json!({"pattern": "a\\nb"})).await;
    assert!(text.contains("set multiline to true"), "{text}");
    let text = bench
        .err("Grep", json!({"pattern": "x", "output_mode": "lines"}))
        .await;
    assert!(text.contains("output_mode"), "{text}");
    let text = bench
        .err("Grep", json!({"pattern": "x", "path": "/etc"}))
        .await;
    assert!(text.contains("is outside the workspace"), "{text}");
    let text = bench
        .err("Grep", json!({"pattern": "x", "include": "{a"}))
        .await;
    assert!(text.contains("invalid include glob"), "{text}");
    // A glob given as the path: where each half goes.
    let text = bench
        .err("Grep", json!({"pattern": "x", "path": "src/**/*.rs"}))
        .await;
    assert!(
        text.contains(
            "Give the folder in `path` (\"src\") and the pattern in `include` (\"**/*.rs\")"
        ),
        "{text}"
    );
    let text = bench
        .err("Grep", json!({"pattern": "x", "path": "*.py"}))
        .await;
    assert!(
        text.contains("(\".\") and the pattern in `include` (\"*.py\")"),
        "{text}"
    );
    assert_eq!(
        bench.ok("Grep", json!({"pattern": "zzz"})).await,
        "No matches for \"zzz\" in .."
    );
}

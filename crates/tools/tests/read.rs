//! `Read` on real files: numbering, windows, large files, images, binaries, errors.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use pretty_assertions::assert_eq;
use serde_json::json;
use support::Bench;
use toolhost_core::ContentBlock;

fn numbered(lines: impl IntoIterator<Item = (u64, &'static str)>) -> String {
    lines
        .into_iter()
        .map(|(n, line)| format!("{n:>6}\t{line}\n"))
        .collect()
}

#[tokio::test]
async fn read_numbers_lines_with_a_tab() {
    let bench = Bench::new();
    bench.write("a.txt", "one\ntwo\r\nthree");
    let text = bench.ok("Read", json!({"path": "a.txt"})).await;
    assert_eq!(text, numbered([(1, "one"), (2, "two"), (3, "three")]));
}

#[tokio::test]
async fn read_window_has_a_footer_with_the_next_offset() {
    let bench = Bench::new();
    let content: String = (1..=100).map(|n| format!("line {n}\n")).collect();
    bench.write("a.txt", content);
    let text = bench
        .ok("Read", json!({"path": "a.txt", "offset": 10, "limit": 3}))
        .await;
    assert_eq!(
        text,
        format!(
            "{}\n[Showing lines 10-12 of 100. Use offset=13 to continue.]\n",
            numbered([(10, "line 10"), (11, "line 11"), (12, "line 12")])
        )
    );
    // The last window has no footer.
    let text = bench
        .ok("Read", json!({"path": "a.txt", "offset": 99}))
        .await;
    assert_eq!(text, numbered([(99, "line 99"), (100, "line 100")]));
}

#[tokio::test]
async fn read_offset_past_the_end_says_how_many_lines_there_are() {
    let bench = Bench::new();
    bench.write("a.txt", "x\ny\n");
    let text = bench
        .err("Read", json!({"path": "a.txt", "offset": 5}))
        .await;
    assert!(
        text.contains("offset 5 is past the end of a.txt, which has 2 lines"),
        "{text}"
    );
}

#[tokio::test]
async fn read_cuts_long_lines_with_a_marker() {
    let bench = Bench::new();
    bench.write("long.txt", format!("{}\nshort\n", "é".repeat(5000)));
    let text = bench.ok("Read", json!({"path": "long.txt"})).await;
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with(&format!("     1\t{}…", "é".repeat(2000))),
        "{first}"
    );
    assert!(first.contains("[line cut at 2000 characters; it has 10000 bytes]"));
    assert!(text.contains("     2\tshort"));
}

#[tokio::test]
async fn read_of_a_file_over_128_kb_returns_the_first_part_and_a_footer() {
    let bench = Bench::new();
    let content: String = (1..=20_000)
        .map(|n| format!("{n:08} {}\n", "x".repeat(100)))
        .collect();
    bench.write("big.txt", &content);
    let text = bench.ok("Read", json!({"path": "big.txt"})).await;
    assert!(text.len() <= 128 * 1024 + 200, "{}", text.len());
    let footer = text.lines().last().unwrap();
    let shown = text.lines().filter(|line| line.contains('\t')).count();
    // Every line up to the footer is there: the pipeline did not cut the middle out.
    assert!(
        !text.contains("(truncated)"),
        "the pipeline truncated Read's own window"
    );
    // 128 KB of 110-byte lines, before the 2000-line default limit.
    assert!(shown > 1_000 && shown < 2_000, "{shown} lines shown");
    let numbers: Vec<u64> = text
        .lines()
        .filter_map(|line| line.split('\t').next()?.trim().parse().ok())
        .collect();
    assert_eq!(numbers, (1..=shown as u64).collect::<Vec<_>>());
    assert_eq!(
        footer,
        format!(
            "[Showing lines 1-{shown} of 20000. Use offset={} to continue.]",
            shown + 1
        )
    );
}

#[tokio::test]
async fn read_of_a_file_over_10_mb_needs_a_range() {
    let bench = Bench::new();
    let line = format!("{}\n", "y".repeat(99));
    let lines = 110_000;
    bench.write("huge.txt", line.repeat(lines));
    let text = bench.err("Read", json!({"path": "huge.txt"})).await;
    assert!(
        text.contains("more than the 10.0 MB Read returns without a range"),
        "{text}"
    );
    assert!(text.contains("Give `offset` and `limit`"), "{text}");
    let text = bench
        .ok(
            "Read",
            json!({"path": "huge.txt", "offset": 100_000, "limit": 2}),
        )
        .await;
    let y = "y".repeat(99);
    assert!(
        text.starts_with(&format!("100000\t{y}\n100001\t{y}\n")),
        "{text}"
    );
    assert!(text.contains("Use offset=100002 to continue."), "{text}");
}

#[tokio::test]
async fn read_window_deep_in_a_file_spanning_many_scan_chunks_is_exact() {
    let bench = Bench::new();
    // Lines of varying length so chunk boundaries fall anywhere.
    let content: String = (1..=400_000u64)
        .map(|n| format!("{n} {}\n", "z".repeat((n % 37) as usize)))
        .collect();
    bench.write("deep.txt", &content);
    for offset in [1u64, 2, 123_457, 399_999, 400_000] {
        let text = bench
            .ok(
                "Read",
                json!({"path": "deep.txt", "offset": offset, "limit": 1}),
            )
            .await;
        let expected = format!("{offset} {}", "z".repeat((offset % 37) as usize));
        assert_eq!(
            text.lines().next().unwrap(),
            format!("{offset:>6}\t{expected}")
        );
    }
}

#[tokio::test]
async fn read_returns_images_as_image_content() {
    let bench = Bench::new();
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR rest of a png";
    bench.write("pic.png", png);
    let result = bench.call("Read", json!({"path": "pic.png"})).await;
    assert!(!result.is_error);
    assert_eq!(
        result.content,
        vec![ContentBlock::image(base64_encode(png), "image/png")]
    );
}

fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[tokio::test]
async fn read_refuses_binary_files_clearly() {
    let bench = Bench::new();
    bench.write("a.bin", b"\x7fELF\x02\x01\x01\0\0\0\0");
    let text = bench.err("Read", json!({"path": "a.bin"})).await;
    assert!(text.contains("a.bin is a binary file"), "{text}");
}

#[tokio::test]
async fn read_of_a_folder_points_to_list_dir() {
    let bench = Bench::new();
    bench.write("src/a.rs", "");
    let text = bench.err("Read", json!({"path": "src"})).await;
    assert!(
        text.contains("src is a folder, not a file. Use ListDir"),
        "{text}"
    );
}

#[tokio::test]
async fn read_shows_invalid_utf8_lossily_with_a_note() {
    let bench = Bench::new();
    bench.write("latin1.txt", b"caf\xe9\n");
    let text = bench.ok("Read", json!({"path": "latin1.txt"})).await;
    assert!(text.starts_with("     1\tcaf\u{FFFD}\n"), "{text}");
    assert!(text.contains("not valid UTF-8"), "{text}");
}

#[tokio::test]
async fn read_of_a_missing_file_suggests_similar_names() {
    let bench = Bench::new();
    bench.write("src/main.rs", "");
    let text = bench.err("Read", json!({"path": "src/mian.rs"})).await;
    assert!(
        text.contains("src/mian.rs does not exist. Did you mean: src/main.rs?"),
        "{text}"
    );
}

#[tokio::test]
async fn read_of_an_empty_file_says_so() {
    let bench = Bench::new();
    bench.write("empty.txt", "");
    assert_eq!(
        bench.ok("Read", json!({"path": "empty.txt"})).await,
        "empty.txt is empty (0 bytes)."
    );
}

#[tokio::test]
async fn read_outside_the_workspace_is_refused() {
    let bench = Bench::new();
    std::fs::write(bench.outside().join("secret"), "s").unwrap();
    let text = bench
        .err("Read", json!({"path": "../outside/secret"}))
        .await;
    assert!(text.contains("is outside the workspace"), "{text}");
    assert!(!text.contains("     1\ts"));
}

#[tokio::test]
async fn read_with_a_zero_offset_is_refused_by_the_schema() {
    let bench = Bench::new();
    bench.write("a.txt", "a\n");
    let text = bench
        .err("Read", json!({"path": "a.txt", "offset": 0}))
        .await;
    assert!(text.contains("offset"), "{text}");
}

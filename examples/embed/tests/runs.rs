//! The embedding example runs, and each of its calls came back as the book says: coerced,
//! refused by validation naming the missing parameter, refused by the program's authoriser.

use std::process::Command;

#[test]
fn the_example_defines_a_tool_and_runs_calls_through_the_pipeline() {
    let output = Command::new(env!("CARGO_BIN_EXE_toolhost-embed-example"))
        .output()
        .expect("the example starts");
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert_eq!(lines[0], "coerced: ok: 2 words");
    assert!(
        lines[1].starts_with("invalid: error: ") && lines[1].contains("text"),
        "{stdout}"
    );
    assert!(
        lines[2].starts_with("refused: error: ") && lines[2].contains("over 1000 characters"),
        "{stdout}"
    );
}

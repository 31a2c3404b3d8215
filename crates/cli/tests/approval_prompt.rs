//! The terminal approval prompt of `toolhost call`, on a real pseudo-terminal (`script`), as a
//! person at a terminal meets it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use assert_cmd::Command;

/// Runs `toolhost call Bash …` inside `script`, which gives it a terminal, typing `answer`.
fn call_at_a_terminal(workspace: &std::path::Path, answer: &str) -> (bool, String) {
    let toolhost = assert_cmd::cargo::cargo_bin("toolhost");
    let command_line = format!(
        "{} --workspace {} call Bash '{{\"command\": \"touch approved\"}}'",
        toolhost.display(),
        workspace.display()
    );
    let output = Command::new("script")
        .args(["-qec", &command_line, "/dev/null"])
        .env("HOME", workspace)
        .write_stdin(answer)
        .timeout(std::time::Duration::from_secs(30))
        .output()
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

#[test]
fn yes_at_the_prompt_runs_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let (success, screen) = call_at_a_terminal(dir.path(), "y\n");
    assert!(screen.contains("Bash wants to run with"), "{screen}");
    assert!(screen.contains("[y] allow once  [a] allow Bash(touch approved:*) for this session"));
    assert!(success, "{screen}");
    assert!(dir.path().join("approved").exists());
}

#[test]
fn no_with_a_reason_refuses_and_tells_the_model_why() {
    let dir = tempfile::tempdir().unwrap();
    let (success, screen) = call_at_a_terminal(dir.path(), "n: try ls instead\n");
    assert!(!success);
    assert!(
        screen.contains("The user refused this call: try ls instead"),
        "{screen}"
    );
    assert!(!dir.path().join("approved").exists());
}

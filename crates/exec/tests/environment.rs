//! The child's environment is clean and predictable. Alone in its own test binary because it
//! changes the parent's environment.

use pretty_assertions::assert_eq;
use toolhost_exec::ProcessSpec;

#[tokio::test]
async fn environment_is_clean_and_predictable() -> anyhow::Result<()> {
    // SAFETY: this binary has only this test, and it sets the variable before any other
    // thread reads the environment.
    #[allow(unsafe_code)]
    unsafe {
        std::env::set_var("TOOLHOST_PARENT_SECRET", "leaked");
        std::env::set_var("TERM", "xterm-256color");
    }
    let outcome = ProcessSpec::new("env")
        .env("TOOLHOST_EXTRA", "given")
        .run()
        .await?;
    let mut variables: Vec<&str> = outcome
        .stdout
        .text
        .lines()
        .filter(|line| !line.starts_with("PATH=") && !line.starts_with("HOME="))
        .filter(|line| !line.starts_with("USER=") && !line.starts_with("LANG"))
        .filter(|line| !line.starts_with("LC_") && !line.starts_with("LOGNAME="))
        .filter(|line| !line.starts_with("SHELL=") && !line.starts_with("TZ="))
        .filter(|line| !line.starts_with("TMPDIR="))
        .collect();
    variables.sort_unstable();
    assert_eq!(
        variables,
        [
            "GIT_PAGER=cat",
            "GIT_TERMINAL_PROMPT=0",
            "NO_COLOR=1",
            "PAGER=cat",
            "TERM=dumb",
            "TOOLHOST_EXTRA=given",
        ]
    );
    assert!(outcome.stdout.text.contains("PATH="));
    Ok(())
}

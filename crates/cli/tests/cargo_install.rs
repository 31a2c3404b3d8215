//! `cargo install --locked --path crates/cli`, the install from a clone that the README and
//! the book give, run for real into a folder of its own, and the installed binary run.
//!
//! The install builds with `--debug`, its intermediate files in the build folder the tests
//! were built in (`build.build-dir`), so that it reuses what they compiled instead of spending
//! a quarter of an hour on an optimised build, and its binary in a folder of its own
//! (`--target-dir`), so that the `toolhost` the other tests run is not replaced under them.
//! `--offline`: building the tests fetched every crate it needs. It compiles what the tests'
//! build did not (the crates whose features the tests' dev-dependencies change), which is
//! what `cargo build -p toolhost` compiles too: in `scripts/test.sh`, that build after the
//! tests then has nothing left to do.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};
use std::time::Instant;

use pretty_assertions::assert_eq;

/// Runs `binary ARGS` with a home and a workspace of its own.
fn run(binary: &Path, args: &[&str]) -> Output {
    let dirs = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dirs.path().join("home")).unwrap();
    std::fs::create_dir_all(dirs.path().join("workspace")).unwrap();
    let output = Command::new(binary)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dirs.path().join("home"))
        .arg("--workspace")
        .arg(dirs.path().join("workspace"))
        .args(args)
        .output()
        .unwrap();
    assert!(output.status.success(), "{binary:?} {args:?}: {output:?}");
    output
}

#[test]
fn cargo_install_locked_from_the_clone_installs_a_binary_that_runs() {
    let repository = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    // CARGO_TARGET_TMPDIR is `tmp` in the build folder of this test run.
    let build_folder = Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("root");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    // A TOML string, quoted and escaped whatever the path holds.
    let build_dir = toml::Value::String(build_folder.display().to_string());

    let started = Instant::now();
    let install = Command::new(cargo)
        .args(["install", "--locked", "--offline", "--debug", "--path"])
        .arg(repository.join("crates/cli"))
        .arg("--root")
        .arg(&root)
        .arg("--target-dir")
        .arg(scratch.path().join("target"))
        .arg("--config")
        .arg(format!("build.build-dir={build_dir}"))
        .output()
        .unwrap();
    assert!(
        install.status.success(),
        "cargo install failed:\n{}",
        String::from_utf8_lossy(&install.stderr)
    );
    eprintln!(
        "cargo install took {:.1} s",
        started.elapsed().as_secs_f64()
    );

    let installed = root.join("bin/toolhost");
    assert!(installed.is_file(), "{installed:?}");
    // The same version and commit as the binary the tests run.
    assert_eq!(
        String::from_utf8_lossy(&run(&installed, &["--version"]).stdout),
        String::from_utf8_lossy(
            &run(Path::new(env!("CARGO_BIN_EXE_toolhost")), &["--version"]).stdout
        )
    );
    let tools = String::from_utf8_lossy(&run(&installed, &["tools"]).stdout).into_owned();
    for tool in ["Read", "Write", "Edit", "Bash", "Grep"] {
        assert!(
            tools
                .lines()
                .any(|line| line.split_whitespace().next() == Some(tool)),
            "{tool} in:\n{tools}"
        );
    }
}

#[test]
fn the_profiles_the_install_chapter_names_exist() {
    // `cargo install --locked --path crates/cli --profile thin` needs it in the workspace,
    // and cargo-dist builds the release archives with `dist`.
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml");
    let workspace: toml::Table =
        toml::from_str(&std::fs::read_to_string(manifest).unwrap()).unwrap();
    let profiles = &workspace["profile"];
    assert_eq!(profiles["thin"]["inherits"].as_str(), Some("release"));
    assert_eq!(profiles["thin"]["lto"].as_str(), Some("thin"));
    assert_eq!(profiles["dist"]["inherits"].as_str(), Some("release"));
    assert!(
        profiles["dist"].get("lto").is_none(),
        "dist keeps release's fat LTO"
    );
}

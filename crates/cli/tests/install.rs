//! The release installer (`scripts/install.sh`, published as `toolhost-installer.sh`) end to
//! end: an archive of the real binary, built here in the release's layout, served with its
//! checksum from 127.0.0.1 (Python's `http.server`); the installer run as a user would, in a fresh home; the installed
//! binary run. Also: a wrong checksum installs nothing, the PATH block is written once and only
//! where it should be, and the opt-out leaves the shells' files alone.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use toolhost_test_support::ports::free_port;

const BLOCK_START: &str = "# >>> toolhost installer >>>";

/// The release's name for this machine, as the installer works it out.
fn target() -> String {
    let os = match std::env::consts::OS {
        "linux" => "unknown-linux-gnu",
        "macos" => "apple-darwin",
        other => panic!("no release for {other}"),
    };
    format!("{}-{os}", std::env::consts::ARCH)
}

fn archive_name() -> String {
    format!("toolhost-{}.tar.gz", target())
}

/// A folder holding `toolhost-TARGET.tar.gz` as a release does (a folder with the binary and
/// the README), made once per test run with the system's `tar` and `sha256sum` (the debug
/// build's own gzip and SHA-256 take a minute over the large debug binary).
fn archive_folder() -> &'static Path {
    static FOLDER: OnceLock<PathBuf> = OnceLock::new();
    FOLDER.get_or_init(|| {
        let folder =
            Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("release-{}", std::process::id()));
        let inner = folder.join(format!("toolhost-{}", target()));
        std::fs::create_dir_all(&inner).unwrap();
        std::fs::copy(env!("CARGO_BIN_EXE_toolhost"), inner.join("toolhost")).unwrap();
        std::fs::copy(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"),
            inner.join("README.md"),
        )
        .unwrap();
        let tar = Command::new("tar")
            // gzip's fastest level: the debug binary is large and the machine may be busy.
            .args(["-I", "gzip -1", "-cf", &archive_name()])
            .arg(format!("toolhost-{}", target()))
            .current_dir(&folder)
            .status()
            .unwrap();
        assert!(tar.success());
        std::fs::remove_dir_all(&inner).unwrap();
        folder
    })
}

fn archive_sha256() -> String {
    let output = Command::new("sha256sum")
        .arg(archive_folder().join(archive_name()))
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned()
}

/// A release's download folder served on 127.0.0.1 (Python's `http.server`), with a checksum
/// file holding `hash`; the server is stopped when this is dropped.
struct Release {
    _folder: tempfile::TempDir,
    server: std::process::Child,
    port: u16,
}

impl Release {
    fn serving(hash: &str) -> Self {
        let folder = tempfile::tempdir().unwrap();
        std::fs::copy(
            archive_folder().join(archive_name()),
            folder.path().join(archive_name()),
        )
        .unwrap();
        std::fs::write(
            folder.path().join(format!("{}.sha256", archive_name())),
            format!("{hash}  {}\n", archive_name()),
        )
        .unwrap();
        let port = free_port();
        let server = Command::new("python3")
            .args([
                "-m",
                "http.server",
                "--bind",
                "127.0.0.1",
                &port.to_string(),
            ])
            .current_dir(folder.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "the server never listened");
            std::thread::sleep(Duration::from_millis(20));
        }
        Self {
            _folder: folder,
            server,
            port,
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for Release {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

/// Runs the installer with `home` as HOME, a PATH without its folder, and the release at
/// `server`.
fn install(home: &Path, server: &Release, args: &[&str], env: &[(&str, &str)]) -> Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/install.sh");
    Command::new("sh")
        .arg(script)
        .args(args)
        .env_clear()
        .env("HOME", home)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("TOOLHOST_DOWNLOAD_URL", server.url())
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

fn installed(home: &Path) -> PathBuf {
    home.join(".local/bin/toolhost")
}

#[test]
fn the_installer_checks_the_archive_installs_the_binary_and_adds_a_path_block_once() {
    let home = tempfile::tempdir().unwrap();
    let server = Release::serving(&archive_sha256());
    let output = install(home.path(), &server, &[], &[]);
    assert!(output.status.success(), "{output:?}");

    let version = Command::new(installed(home.path()))
        .arg("--version")
        .output()
        .unwrap();
    assert!(version.status.success(), "{version:?}");
    assert!(
        String::from_utf8_lossy(&version.stdout).starts_with("toolhost "),
        "{version:?}"
    );

    // No start-up file existed: ~/.profile holds the block, with $HOME unexpanded.
    let profile = std::fs::read_to_string(home.path().join(".profile")).unwrap();
    assert_eq!(
        profile,
        format!(
            "\n{BLOCK_START}\nexport PATH=\"$HOME/.local/bin:$PATH\"\n# <<< toolhost installer <<<\n"
        )
    );
    assert!(!home.path().join(".bashrc").exists());
    // A shell reading it finds the binary.
    let found = Command::new("sh")
        .args(["-c", ". \"$HOME/.profile\"; command -v toolhost"])
        .env_clear()
        .env("HOME", home.path())
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&found.stdout).trim(),
        installed(home.path()).display().to_string()
    );

    // Again (an upgrade): the binary is replaced, the block not written twice.
    let again = install(home.path(), &server, &[], &[]);
    assert!(again.status.success(), "{again:?}");
    let profile = std::fs::read_to_string(home.path().join(".profile")).unwrap();
    assert_eq!(profile.matches(BLOCK_START).count(), 1, "{profile}");
}

#[test]
fn a_wrong_checksum_installs_nothing() {
    let home = tempfile::tempdir().unwrap();
    let server = Release::serving(&"0".repeat(64));
    let output = install(home.path(), &server, &[], &[]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("SHA-256"), "{stderr}");
    assert!(stderr.contains("refusing to install"), "{stderr}");
    assert!(!installed(home.path()).exists());
    assert!(!home.path().join(".profile").exists());
}

#[test]
fn the_path_block_goes_only_to_the_shells_there_are_and_can_be_refused() {
    let server = Release::serving(&archive_sha256());

    // A bash user: ~/.bashrc gets the block, no ~/.profile is made.
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join(".bashrc"), "alias ll='ls -l'\n").unwrap();
    let output = install(home.path(), &server, &[], &[]);
    assert!(output.status.success(), "{output:?}");
    let bashrc = std::fs::read_to_string(home.path().join(".bashrc")).unwrap();
    assert!(bashrc.starts_with("alias ll='ls -l'\n"), "{bashrc}");
    assert_eq!(bashrc.matches(BLOCK_START).count(), 1, "{bashrc}");
    assert!(!home.path().join(".profile").exists());

    // The flag and the variable leave every file alone.
    for (args, env) in [
        (&["--no-modify-path"][..], &[][..]),
        (&[][..], &[("TOOLHOST_NO_MODIFY_PATH", "1")][..]),
    ] {
        let home = tempfile::tempdir().unwrap();
        let output = install(home.path(), &server, args, env);
        assert!(output.status.success(), "{output:?}");
        assert!(installed(home.path()).is_file());
        assert!(!home.path().join(".profile").exists(), "{args:?} {env:?}");
        assert!(
            String::from_utf8_lossy(&output.stdout).contains("is not on your PATH"),
            "{output:?}"
        );
    }

    // Installed into a folder already on PATH: nothing to add.
    let home = tempfile::tempdir().unwrap();
    let bin = home.path().join("bin");
    let output = Command::new("sh")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/install.sh"))
        .env_clear()
        .env("HOME", home.path())
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .env("TOOLHOST_INSTALL_DIR", &bin)
        .env("TOOLHOST_DOWNLOAD_URL", server.url())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert!(bin.join("toolhost").is_file());
    assert!(!home.path().join(".profile").exists());
}

//! What the build script finds for `--version` (`build/commit.rs`), on folders made here: a
//! git clone gives its commit and the files to watch for the next one; a source tarball
//! without `.git`, and a crate unpacked inside some other repository, give nothing. The
//! version the binary prints is checked in `conventions.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../build/commit.rs"]
mod commit;

use std::path::Path;
use std::process::Command;

use commit::build_commit;
use pretty_assertions::assert_eq;

fn git(folder: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        .args(args)
        .current_dir(folder)
        .env("GIT_COMMITTER_DATE", "2026-12-04T12:00:00Z")
        .env("GIT_AUTHOR_DATE", "2026-12-04T12:00:00Z")
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {output:?}");
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

/// A repository holding `crates/cli/build.rs`, with one commit on `main`.
fn repository() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("crates/cli")).unwrap();
    std::fs::write(root.path().join("crates/cli/build.rs"), "fn main() {}\n").unwrap();
    git(root.path(), &["init", "-q", "-b", "main"]);
    git(root.path(), &["add", "."]);
    git(root.path(), &["commit", "-q", "-m", "first"]);
    root
}

#[test]
fn a_clone_gives_its_commit_and_the_files_that_change_with_the_next_one() {
    let root = repository();
    let crate_folder = root.path().join("crates/cli");
    let hash = git(root.path(), &["rev-parse", "--short", "HEAD"]);

    let found = build_commit(&crate_folder, "build.rs").expect("git knows the commit");
    let git_dir = root.path().join(".git").canonicalize().unwrap();
    assert_eq!(
        found,
        commit::BuildCommit {
            summary: format!("{hash} 2026-12-04"),
            watched: vec![
                git_dir.join("HEAD"),
                git_dir.join("logs/HEAD"),
                git_dir.join("refs/heads/main"),
            ],
        }
    );
}

#[test]
fn a_branch_whose_ref_is_packed_is_still_watched_through_the_reflog() {
    let root = repository();
    git(root.path(), &["pack-refs", "--all"]);
    let found = build_commit(root.path(), "crates/cli/build.rs").unwrap();
    let git_dir = root.path().join(".git").canonicalize().unwrap();
    // refs/heads/main is gone until the next commit writes it: HEAD's reflog changes then.
    assert_eq!(
        found.watched,
        [
            git_dir.join("HEAD"),
            git_dir.join("logs/HEAD"),
            git_dir.join("packed-refs")
        ]
    );
}

#[test]
fn a_source_tarball_without_git_gives_no_commit() {
    let root = repository();
    std::fs::remove_dir_all(root.path().join(".git")).unwrap();
    assert_eq!(
        build_commit(&root.path().join("crates/cli"), "build.rs"),
        None
    );
}

#[test]
fn a_crate_unpacked_inside_another_repository_is_not_given_its_commit() {
    // A home folder kept in git, with cargo's registry inside it, untracked.
    let home = repository();
    let unpacked = home.path().join(".cargo/registry/src/toolhost-0.1.0");
    std::fs::create_dir_all(&unpacked).unwrap();
    std::fs::write(unpacked.join("build.rs"), "fn main() {}\n").unwrap();
    assert_eq!(build_commit(&unpacked, "build.rs"), None);
}

#[test]
fn a_clone_another_user_owns_still_gives_its_commit() {
    let root = repository();
    // git refuses a repository whose owner is not the user running it ("dubious ownership").
    let nobody = 65534;
    for entry in walk(root.path()) {
        if let Err(error) = std::os::unix::fs::lchown(&entry, Some(nobody), Some(nobody)) {
            // Only root may give a file away; other users cannot make this case.
            assert_eq!(error.kind(), std::io::ErrorKind::PermissionDenied);
            return;
        }
    }
    let found = build_commit(&root.path().join("crates/cli"), "build.rs");
    assert!(found.is_some_and(|commit| !commit.summary.is_empty()));
}

/// Every file and folder under `folder`, itself included.
fn walk(folder: &Path) -> Vec<std::path::PathBuf> {
    let mut found = vec![folder.to_path_buf()];
    for entry in std::fs::read_dir(folder).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() && !path.is_symlink() {
            found.extend(walk(&path));
        } else {
            found.push(path);
        }
    }
    found
}

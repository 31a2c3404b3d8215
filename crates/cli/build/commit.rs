//! The commit a build is from, as `toolhost --version` prints it (`toolhost 0.1.0 (3f2a9c1
//! 2026-12-04)`): asked of git by the build script, and nothing where git cannot say — a
//! crate archive or a source tarball without `.git`, a machine without git. Kept apart from
//! `build.rs` so that `tests/build_commit.rs` can run it on folders it makes.

use std::path::{Path, PathBuf};
use std::process::Command;

/// What git says about the checked-out commit of the folder a build runs in.
#[derive(Debug, PartialEq, Eq)]
pub struct BuildCommit {
    /// The abbreviated hash and the commit's date: `3f2a9c1 2026-12-04`.
    pub summary: String,
    /// The files of the repository that change when another commit is checked out or made,
    /// for `cargo::rerun-if-changed`: `HEAD`, the branch's ref file, `packed-refs`, and HEAD's
    /// reflog, which also changes on the first commit of a branch whose ref was only in
    /// `packed-refs` (its ref file did not exist, so it could not be watched). Only files that
    /// exist are named: cargo reruns a build script every time a file it names is missing.
    pub watched: Vec<PathBuf>,
}

/// The commit that `folder` is checked out at, when git tracks `tracked` there (a file of the
/// crate, `build.rs`). The file must be tracked so that a crate unpacked inside some other
/// repository — a home folder kept in git, with cargo's registry in it — is not given that
/// repository's commit.
pub fn build_commit(folder: &Path, tracked: &str) -> Option<BuildCommit> {
    let git = |args: &[&str]| {
        Command::new("git")
            // The build compiles and runs this repository's code whoever owns it, so git's
            // refusal of a repository another user owns (`safe.directory`) protects nothing
            // here and would only lose the commit (a clone copied or mounted from elsewhere).
            .args(["-c", "safe.directory=*"])
            .args(args)
            .current_dir(folder)
            .output()
            .ok()
            .filter(|output| output.status.success())
            .and_then(|output| String::from_utf8(output.stdout).ok())
            .map(|text| text.trim().to_owned())
            .filter(|text| !text.is_empty())
    };
    git(&["ls-files", "--error-unmatch", "--", tracked])?;
    // `%cd` with `--date=short` rather than `%cs`, which git before 2.25 prints as it is.
    let summary = git(&["log", "-1", "--date=short", "--format=%h %cd"])?;
    let branch = git(&["symbolic-ref", "-q", "HEAD"]);
    let watched = ["HEAD", "logs/HEAD", "packed-refs"]
        .into_iter()
        .chain(branch.as_deref())
        .filter_map(|name| git(&["rev-parse", "--git-path", name]))
        // `--git-path` answers relative to the folder git ran in (`../../.git/HEAD`).
        .filter_map(|path| folder.join(path).canonicalize().ok())
        .filter(|path| path.is_file())
        .collect();
    Some(BuildCommit { summary, watched })
}

//! The sandbox under attack: every way out of the workspace is refused, and nothing outside is
//! read or written.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use tempfile::TempDir;
use toolhost_tools::{Access, RootAccess, Workspace, WorkspaceError};

/// A workspace folder and an "outside" folder beside it holding a secret.
struct Fixture {
    _base: TempDir,
    root: PathBuf,
    outside: PathBuf,
}

fn fixture() -> Fixture {
    let base = tempfile::tempdir().unwrap();
    let root = base.path().join("ws");
    let outside = base.path().join("outside");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(root.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(outside.join("secret.txt"), "secret\n").unwrap();
    let root = root.canonicalize().unwrap();
    let outside = outside.canonicalize().unwrap();
    Fixture {
        _base: base,
        root,
        outside,
    }
}

fn workspace(f: &Fixture) -> Workspace {
    Workspace::builder(&f.root).home(None).build().unwrap()
}

fn refused(workspace: &Workspace, path: &str, access: Access) -> WorkspaceError {
    match workspace.resolve(path, access) {
        Ok(resolved) => panic!("{path} was accepted as {}", resolved.as_path().display()),
        Err(error) => error,
    }
}

fn assert_outside(workspace: &Workspace, path: &str) {
    for access in [Access::Read, Access::Write] {
        let error = refused(workspace, path, access);
        assert!(
            matches!(error, WorkspaceError::OutsideWorkspace { .. }),
            "{path}: {error}"
        );
    }
}

#[test]
fn relative_and_inside_absolute_paths_resolve() {
    let f = fixture();
    let ws = workspace(&f);
    for path in [
        "src/main.rs",
        "./src/main.rs",
        "src/../src/main.rs",
        f.root.join("src/main.rs").to_str().unwrap(),
    ] {
        let resolved = ws.resolve(path, Access::Read).unwrap();
        assert_eq!(resolved.as_path(), f.root.join("src/main.rs"), "{path}");
        assert_eq!(resolved.display(), "src/main.rs");
        assert!(resolved.existed());
    }
    let new = ws.resolve("new/dir/file.txt", Access::Write).unwrap();
    assert_eq!(new.as_path(), f.root.join("new/dir/file.txt"));
    assert!(!new.existed());
    assert_eq!(ws.resolve(".", Access::Read).unwrap().display(), ".");
}

#[test]
fn dot_dot_traversal_is_refused() {
    let f = fixture();
    let ws = workspace(&f);
    for path in [
        "..",
        "../outside/secret.txt",
        "src/../../outside/secret.txt",
        "src/../../../../../../etc/passwd",
        "missing/../../outside/new.txt",
    ] {
        assert_outside(&ws, path);
    }
}

#[test]
fn absolute_paths_outside_are_refused() {
    let f = fixture();
    let ws = workspace(&f);
    assert_outside(&ws, "/etc/passwd");
    assert_outside(&ws, "/");
    assert_outside(&ws, f.outside.join("secret.txt").to_str().unwrap());
    assert_outside(&ws, f.outside.join("new.txt").to_str().unwrap());
}

#[test]
fn refusal_names_the_path_the_reason_and_what_to_do() {
    let f = fixture();
    let ws = workspace(&f);
    let message = refused(&ws, "../outside/secret.txt", Access::Read).to_string();
    assert!(
        message.contains("'../outside/secret.txt' is outside the workspace"),
        "{message}"
    );
    assert!(
        message.contains(&f.outside.join("secret.txt").display().to_string()),
        "{message}"
    );
    assert!(
        message.contains("Use a path inside the workspace"),
        "{message}"
    );
}

#[test]
fn tilde_is_refused_without_a_home_and_checked_with_one() {
    let f = fixture();
    let error = refused(&workspace(&f), "~/.ssh/id_rsa", Access::Read);
    assert!(matches!(error, WorkspaceError::NoHome { .. }), "{error}");

    let outside_home = Workspace::builder(&f.root)
        .home(Some(f.outside.clone()))
        .build()
        .unwrap();
    assert_outside(&outside_home, "~/secret.txt");
    assert_outside(&outside_home, "~");

    let inside_home = Workspace::builder(&f.root)
        .home(Some(f.root.clone()))
        .build()
        .unwrap();
    let resolved = inside_home.resolve("~/src/main.rs", Access::Read).unwrap();
    assert_eq!(resolved.as_path(), f.root.join("src/main.rs"));
    // A name that merely starts with '~' is an ordinary relative name.
    let tilde_name = inside_home.resolve("~notes.txt", Access::Write).unwrap();
    assert_eq!(tilde_name.as_path(), f.root.join("~notes.txt"));
}

#[test]
fn symlink_to_an_outside_file_is_refused() {
    let f = fixture();
    symlink(f.outside.join("secret.txt"), f.root.join("link.txt")).unwrap();
    let ws = workspace(&f);
    assert_outside(&ws, "link.txt");
    let message = refused(&ws, "link.txt", Access::Read).to_string();
    assert!(message.contains("through the symlink"), "{message}");
}

#[test]
fn symlink_to_an_outside_folder_is_refused_for_files_in_it_and_new_files() {
    let f = fixture();
    symlink(&f.outside, f.root.join("linkdir")).unwrap();
    let ws = workspace(&f);
    assert_outside(&ws, "linkdir");
    assert_outside(&ws, "linkdir/secret.txt");
    assert_outside(&ws, "linkdir/new.txt");
    assert_outside(&ws, "linkdir/new/deeper/file.txt");
    assert_outside(&ws, "src/../linkdir/secret.txt");
}

#[test]
fn relative_symlink_out_and_dot_dot_through_a_symlink_are_resolved_physically() {
    let f = fixture();
    // `up` points at the outside folder by a relative target.
    symlink("../outside", f.root.join("up")).unwrap();
    // `deep` is a folder inside whose `..` is, physically, the outside folder's parent.
    symlink(f.outside.join("."), f.root.join("deep")).unwrap();
    let ws = workspace(&f);
    assert_outside(&ws, "up/secret.txt");
    assert_outside(&ws, "deep/../outside/secret.txt");
}

#[test]
fn dangling_symlink_to_outside_is_refused_for_writes() {
    let f = fixture();
    symlink(f.outside.join("created.txt"), f.root.join("dangling")).unwrap();
    let ws = workspace(&f);
    assert_outside(&ws, "dangling");
    assert!(!f.outside.join("created.txt").exists());
}

#[test]
fn symlinks_inside_the_workspace_are_fine() {
    let f = fixture();
    symlink(f.root.join("src"), f.root.join("alias")).unwrap();
    symlink("main.rs", f.root.join("src/entry.rs")).unwrap();
    let ws = workspace(&f);
    assert_eq!(
        ws.resolve("alias/entry.rs", Access::Write)
            .unwrap()
            .as_path(),
        f.root.join("src/main.rs")
    );
}

#[test]
fn symlink_loops_are_refused() {
    let f = fixture();
    symlink(f.root.join("b"), f.root.join("a")).unwrap();
    symlink(f.root.join("a"), f.root.join("b")).unwrap();
    let error = refused(&workspace(&f), "a/file", Access::Read);
    assert!(
        matches!(error, WorkspaceError::SymlinkLoop { .. }),
        "{error}"
    );
}

#[test]
fn empty_and_nul_paths_are_refused() {
    let f = fixture();
    let ws = workspace(&f);
    assert!(matches!(
        refused(&ws, "", Access::Read),
        WorkspaceError::EmptyPath { .. }
    ));
    assert!(matches!(
        refused(&ws, "a\0b", Access::Read),
        WorkspaceError::NulByte { .. }
    ));
}

#[test]
fn extra_roots_are_read_only_or_writable() {
    let f = fixture();
    let writable = f.outside.join("w");
    std::fs::create_dir(&writable).unwrap();
    let ws = Workspace::builder(&f.root)
        .home(None)
        .extra_root(&f.outside, RootAccess::ReadOnly)
        .extra_root(&writable, RootAccess::Writable)
        .build()
        .unwrap();
    let secret = f.outside.join("secret.txt");
    let secret = secret.to_str().unwrap();
    assert!(ws.resolve(secret, Access::Read).is_ok());
    let error = refused(&ws, secret, Access::Write);
    assert!(
        matches!(error, WorkspaceError::ReadOnlyRoot { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("may read but not change"));
    let inner = writable.join("x.txt");
    assert!(ws.resolve(inner.to_str().unwrap(), Access::Write).is_ok());
    assert_outside(&ws, "/etc/passwd");
}

#[test]
fn unrestricted_workspace_allows_outside_paths() {
    let f = fixture();
    let ws = Workspace::builder(&f.root)
        .restrict_to_workspace(false)
        .build()
        .unwrap();
    let secret = f.outside.join("secret.txt");
    let resolved = ws.resolve(secret.to_str().unwrap(), Access::Write).unwrap();
    assert_eq!(resolved.display(), secret.display().to_string());
    assert_eq!(
        std::io::read_to_string(resolved.open_file().unwrap()).unwrap(),
        "secret\n"
    );
}

#[test]
fn file_swapped_for_a_symlink_after_the_check_is_not_opened() {
    let f = fixture();
    let ws = workspace(&f);
    std::fs::write(f.root.join("victim.txt"), "mine\n").unwrap();
    let resolved = ws.resolve("victim.txt", Access::Read).unwrap();
    // The race: the checked file becomes a symlink to the secret.
    std::fs::remove_file(f.root.join("victim.txt")).unwrap();
    symlink(f.outside.join("secret.txt"), f.root.join("victim.txt")).unwrap();
    let error = resolved.open_file().unwrap_err();
    assert!(
        matches!(error, WorkspaceError::ChangedDuringUse { .. }),
        "{error}"
    );
}

#[test]
fn folder_swapped_for_a_symlink_after_the_check_is_not_read() {
    let f = fixture();
    let ws = workspace(&f);
    std::fs::create_dir(f.root.join("d")).unwrap();
    std::fs::write(f.root.join("d/secret.txt"), "inside\n").unwrap();
    let file = ws.resolve("d/secret.txt", Access::Read).unwrap();
    let dir = ws.resolve("d", Access::Read).unwrap();
    std::fs::remove_dir_all(f.root.join("d")).unwrap();
    symlink(&f.outside, f.root.join("d")).unwrap();
    let error = file.open_file().unwrap_err();
    assert!(
        matches!(error, WorkspaceError::ChangedDuringUse { .. }),
        "{error}"
    );
    let error = dir.open_dir().unwrap_err();
    assert!(
        matches!(error, WorkspaceError::ChangedDuringUse { .. }),
        "{error}"
    );
}

#[test]
fn parent_swapped_for_a_symlink_after_the_check_gets_no_new_file() {
    let f = fixture();
    let ws = workspace(&f);
    std::fs::create_dir(f.root.join("out")).unwrap();
    let resolved = ws.resolve("out/new.txt", Access::Write).unwrap();
    std::fs::remove_dir(f.root.join("out")).unwrap();
    symlink(&f.outside, f.root.join("out")).unwrap();
    let error = resolved.open_parent_for_write().unwrap_err();
    assert!(
        matches!(error, WorkspaceError::ChangedDuringUse { .. }),
        "{error}"
    );
    assert!(!f.outside.join("new.txt").exists());
}

#[test]
fn missing_parents_are_created_below_the_verified_folder() {
    let f = fixture();
    let ws = workspace(&f);
    let resolved = ws.resolve("a/b/c/file.txt", Access::Write).unwrap();
    let (_dir, name) = resolved.open_parent_for_write().unwrap();
    assert_eq!(name, "file.txt");
    assert!(f.root.join("a/b/c").is_dir());
    assert!(Path::new(&f.root).join("a/b/c").starts_with(&f.root));
}

/// Resolution starts at the canonical root without looking at its ancestors again; an ancestor
/// swapped for a symlink after the workspace was built is caught when the file is opened.
#[test]
fn ancestor_of_the_root_swapped_for_a_symlink_is_not_followed() {
    let base = tempfile::tempdir().unwrap();
    let base = base.path().canonicalize().unwrap();
    std::fs::create_dir_all(base.join("parent/ws")).unwrap();
    std::fs::write(base.join("parent/ws/notes.txt"), "mine\n").unwrap();
    std::fs::create_dir_all(base.join("elsewhere/ws")).unwrap();
    std::fs::write(base.join("elsewhere/ws/notes.txt"), "secret\n").unwrap();
    let ws = Workspace::builder(base.join("parent/ws"))
        .home(None)
        .build()
        .unwrap();
    std::fs::rename(base.join("parent"), base.join("moved")).unwrap();
    symlink(base.join("elsewhere"), base.join("parent")).unwrap();
    let error = match ws.resolve("notes.txt", Access::Read) {
        Ok(resolved) => resolved.open_file().unwrap_err(),
        Err(error) => error,
    };
    assert!(
        matches!(error, WorkspaceError::ChangedDuringUse { .. }),
        "{error}"
    );
}

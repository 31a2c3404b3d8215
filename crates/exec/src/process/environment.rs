//! The clean, predictable environment every child starts with.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// Variables copied from the parent when it has them: what programs need to find tools, the
/// home and temp folders, the user and the locale. Everything else (tokens, proxies, editor
/// settings, the parent's terminal) is dropped unless the caller passes it explicitly.
pub const INHERITED_VARIABLES: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TMPDIR",
];

/// Locale variables (`LC_ALL`, `LC_CTYPE`, …) are inherited by prefix.
const INHERITED_PREFIX: &str = "LC_";

/// Variables set in every child so output is plain text and nothing waits on a terminal.
/// `GIT_TERMINAL_PROMPT=0` because git would otherwise ask for credentials on `/dev/tty`
/// and hang until the timeout.
pub const FIXED_VARIABLES: &[(&str, &str)] = &[
    ("TERM", "dumb"),
    ("NO_COLOR", "1"),
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
    ("GIT_TERMINAL_PROMPT", "0"),
];

/// Builds the child's environment: the inherited essentials from `parent`, then the fixed
/// variables, then `extra` (which wins over both).
pub(crate) fn clean_environment(
    parent: impl IntoIterator<Item = (OsString, OsString)>,
    extra: &[(OsString, OsString)],
) -> BTreeMap<OsString, OsString> {
    let mut environment: BTreeMap<OsString, OsString> = parent
        .into_iter()
        .filter(|(name, _)| is_inherited(name))
        .collect();
    for (name, value) in FIXED_VARIABLES {
        environment.insert(name.into(), value.into());
    }
    for (name, value) in extra {
        environment.insert(name.clone(), value.clone());
    }
    environment
}

/// Where `program` is on `path` (the child's PATH): the first absolute folder of it holding an
/// executable file of that name. `None` when `program` names a path already, or nothing is
/// found (the spawn then looks it up itself and reports it missing).
pub(crate) fn find_program(program: &OsStr, path: Option<&OsString>) -> Option<PathBuf> {
    if program.is_empty() || program.as_encoded_bytes().contains(&b'/') {
        return None;
    }
    std::env::split_paths(path?)
        .filter(|folder| folder.is_absolute())
        .map(|folder| folder.join(program))
        .find(|candidate| is_executable_file(candidate))
}

fn is_executable_file(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

fn is_inherited(name: &OsStr) -> bool {
    let Some(name) = name.to_str() else {
        return false;
    };
    INHERITED_VARIABLES.contains(&name) || name.starts_with(INHERITED_PREFIX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn pairs(items: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        items
            .iter()
            .map(|(name, value)| (name.into(), value.into()))
            .collect()
    }

    #[test]
    fn programs_are_found_on_the_given_path_only() {
        let dir = tempfile::tempdir().unwrap();
        let tool = dir.path().join("mytool");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        let not_executable = dir.path().join("plain");
        std::fs::write(&not_executable, "").unwrap();
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let path = OsString::from(format!(
            "relative/bin:/nonexistent:{}",
            dir.path().display()
        ));
        assert_eq!(find_program("mytool".as_ref(), Some(&path)), Some(tool));
        assert_eq!(find_program("plain".as_ref(), Some(&path)), None);
        assert_eq!(find_program("absent".as_ref(), Some(&path)), None);
        assert_eq!(find_program("./mytool".as_ref(), Some(&path)), None);
        assert_eq!(find_program("mytool".as_ref(), None), None);
    }

    #[test]
    fn keeps_essentials_drops_secrets_and_extra_wins() {
        let parent = pairs(&[
            ("PATH", "/usr/bin"),
            ("HOME", "/home/a"),
            ("LC_ALL", "C.UTF-8"),
            ("AWS_SECRET_ACCESS_KEY", "x"),
            ("TERM", "xterm-256color"),
        ]);
        let extra = pairs(&[("PAGER", "less"), ("RUST_LOG", "debug")]);
        let environment = clean_environment(parent, &extra);
        let expected: BTreeMap<OsString, OsString> = pairs(&[
            ("GIT_PAGER", "cat"),
            ("GIT_TERMINAL_PROMPT", "0"),
            ("HOME", "/home/a"),
            ("LC_ALL", "C.UTF-8"),
            ("NO_COLOR", "1"),
            ("PAGER", "less"),
            ("PATH", "/usr/bin"),
            ("RUST_LOG", "debug"),
            ("TERM", "dumb"),
        ])
        .into_iter()
        .collect();
        assert_eq!(environment, expected);
    }
}

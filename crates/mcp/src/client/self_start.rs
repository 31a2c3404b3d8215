//! Keeps toolhost from starting itself as one of its own MCP servers, without end.
//!
//! The usual way to give Claude Code toolhost's tools is a project `.mcp.json` entry running
//! `toolhost serve`; toolhost reads the same `.mcp.json`, so `toolhost serve` in that project
//! would start `toolhost serve`, which starts another, and so on until the machine stops. Two
//! guards: a stdio server that is this very program serving this very workspace is left out
//! with a message saying why, and every stdio server gets [`NESTING_ENV`] one higher than this
//! process, so a chain through a wrapper (`sh -c`, `npx`) ends after [`MAX_NESTING`] levels.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// How many toolhost processes above this one started their child as an MCP server.
pub const NESTING_ENV: &str = "TOOLHOST_MCP_NESTING";

/// The deepest chain of toolhost-as-an-MCP-server-of-toolhost that may start more servers:
/// two gateways in a row are a real set-up, a third one below them is a loop.
pub const MAX_NESTING: u32 = 3;

/// This process's level: 0 unless a toolhost started it as an MCP server.
pub(super) fn nesting() -> u32 {
    std::env::var(NESTING_ENV)
        .ok()
        .and_then(|level| level.trim().parse().ok())
        .unwrap_or(0)
}

/// Why a stdio server must not be started from here, if it must not.
pub(super) fn refusal(
    name: &str,
    command: &str,
    args: &[String],
    env: &BTreeMap<String, String>,
    cwd: &Path,
    workspace: &Path,
) -> Option<String> {
    let level = nesting();
    if level >= MAX_NESTING {
        return Some(format!(
            "not started: this toolhost is the MCP server of a toolhost {level} levels deep \
             ({NESTING_ENV}={level}), so a configured server probably starts toolhost again; \
             look for an entry running toolhost in .mcp.json or [mcp_servers]"
        ));
    }
    let serves_here =
        serve_workspace(args).is_some_and(|served| same_folder(&cwd.join(served), workspace));
    if serves_here && is_this_program(command, env, cwd) {
        return Some(format!(
            "left out: '{name}' runs this toolhost ('{command} {}') on this workspace, which \
             would start itself again without end (it is how Claude Code is given toolhost's \
             tools; toolhost already has them)",
            args.join(" ")
        ));
    }
    None
}

/// The workspace a `toolhost … serve …` command line serves (relative to its working
/// folder), when it is a `serve` command at all.
fn serve_workspace(args: &[String]) -> Option<PathBuf> {
    let mut workspace = PathBuf::from(".");
    let mut serving = false;
    let mut words = args.iter();
    while let Some(word) = words.next() {
        match word.as_str() {
            "serve" => serving = true,
            "--workspace" | "-w" => workspace = PathBuf::from(words.next()?),
            other => {
                if let Some(value) = other.strip_prefix("--workspace=") {
                    workspace = PathBuf::from(value);
                }
            }
        }
    }
    serving.then_some(workspace)
}

fn same_folder(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Whether `command`, found as the process helper finds it (a path, or a name on `PATH`), is
/// the executable of this process.
fn is_this_program(command: &str, env: &BTreeMap<String, String>, cwd: &Path) -> bool {
    let Some(this) = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.canonicalize().ok())
    else {
        return false;
    };
    let found = if command.contains('/') {
        Some(cwd.join(command))
    } else {
        let path = env
            .get("PATH")
            .map(|path| path.into())
            .or_else(|| std::env::var_os("PATH"));
        path.and_then(|path| {
            std::env::split_paths(&path)
                .map(|folder| folder.join(OsStr::new(command)))
                .find(|candidate| candidate.is_file())
        })
    };
    found
        .and_then(|file| file.canonicalize().ok())
        .is_some_and(|file| file == this)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn a_serve_command_line_names_the_workspace_it_serves() {
        assert_eq!(serve_workspace(&words("serve")), Some(PathBuf::from(".")));
        assert_eq!(
            serve_workspace(&words("--workspace /srv/a serve")),
            Some(PathBuf::from("/srv/a"))
        );
        assert_eq!(
            serve_workspace(&words("serve --workspace=../b")),
            Some(PathBuf::from("../b"))
        );
        assert_eq!(serve_workspace(&words("run hello")), None);
    }

    #[test]
    fn another_program_or_another_workspace_is_started() {
        let here = std::env::current_dir().unwrap();
        let env = BTreeMap::new();
        assert!(refusal("git", "git", &words("serve"), &env, &here, &here).is_none());
        let this = std::env::current_exe().unwrap();
        let elsewhere = std::env::temp_dir();
        let other = format!("serve --workspace {}", elsewhere.display());
        assert!(
            refusal(
                "x",
                this.to_str().unwrap(),
                &words(&other),
                &env,
                &here,
                &here
            )
            .is_none()
        );
        let same = refusal(
            "x",
            this.to_str().unwrap(),
            &words("serve"),
            &env,
            &here,
            &here,
        );
        assert!(same.is_some_and(|why| why.contains("start itself again")));
    }
}

//! What the OAuth tests share: a configuration naming the loopback OAuth server
//! (`toolhost_test_support::OAuthServer`) with the tokens in the 0600 file (the keyring has
//! its own tests, `mcp_oauth_keyring.rs`), `toolhost` run with no browser at hand, and
//! `mcp login` with the test playing the browser ([`super::oauth_login`]).

#![allow(dead_code, clippy::unwrap_used)]

use std::path::Path;
use std::process::{Command, Output};

use toolhost_test_support::{HomeAndWorkspace, OAuthServer, write_file, write_project_config};

// Not every test crate that has `support` uses it.
#[allow(unused_imports)]
pub use super::oauth_login::text;

/// The variables that tell toolhost a browser can be opened: removed, so that a test never
/// opens the developer's browser and runs as a headless process does.
pub const BROWSER_VARIABLES: [&str; 3] = ["BROWSER", "DISPLAY", "WAYLAND_DISPLAY"];

/// The tokens go to the 0600 file, whatever keyring the machine has.
pub fn keep_tokens_in_the_file(dirs: &HomeAndWorkspace) {
    write_file(dirs.user_config(), "mcp_oauth_store = \"file\"\n");
}

/// `[mcp_servers.prot]` at the server's MCP URL, with `extra` lines after it; the tokens in
/// the file.
pub fn configure_with(dirs: &HomeAndWorkspace, server: &OAuthServer, extra: &str) {
    keep_tokens_in_the_file(dirs);
    write_project_config(
        &dirs.workspace,
        &format!("[mcp_servers.prot]\nurl = {:?}\n{extra}", server.mcp_url()),
    );
}

/// `[mcp_servers.prot]` at the server's MCP URL; the tokens in the file.
pub fn configure(dirs: &HomeAndWorkspace, server: &OAuthServer) {
    configure_with(dirs, server, "");
}

/// `toolhost ARGS` in the workspace, without a browser.
pub fn toolhost(dirs: &HomeAndWorkspace, args: &[&str]) -> Output {
    toolhost_with_env(dirs, args, &[])
}

/// `toolhost ARGS` in the workspace with `env`, without a browser unless `env` names one.
pub fn toolhost_with_env(dirs: &HomeAndWorkspace, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = super::toolhost_with_home(&dirs.workspace, &dirs.home);
    for variable in BROWSER_VARIABLES {
        command.env_remove(variable);
    }
    command
        .envs(env.iter().copied())
        .args(args)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap()
}

/// `toolhost mcp login prot --no-browser EXTRA…`, the test acting as the browser.
pub fn login(dirs: &HomeAndWorkspace, server: &OAuthServer, extra: &[&str]) -> Output {
    login_with_env(dirs, server, extra, &[])
}

/// [`login`] with `env`; its standard output holds all it printed and, last, its status.
pub fn login_with_env(
    dirs: &HomeAndWorkspace,
    server: &OAuthServer,
    extra: &[&str],
    env: &[(&str, &str)],
) -> Output {
    let args: Vec<&str> = ["mcp", "login", "prot", "--no-browser"]
        .into_iter()
        .chain(extra.iter().copied())
        .collect();
    login_command(dirs, server, &args, env)
}

/// `toolhost mcp login prot` (no flag) where no browser can be opened, the test acting as the
/// browser the user opens by hand and pasting the redirect back.
pub fn headless_login(dirs: &HomeAndWorkspace, server: &OAuthServer) -> Output {
    login_command(dirs, server, &["mcp", "login", "prot"], &[])
}

fn login_command(
    dirs: &HomeAndWorkspace,
    server: &OAuthServer,
    args: &[&str],
    env: &[(&str, &str)],
) -> Output {
    let mut command = Command::new(assert_cmd::cargo::cargo_bin("toolhost"));
    for variable in BROWSER_VARIABLES {
        command.env_remove(variable);
    }
    command
        .env("HOME", &dirs.home)
        .envs(env.iter().copied())
        .arg("--workspace")
        .arg(&dirs.workspace)
        .args(args);
    super::oauth_login::login_through_browser(command, server)
}

/// A "browser" for `$BROWSER` in `folder`: a script that follows the authorization URL and
/// its redirect to toolhost's callback server, as a browser whose user approves at once.
pub fn approving_browser(folder: &Path) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let path = folder.join("approving-browser");
    std::fs::write(
        &path,
        "#!/bin/sh\nexec curl -sSL --max-time 20 -o /dev/null \"$1\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

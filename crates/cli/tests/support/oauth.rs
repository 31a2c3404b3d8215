//! What the OAuth tests share: a configuration naming the loopback OAuth server
//! (`toolhost_test_support::OAuthServer`), `toolhost` run with no browser at hand, and
//! `mcp login --no-browser` with the test playing the browser.

#![allow(dead_code, clippy::unwrap_used)]

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use toolhost_test_support::{HomeAndWorkspace, OAuthServer, write_project_config};

/// The variables that tell toolhost a browser can be opened: removed, so that a test never
/// opens the developer's browser and runs as a headless process does.
pub const BROWSER_VARIABLES: [&str; 3] = ["BROWSER", "DISPLAY", "WAYLAND_DISPLAY"];

/// `[mcp_servers.prot]` at the server's MCP URL, with `extra` lines after it.
pub fn configure_with(dirs: &HomeAndWorkspace, server: &OAuthServer, extra: &str) {
    write_project_config(
        &dirs.workspace,
        &format!("[mcp_servers.prot]\nurl = {:?}\n{extra}", server.mcp_url()),
    );
}

/// `[mcp_servers.prot]` at the server's MCP URL.
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

/// Standard output then standard error.
pub fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// `toolhost mcp login prot --no-browser EXTRA…`, the test acting as the browser.
pub fn login(dirs: &HomeAndWorkspace, server: &OAuthServer, extra: &[&str]) -> Output {
    login_with_env(dirs, server, extra, &[])
}

/// `toolhost mcp login prot` (no flag) where no browser can be opened, the test acting as the
/// browser the user opens by hand and pasting the redirect back.
pub fn headless_login(dirs: &HomeAndWorkspace, server: &OAuthServer) -> Output {
    login_command(dirs, server, &["mcp", "login", "prot"], &[])
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
    let mut child = command
        .env("HOME", &dirs.home)
        .envs(env.iter().copied())
        .arg("--workspace")
        .arg(&dirs.workspace)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut seen = String::new();
    let mut line = String::new();
    let authorize = loop {
        line.clear();
        if stdout.read_line(&mut line).unwrap() == 0 {
            break None;
        }
        seen.push_str(&line);
        if let Some(url) = line.trim().strip_prefix("http://") {
            break Some(format!("http://{url}"));
        }
    };
    let mut stdin = child.stdin.take().unwrap();
    if let Some(authorize) = authorize {
        let redirected = server.browse(&authorize);
        writeln!(stdin, "{redirected}").unwrap();
    }
    drop(stdin);
    std::io::Read::read_to_string(&mut stdout, &mut seen).unwrap();
    let mut output = child.wait_with_output().unwrap();
    seen.push_str(&format!("\n[{}]\n", output.status));
    output.stdout = seen.into_bytes();
    output
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

//! `toolhost mcp login NAME --no-browser` driven by a test that plays the browser: what the
//! OAuth tests (`mcp_oauth.rs`, `mcp_oauth_keyring.rs`) share.

#![allow(dead_code, clippy::unwrap_used)]

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Command, Output, Stdio};

use toolhost_test_support::OAuthServer;

/// Runs `command` (a `toolhost … mcp login NAME --no-browser …` the caller built, with its
/// environment): the authorization URL it prints is followed on `server` as a browser would,
/// and the address the browser ends on is pasted back. Stdout holds everything printed, then
/// the exit status.
pub fn login_through_browser(mut command: Command, server: &OAuthServer) -> Output {
    let mut child = command
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

/// Stdout and stderr of `output`, one after the other.
pub fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

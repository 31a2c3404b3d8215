//! OAuth for remote MCP servers through the `toolhost` binary, against an authorization
//! server and a protected MCP server on 127.0.0.1 written for these tests
//! (`toolhost_test_support::OAuthServer`): `mcp login --no-browser` (the test plays the
//! browser and pastes the redirect back), the token kept in a 0600 file (`mcp_oauth_store =
//! "file"`: the keyring has its tests in `mcp_oauth_keyring.rs`) and used, refreshed
//! when it expires, one refresh at a time when two processes race with rotating refresh
//! tokens, `mcp list` showing the state, `mcp logout`, and the failures: a 401 without a
//! login, dynamic registration refused, a static client, an `iss` that does not match.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/oauth_login.rs"]
mod oauth_login;
mod support;

use std::os::unix::fs::PermissionsExt as _;
use std::process::{Command, Stdio};

use oauth_login::{login_through_browser, text};
use toolhost_test_support::{
    HomeAndWorkspace, OAuthServer, OAuthServerOptions, write_file, write_project_config,
};

fn configure(dirs: &HomeAndWorkspace, server: &OAuthServer) {
    keep_tokens_in_the_file(dirs);
    write_project_config(
        &dirs.workspace,
        &format!("[mcp_servers.prot]\nurl = {:?}\n", server.mcp_url()),
    );
}

/// These tests check the 0600 file, whatever keyring the machine has.
fn keep_tokens_in_the_file(dirs: &HomeAndWorkspace) {
    write_file(dirs.user_config(), "mcp_oauth_store = \"file\"\n");
}

fn toolhost(dirs: &HomeAndWorkspace, args: &[&str]) -> std::process::Output {
    support::toolhost_with_home(&dirs.workspace, &dirs.home)
        .args(args)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap()
}

/// `toolhost mcp login prot --no-browser EXTRA…`, the test acting as the browser.
fn login(dirs: &HomeAndWorkspace, server: &OAuthServer, extra: &[&str]) -> std::process::Output {
    login_with_env(dirs, server, extra, &[])
}

fn login_with_env(
    dirs: &HomeAndWorkspace,
    server: &OAuthServer,
    extra: &[&str],
    env: &[(&str, &str)],
) -> std::process::Output {
    let mut command = Command::new(assert_cmd::cargo::cargo_bin("toolhost"));
    command
        .env("HOME", &dirs.home)
        .envs(env.iter().copied())
        .arg("--workspace")
        .arg(&dirs.workspace)
        .args(["mcp", "login", "prot", "--no-browser"])
        .args(extra);
    login_through_browser(command, server)
}

#[test]
fn login_keeps_a_token_that_is_used_refreshed_and_deleted_on_logout() {
    let dirs = HomeAndWorkspace::new();
    let server = OAuthServer::start(OAuthServerOptions {
        access_lifetime_secs: 10,
        ..OAuthServerOptions::default()
    });
    configure(&dirs, &server);

    let listed = toolhost(&dirs, &["mcp", "list"]);
    assert!(
        text(&listed).contains("oauth: not logged in"),
        "{}",
        text(&listed)
    );
    let doctor = text(&toolhost(&dirs, &["doctor"]));
    let line = doctor
        .lines()
        .find(|line| line.contains("prot:"))
        .unwrap_or("");
    assert!(
        line.contains("run `toolhost mcp login prot`") && line.contains("[oauth: not logged in]"),
        "{doctor}"
    );
    let refused = toolhost(&dirs, &["mcp", "test", "prot"]);
    assert!(!refused.status.success());
    assert!(
        text(&refused).contains("run `toolhost mcp login prot`"),
        "{}",
        text(&refused)
    );

    let logged_in = login(&dirs, &server, &[]);
    assert!(logged_in.status.success(), "{}", text(&logged_in));
    assert!(
        text(&logged_in).contains("Logged in to prot"),
        "{}",
        text(&logged_in)
    );
    assert_eq!(server.registrations(), 1, "dynamic registration");
    let file = dirs.home.join(".toolhost/mcp-oauth.json");
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let stored = std::fs::read_to_string(&file).unwrap();
    assert!(
        stored.contains(&server.issuer()),
        "keyed with its issuer: {stored}"
    );

    let tested = toolhost(&dirs, &["mcp", "test", "prot"]);
    assert!(tested.status.success(), "{}", text(&tested));
    assert!(
        text(&tested).contains("mcp__prot__whoami"),
        "{}",
        text(&tested)
    );
    let listed = toolhost(&dirs, &["mcp", "list"]);
    assert!(
        text(&listed).contains(&format!("oauth: logged in with {}", server.issuer()))
            && text(&listed).contains(&format!("kept in {}", file.display())),
        "{}",
        text(&listed)
    );
    let doctor = text(&toolhost(&dirs, &["doctor"]));
    assert!(
        doctor.lines().any(|line| line.contains("prot: started")
            && line.contains(&format!("oauth: logged in with {}", server.issuer()))),
        "{doctor}"
    );

    // Expired: two processes at once, refresh tokens rotating. One refreshes; the other waits
    // for the lock, reads the new token and uses it (with the old refresh token it would be
    // refused and the login lost).
    std::thread::sleep(std::time::Duration::from_secs(6));
    let racing: Vec<_> = (0..2)
        .map(|_| {
            Command::new(assert_cmd::cargo::cargo_bin("toolhost"))
                .env("HOME", &dirs.home)
                .arg("--workspace")
                .arg(&dirs.workspace)
                .args(["mcp", "test", "prot"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in racing {
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "{}", text(&output));
    }
    assert_eq!(server.refresh_grants(), 1, "one refresh for both processes");

    // Tokens the server no longer knows: the refresh is refused, the login cleared, and the
    // message says what to do.
    server.revoke_everything();
    std::thread::sleep(std::time::Duration::from_secs(6));
    let lost = toolhost(&dirs, &["mcp", "test", "prot"]);
    assert!(!lost.status.success());
    assert!(
        text(&lost).contains("toolhost mcp login prot"),
        "{}",
        text(&lost)
    );

    let again = login(&dirs, &server, &[]);
    assert!(again.status.success(), "{}", text(&again));
    let logged_out = toolhost(&dirs, &["mcp", "logout", "prot"]);
    assert!(
        text(&logged_out).contains("Logged out of prot"),
        "{}",
        text(&logged_out)
    );
    let listed = toolhost(&dirs, &["mcp", "list"]);
    assert!(
        text(&listed).contains("oauth: not logged in"),
        "{}",
        text(&listed)
    );
}

#[test]
fn a_static_client_logs_in_where_registration_is_refused() {
    let dirs = HomeAndWorkspace::new();
    let server = OAuthServer::start(OAuthServerOptions {
        registration: false,
        static_client: Some(("toolhost-test".to_owned(), "s3cret".to_owned())),
        ..OAuthServerOptions::default()
    });
    configure(&dirs, &server);
    let refused = login(&dirs, &server, &[]);
    assert!(!refused.status.success());
    assert!(
        text(&refused).to_lowercase().contains("registration"),
        "{}",
        text(&refused)
    );

    let key = "TOOLHOST_TEST_CLIENT_SECRET";
    let logged_in = login_with_env(
        &dirs,
        &server,
        &["--client-id", "toolhost-test", "--client-secret-env", key],
        &[(key, "s3cret")],
    );
    assert!(logged_in.status.success(), "{}", text(&logged_in));
    assert_eq!(server.registrations(), 0);
    let tested = toolhost(&dirs, &["mcp", "test", "prot"]);
    assert!(tested.status.success(), "{}", text(&tested));
}

#[test]
fn an_iss_that_is_not_the_servers_is_refused() {
    let dirs = HomeAndWorkspace::new();
    let server = OAuthServer::start(OAuthServerOptions {
        wrong_iss: true,
        ..OAuthServerOptions::default()
    });
    configure(&dirs, &server);
    let refused = login(&dirs, &server, &[]);
    assert!(!refused.status.success(), "{}", text(&refused));
    assert!(
        text(&refused).to_lowercase().contains("iss"),
        "{}",
        text(&refused)
    );
    assert!(
        !dirs.home.join(".toolhost/mcp-oauth.json").exists()
            || !std::fs::read_to_string(dirs.home.join(".toolhost/mcp-oauth.json"))
                .unwrap()
                .contains("access-")
    );
}

#[test]
fn a_call_refused_for_want_of_a_scope_says_to_log_in_again() {
    let dirs = HomeAndWorkspace::new();
    let server = OAuthServer::start(OAuthServerOptions {
        call_scope: Some("superuser".to_owned()),
        ..OAuthServerOptions::default()
    });
    configure(&dirs, &server);
    let logged_in = login(&dirs, &server, &[]);
    assert!(logged_in.status.success(), "{}", text(&logged_in));
    let called = toolhost(&dirs, &["call", "mcp__prot__whoami", "{}", "--yes"]);
    let said = text(&called);
    assert!(
        said.contains("insufficient_scope") && said.contains("toolhost mcp login prot"),
        "{said}"
    );
}

/// A static client kept in `[mcp_servers.NAME.oauth]`: `mcp login` needs no flags (the client,
/// its secret's variable and the callback port come from the configuration), and a refresh
/// sends the secret, which the authorization server requires of a confidential client.
#[test]
fn a_configured_static_client_logs_in_without_flags_and_refreshes_with_its_secret() {
    let dirs = HomeAndWorkspace::new();
    let server = OAuthServer::start(OAuthServerOptions {
        registration: false,
        static_client: Some(("toolhost-test".to_owned(), "s3cret".to_owned())),
        access_lifetime_secs: 10,
        ..OAuthServerOptions::default()
    });
    let port = toolhost_test_support::free_port();
    let key = "TOOLHOST_TEST_CLIENT_SECRET";
    keep_tokens_in_the_file(&dirs);
    write_project_config(
        &dirs.workspace,
        &format!(
            "[mcp_servers.prot]\nurl = {:?}\n\n[mcp_servers.prot.oauth]\nclient_id = \
             \"toolhost-test\"\nclient_secret_env = \"{key}\"\ncallback_port = {port}\n",
            server.mcp_url()
        ),
    );

    let without_secret = login(&dirs, &server, &[]);
    assert!(!without_secret.status.success());
    assert!(
        text(&without_secret).contains(&format!(
            "oauth.client_secret_env: the environment variable {key} is not set"
        )),
        "{}",
        text(&without_secret)
    );

    let logged_in = login_with_env(&dirs, &server, &[], &[(key, "s3cret")]);
    assert!(logged_in.status.success(), "{}", text(&logged_in));
    assert!(
        text(&logged_in).contains(&format!("127.0.0.1%3A{port}%2Fcallback")),
        "the configured callback port is the redirect URI's: {}",
        text(&logged_in)
    );
    assert_eq!(server.registrations(), 0);

    // Expired: the refresh authenticates the client with the secret from the environment.
    std::thread::sleep(std::time::Duration::from_secs(6));
    let refreshed = support::toolhost_with_home(&dirs.workspace, &dirs.home)
        .env(key, "s3cret")
        .args(["mcp", "test", "prot"])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(refreshed.status.success(), "{}", text(&refreshed));
    assert_eq!(server.refresh_grants(), 1);

    // Without the secret's variable the connection says which variable to set.
    std::thread::sleep(std::time::Duration::from_secs(6));
    let unset = toolhost(&dirs, &["mcp", "test", "prot"]);
    assert!(!unset.status.success());
    assert!(
        text(&unset).contains(&format!(
            "oauth.client_secret_env: the environment variable {key} is not set"
        )),
        "{}",
        text(&unset)
    );
}

/// A server that answers a refresh without a new refresh token: the one held is kept, so the
/// next refresh works too (and the login is not lost).
#[test]
fn a_refresh_answered_without_a_new_refresh_token_keeps_the_old_one() {
    let dirs = HomeAndWorkspace::new();
    let server = OAuthServer::start(OAuthServerOptions {
        access_lifetime_secs: 10,
        rotate_refresh_tokens: false,
        ..OAuthServerOptions::default()
    });
    configure(&dirs, &server);
    let logged_in = login(&dirs, &server, &[]);
    assert!(logged_in.status.success(), "{}", text(&logged_in));
    for refreshes in 1..=2 {
        std::thread::sleep(std::time::Duration::from_secs(6));
        let tested = toolhost(&dirs, &["mcp", "test", "prot"]);
        assert!(
            tested.status.success(),
            "refresh {refreshes}: {}",
            text(&tested)
        );
        assert_eq!(server.refresh_grants(), refreshes);
    }
}

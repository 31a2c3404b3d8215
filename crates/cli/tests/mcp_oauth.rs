//! OAuth for remote MCP servers through the `toolhost` binary, against an authorization
//! server and a protected MCP server on 127.0.0.1 written for these tests
//! (`toolhost_test_support::OAuthServer`): `mcp login --no-browser` (the test plays the
//! browser and pastes the redirect back), the token kept in a 0600 file (`mcp_oauth_store =
//! "file"`: the keyring has its tests in `mcp_oauth_keyring.rs`) and used, refreshed
//! when it expires, one refresh at a time when two processes race with rotating refresh
//! tokens, `mcp list` showing the state, `mcp logout`, and the failures: a 401 without a
//! login, dynamic registration refused, a static client, an `iss` that does not match; and
//! the same login used over the legacy SSE transport (refresh, step-up, a machine client).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::os::unix::fs::PermissionsExt as _;
use std::process::{Command, Stdio};

use support::oauth::{
    approving_browser, configure, keep_tokens_in_the_file, login, login_with_env, text, toolhost,
    toolhost_with_env,
};
use toolhost_test_support::{
    HomeAndWorkspace, OAuthServer, OAuthServerOptions, write_project_config,
};

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

/// A legacy SSE server behind the same OAuth: `mcp login` finds its authorization server from
/// the 401 its stream's `GET` answers, every request carries the token, a token the server no
/// longer takes is refreshed once and the request sent again, and a login the server forgot
/// says to log in.
#[test]
fn a_legacy_sse_server_uses_the_login_and_refreshes_on_a_401() {
    let dirs = HomeAndWorkspace::new();
    let server = OAuthServer::start(OAuthServerOptions::default());
    keep_tokens_in_the_file(&dirs);
    write_project_config(
        &dirs.workspace,
        &format!(
            "[mcp_servers.prot]\ntype = \"sse\"\nurl = {:?}\n",
            server.sse_url()
        ),
    );
    let refused = toolhost(&dirs, &["mcp", "test", "prot"]);
    assert!(!refused.status.success());
    assert!(
        text(&refused).contains("needs an OAuth login")
            && text(&refused).contains("run `toolhost mcp login prot`"),
        "{}",
        text(&refused)
    );

    let logged_in = login(&dirs, &server, &[]);
    assert!(logged_in.status.success(), "{}", text(&logged_in));
    let listed = toolhost(&dirs, &["mcp", "list"]);
    assert!(
        text(&listed).contains(&format!("oauth: logged in with {}", server.issuer())),
        "{}",
        text(&listed)
    );
    let called = toolhost(&dirs, &["call", "mcp__prot__whoami", "{}", "--yes"]);
    assert!(called.status.success(), "{}", text(&called));
    assert!(
        text(&called).contains("called with access-"),
        "{}",
        text(&called)
    );
    assert_eq!(server.refresh_grants(), 0);

    server.forget_access_tokens();
    let refreshed = toolhost(&dirs, &["call", "mcp__prot__whoami", "{}", "--yes"]);
    assert!(refreshed.status.success(), "{}", text(&refreshed));
    assert_eq!(server.refresh_grants(), 1, "one refresh after the 401");

    server.revoke_everything();
    let lost = toolhost(&dirs, &["mcp", "test", "prot"]);
    assert!(!lost.status.success());
    assert!(
        text(&lost).contains("run `toolhost mcp login prot`"),
        "{}",
        text(&lost)
    );
}

/// Over the legacy SSE transport too, a 403 `insufficient_scope` steps up in the browser and
/// the message is posted again with the new token.
#[test]
fn a_legacy_sse_server_steps_up_on_a_403() {
    let dirs = HomeAndWorkspace::new();
    let server = OAuthServer::start(OAuthServerOptions {
        call_scope: Some("write".to_owned()),
        ..OAuthServerOptions::default()
    });
    keep_tokens_in_the_file(&dirs);
    write_project_config(
        &dirs.workspace,
        &format!(
            "[mcp_servers.prot]\ntype = \"sse\"\nurl = {:?}\n",
            server.sse_url()
        ),
    );
    let logged_in = login(&dirs, &server, &[]);
    assert!(logged_in.status.success(), "{}", text(&logged_in));
    let browser = approving_browser(&dirs.home);
    let called = toolhost_with_env(
        &dirs,
        &["call", "mcp__prot__whoami", "{}", "--yes"],
        &[("BROWSER", browser.to_str().unwrap())],
    );
    let said = text(&called);
    assert!(called.status.success(), "{said}");
    assert!(said.contains("called with access-"), "{said}");
    assert_eq!(server.authorizations(), ["mcp admin", "mcp admin write"]);
}

/// A machine client of a legacy SSE server: no login, and a new token when the server no
/// longer takes the one held.
#[test]
fn a_machine_client_of_a_legacy_sse_server_gets_a_new_token_on_a_401() {
    let dirs = HomeAndWorkspace::new();
    let server = OAuthServer::start(OAuthServerOptions {
        registration: false,
        static_client: Some(("bot".to_owned(), "s3cret".to_owned())),
        ..OAuthServerOptions::default()
    });
    let key = "TOOLHOST_TEST_MACHINE_SECRET";
    keep_tokens_in_the_file(&dirs);
    write_project_config(
        &dirs.workspace,
        &format!(
            "[mcp_servers.prot]\ntype = \"sse\"\nurl = {:?}\n\n[mcp_servers.prot.oauth]\n\
             grant = \"client_credentials\"\nclient_id = \"bot\"\nclient_secret_env = \"{key}\"\n",
            server.sse_url()
        ),
    );
    let call = || {
        toolhost_with_env(
            &dirs,
            &["call", "mcp__prot__whoami", "{}", "--yes"],
            &[(key, "s3cret")],
        )
    };
    let called = call();
    assert!(called.status.success(), "{}", text(&called));
    assert_eq!(server.machine_grants().len(), 1);
    server.forget_access_tokens();
    let renewed = call();
    assert!(renewed.status.success(), "{}", text(&renewed));
    assert_eq!(server.machine_grants().len(), 2);
}

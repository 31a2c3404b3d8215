//! A machine client (`[mcp_servers.NAME.oauth] grant = "client_credentials"`) through the
//! `toolhost` binary, against the loopback OAuth server (`toolhost_test_support::OAuthServer`):
//! no login and no browser, a token got by the first connection and kept for the next, a new
//! one when the server refuses it (401), one with more scopes when a 403 names them, and the
//! messages when the secret's variable is unset or the secret is wrong.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use support::oauth::{configure_with, text, toolhost_with_env};
use toolhost_test_support::{HomeAndWorkspace, OAuthServer, OAuthServerOptions};

const SECRET_VARIABLE: &str = "TOOLHOST_TEST_MACHINE_SECRET";

fn machine_server(call_scope: Option<&str>) -> OAuthServer {
    OAuthServer::start(OAuthServerOptions {
        registration: false,
        static_client: Some(("bot".to_owned(), "s3cret".to_owned())),
        call_scope: call_scope.map(str::to_owned),
        ..OAuthServerOptions::default()
    })
}

fn configure_machine(dirs: &HomeAndWorkspace, server: &OAuthServer) {
    configure_with(
        dirs,
        server,
        &format!(
            "[mcp_servers.prot.oauth]\ngrant = \"client_credentials\"\nclient_id = \"bot\"\n\
             client_secret_env = \"{SECRET_VARIABLE}\"\n"
        ),
    );
}

fn with_secret(dirs: &HomeAndWorkspace, args: &[&str], secret: &str) -> std::process::Output {
    toolhost_with_env(dirs, args, &[(SECRET_VARIABLE, secret)])
}

#[test]
fn a_machine_client_gets_its_own_tokens_and_new_ones_when_refused() {
    let dirs = HomeAndWorkspace::new();
    let server = machine_server(Some("write"));
    configure_machine(&dirs, &server);

    // No login: the first connection gets a token, the next one keeps it.
    let tested = with_secret(&dirs, &["mcp", "test", "prot"], "s3cret");
    assert!(tested.status.success(), "{}", text(&tested));
    assert!(
        text(&tested).contains("mcp__prot__whoami"),
        "{}",
        text(&tested)
    );
    assert_eq!(server.machine_grants(), ["mcp admin"]);
    let again = with_secret(&dirs, &["mcp", "test", "prot"], "s3cret");
    assert!(again.status.success(), "{}", text(&again));
    assert_eq!(server.machine_grants().len(), 1, "the stored token is used");
    assert_eq!(server.authorizations().len(), 0, "never a browser");

    // A call that needs a scope the token lacks: a new token with it, no browser.
    let called = with_secret(
        &dirs,
        &["call", "mcp__prot__whoami", "{}", "--yes"],
        "s3cret",
    );
    assert!(called.status.success(), "{}", text(&called));
    assert!(
        text(&called).contains("called with access-"),
        "{}",
        text(&called)
    );
    assert_eq!(server.machine_grants(), ["mcp admin", "mcp admin write"]);

    // A token the server no longer takes (401): a new one, with the scopes the last one
    // needed, and the call goes through.
    server.forget_access_tokens();
    let renewed = with_secret(
        &dirs,
        &["call", "mcp__prot__whoami", "{}", "--yes"],
        "s3cret",
    );
    assert!(renewed.status.success(), "{}", text(&renewed));
    assert_eq!(
        server.machine_grants(),
        ["mcp admin", "mcp admin write", "mcp admin write"]
    );

    let listed = with_secret(&dirs, &["mcp", "list"], "s3cret");
    assert!(
        text(&listed).contains(&format!("oauth: logged in with {}", server.issuer())),
        "{}",
        text(&listed)
    );
}

#[test]
fn mcp_login_checks_a_machine_clients_credentials_and_says_what_is_wrong() {
    let dirs = HomeAndWorkspace::new();
    let server = machine_server(None);
    configure_machine(&dirs, &server);

    let unset = toolhost_with_env(&dirs, &["mcp", "login", "prot"], &[]);
    assert!(!unset.status.success());
    assert!(
        text(&unset).contains(&format!(
            "oauth.client_secret_env: the environment variable {SECRET_VARIABLE} is not set"
        )),
        "{}",
        text(&unset)
    );

    let wrong = with_secret(&dirs, &["mcp", "login", "prot"], "guessed");
    assert!(!wrong.status.success());
    assert!(
        text(&wrong).contains("refused the client credentials of bot")
            && text(&wrong).contains("invalid_client"),
        "{}",
        text(&wrong)
    );

    let logged_in = with_secret(&dirs, &["mcp", "login", "prot"], "s3cret");
    assert!(logged_in.status.success(), "{}", text(&logged_in));
    assert!(
        text(&logged_in).contains(&format!(
            "Logged in to prot ({}) with {}, as the client bot (client credentials: every \
             connection gets its own token)",
            server.mcp_url(),
            server.issuer()
        )),
        "{}",
        text(&logged_in)
    );
    assert_eq!(server.authorizations().len(), 0, "never a browser");

    // Logging in again asks for a new token, which checks the credentials again.
    let again = with_secret(&dirs, &["mcp", "login", "prot"], "s3cret");
    assert!(again.status.success(), "{}", text(&again));
    assert_eq!(server.machine_grants().len(), 2);
}

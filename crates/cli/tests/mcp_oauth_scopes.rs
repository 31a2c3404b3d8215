//! Which scopes `toolhost` asks a remote MCP server's authorization server for, through the
//! binary against the loopback OAuth server (`toolhost_test_support::OAuthServer`): the scope
//! a 401 challenge names at login, the step-up a 403 `insufficient_scope` starts during a
//! command when a browser can be opened (and the `mcp login --scope …` it says to run when
//! none can, or when the scope is held already or not granted), and the authorization
//! server's metadata read from a configured URL.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use support::oauth::{
    approving_browser, configure, configure_with, headless_login, login, text, toolhost,
    toolhost_with_env,
};
use toolhost_test_support::{HomeAndWorkspace, OAuthServer, OAuthServerOptions};

/// The address `mcp login` printed for the browser.
fn authorization_url(login_output: &str) -> &str {
    login_output
        .lines()
        .map(str::trim)
        .find(|line| line.starts_with("http://") && line.contains("/authorize?"))
        .unwrap_or_else(|| panic!("no authorization URL in: {login_output}"))
}

/// The server configured as `prot` and logged in to, with the scopes login chooses; what
/// `mcp login` printed.
fn configure_and_log_in(dirs: &HomeAndWorkspace, server: &OAuthServer) -> String {
    configure(dirs, server);
    let logged_in = login(dirs, server, &[]);
    assert!(logged_in.status.success(), "{}", text(&logged_in));
    text(&logged_in)
}

/// `toolhost call` of the server's tool, with `$BROWSER` a browser that approves.
fn call_with_a_browser(dirs: &HomeAndWorkspace) -> std::process::Output {
    let browser = approving_browser(&dirs.home);
    toolhost_with_env(
        dirs,
        &["call", "mcp__prot__whoami", "{}", "--yes"],
        &[("BROWSER", browser.to_str().unwrap())],
    )
}

#[test]
fn login_asks_for_the_scope_the_servers_401_names() {
    let dirs = HomeAndWorkspace::new();
    let server = OAuthServer::start(OAuthServerOptions {
        challenge_scope: Some("mcp".to_owned()),
        ..OAuthServerOptions::default()
    });
    let logged_in = configure_and_log_in(&dirs, &server);
    assert!(
        authorization_url(&logged_in).contains("&scope=mcp&"),
        "the challenge's scope, not every scope the metadata lists: {logged_in}"
    );
    assert_eq!(server.authorizations(), ["mcp"]);
}

#[test]
fn without_a_challenge_scope_login_asks_for_the_resources_scopes_supported() {
    let dirs = HomeAndWorkspace::new();
    let server = OAuthServer::start(OAuthServerOptions::default());
    configure_and_log_in(&dirs, &server);
    assert_eq!(server.authorizations(), ["mcp admin"]);
}

/// A call that needs a scope the login lacks: with a browser at hand (`$BROWSER`), the
/// command authorizes the union of the scopes granted and the one the 403 names, and the
/// call goes through in the same run.
#[test]
fn a_403_for_want_of_a_scope_steps_up_in_the_browser_and_the_call_goes_through() {
    let dirs = HomeAndWorkspace::new();
    let server = OAuthServer::start(OAuthServerOptions {
        call_scope: Some("write".to_owned()),
        ..OAuthServerOptions::default()
    });
    configure_and_log_in(&dirs, &server);

    let called = call_with_a_browser(&dirs);
    let said = text(&called);
    assert!(called.status.success(), "{said}");
    assert!(
        said.contains(
            "prot asks for the scope 'write', which its login lacks: opening the \
                       browser to authorize mcp admin write"
        ),
        "{said}"
    );
    assert!(said.contains("called with access-"), "{said}");
    assert_eq!(server.authorizations(), ["mcp admin", "mcp admin write"]);

    // The new grant is kept: the next command needs no browser.
    let again = toolhost(&dirs, &["call", "mcp__prot__whoami", "{}", "--yes"]);
    assert!(again.status.success(), "{}", text(&again));
    assert_eq!(server.authorizations().len(), 2);
}

/// An authorization server that grants less than the step-up asks: the call is refused
/// again, and the message says what was granted.
#[test]
fn a_step_up_the_authorization_server_grants_less_of_says_what_it_granted() {
    let dirs = HomeAndWorkspace::new();
    let server = OAuthServer::start(OAuthServerOptions {
        call_scope: Some("write".to_owned()),
        grantable_scopes: Some(vec!["mcp".to_owned(), "admin".to_owned()]),
        ..OAuthServerOptions::default()
    });
    configure_and_log_in(&dirs, &server);

    let called = call_with_a_browser(&dirs);
    let said = text(&called);
    assert!(
        said.contains(
            "prot still refuses the OAuth token for want of the scope 'write' after the \
             step-up: the authorization server granted 'mcp admin'"
        ),
        "{said}"
    );
    assert_eq!(server.authorizations(), ["mcp admin", "mcp admin write"]);
}

/// A server that refuses a scope the login holds: authorizing again could not help, so no
/// browser opens and the message says so.
#[test]
fn a_403_for_a_scope_the_login_holds_starts_no_authorization() {
    let dirs = HomeAndWorkspace::new();
    let server = OAuthServer::start(OAuthServerOptions {
        call_scope: Some("admin".to_owned()),
        call_refused_anyway: true,
        ..OAuthServerOptions::default()
    });
    configure_and_log_in(&dirs, &server);

    let called = call_with_a_browser(&dirs);
    let said = text(&called);
    assert!(
        said.contains(
            "prot refused the OAuth token for want of the scope 'admin', which the login \
             already grants: authorizing again would not help"
        ),
        "{said}"
    );
    assert_eq!(server.authorizations().len(), 1, "no authorization started");
}

/// Where no browser can be opened, `mcp login` without a flag works as `--no-browser`: it
/// prints the address and reads the redirect back, instead of waiting for a callback that
/// no browser here can make.
#[test]
fn login_without_a_browser_reads_the_redirect_back() {
    let dirs = HomeAndWorkspace::new();
    let server = OAuthServer::start(OAuthServerOptions::default());
    configure(&dirs, &server);
    let logged_in = headless_login(&dirs, &server);
    let said = text(&logged_in);
    assert!(logged_in.status.success(), "{said}");
    assert!(
        said.contains("No browser can be opened here (no $BROWSER, no display).")
            && said.contains("Then paste here the address the browser ends on")
            && said.contains("Logged in to prot"),
        "{said}"
    );
}

/// A headless process (no `$BROWSER`, no display) never starts an authorization nobody can
/// finish: it says which login grants the scope, and that login does.
#[test]
fn without_a_browser_a_403_says_which_login_grants_the_scope() {
    let dirs = HomeAndWorkspace::new();
    let server = OAuthServer::start(OAuthServerOptions {
        call_scope: Some("superuser".to_owned()),
        ..OAuthServerOptions::default()
    });
    configure_and_log_in(&dirs, &server);
    let called = toolhost(&dirs, &["call", "mcp__prot__whoami", "{}", "--yes"]);
    let said = text(&called);
    assert!(
        said.contains(
            "prot asks for the scope 'superuser', which its login lacks, and no browser can be \
             opened here (no $BROWSER, no display): run `toolhost mcp login prot --no-browser \
             --scope mcp --scope admin --scope superuser`"
        ),
        "{said}"
    );
    assert!(said.contains("insufficient_scope"), "{said}");
    assert_eq!(server.authorizations().len(), 1, "no authorization started");

    let granted = login(
        &dirs,
        &server,
        &["--scope", "mcp", "--scope", "admin", "--scope", "superuser"],
    );
    assert!(granted.status.success(), "{}", text(&granted));
    let called = toolhost(&dirs, &["call", "mcp__prot__whoami", "{}", "--yes"]);
    assert!(called.status.success(), "{}", text(&called));
}

/// `[mcp_servers.NAME.oauth] auth_server_metadata_url`: the authorization server's metadata
/// is where discovery does not look; login and every later connection read it there.
#[test]
fn the_authorization_server_metadata_is_read_from_the_configured_url() {
    let dirs = HomeAndWorkspace::new();
    let server = OAuthServer::start(OAuthServerOptions {
        metadata_path: Some("/sso/metadata.json".to_owned()),
        ..OAuthServerOptions::default()
    });
    configure(&dirs, &server);
    let undiscovered = login(&dirs, &server, &[]);
    assert!(!undiscovered.status.success(), "{}", text(&undiscovered));
    assert!(
        text(&undiscovered).contains("cannot start"),
        "{}",
        text(&undiscovered)
    );

    configure_with(
        &dirs,
        &server,
        &format!(
            "[mcp_servers.prot.oauth]\nauth_server_metadata_url = \"{}/sso/metadata.json\"\n",
            server.issuer()
        ),
    );
    let logged_in = login(&dirs, &server, &[]);
    assert!(logged_in.status.success(), "{}", text(&logged_in));
    assert!(
        text(&logged_in).contains(&format!("with {}", server.issuer())),
        "{}",
        text(&logged_in)
    );
    let tested = toolhost(&dirs, &["mcp", "test", "prot"]);
    assert!(tested.status.success(), "{}", text(&tested));
    assert!(
        text(&tested).contains("mcp__prot__whoami"),
        "{}",
        text(&tested)
    );
}

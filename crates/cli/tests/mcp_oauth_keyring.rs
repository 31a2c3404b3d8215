//! The OS keyring as the OAuth token store, through the `toolhost` binary and a real Secret
//! Service: GNOME Keyring's daemon on a private session bus (`session_bus.rs`), against the
//! loopback authorization server of the OAuth tests. `mcp_oauth_store = "keyring"` keeps the
//! login in the keyring (libsecret's `secret-tool` finds it, no token file is written), `mcp
//! test` uses it, an expired token is refreshed once for two racing processes and saved back
//! to the keyring, `mcp logout` deletes it; `auto` moves a login left in the file into the
//! keyring at its next refresh; `auto` without a session bus, or with a bus but no Secret
//! Service, keeps the 0600 file and says why; `keyring` without a keyring is a clear error.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/session_bus.rs"]
mod session_bus;
mod support;

use std::os::unix::fs::PermissionsExt as _;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use session_bus::{SecretService, SessionBus};
use support::oauth_login::{login_through_browser, text};
use toolhost_test_support::{
    HomeAndWorkspace, OAuthServer, OAuthServerOptions, write_file, write_project_config,
};

/// The attributes the keyring item of a server is found by.
fn item(server: &OAuthServer) -> [(&'static str, String); 2] {
    [
        ("service", "toolhost-mcp-oauth".to_owned()),
        ("username", server.mcp_url()),
    ]
}

fn lookup(keyring: &SecretService, server: &OAuthServer) -> Option<String> {
    let [(service, name), (user, url)] = item(server);
    keyring.lookup(&[(service, name.as_str()), (user, url.as_str())])
}

/// Where the tests run toolhost: the session bus it sees, if any.
#[derive(Clone, Copy)]
enum Bus<'a> {
    At(&'a str),
    None,
}

/// `toolhost --workspace W ARGS…` with `HOME` in the test folder and the session bus `bus`.
fn command(dirs: &HomeAndWorkspace, bus: Bus<'_>, args: &[&str]) -> Command {
    let mut command = Command::new(assert_cmd::cargo::cargo_bin("toolhost"));
    command
        .env("HOME", &dirs.home)
        .env_remove("XDG_RUNTIME_DIR")
        .arg("--workspace")
        .arg(&dirs.workspace)
        .args(args);
    match bus {
        Bus::At(address) => command.env("DBUS_SESSION_BUS_ADDRESS", address),
        Bus::None => command.env_remove("DBUS_SESSION_BUS_ADDRESS"),
    };
    command
}

fn toolhost(dirs: &HomeAndWorkspace, bus: Bus<'_>, args: &[&str]) -> Output {
    let mut child = command(dirs, bus, args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn login(dirs: &HomeAndWorkspace, bus: Bus<'_>, server: &OAuthServer) -> Output {
    login_through_browser(
        command(dirs, bus, &["mcp", "login", "prot", "--no-browser"]),
        server,
    )
}

/// The project's server `prot` at `server`, and `store` in the user's configuration (none:
/// the default).
fn configure(dirs: &HomeAndWorkspace, server: &OAuthServer, store: Option<&str>) {
    write_project_config(
        &dirs.workspace,
        &format!("[mcp_servers.prot]\nurl = {:?}\n", server.mcp_url()),
    );
    let user = store
        .map(|store| format!("mcp_oauth_store = {store:?}\n"))
        .unwrap_or_default();
    write_file(dirs.user_config(), &user);
}

fn token_file(dirs: &HomeAndWorkspace) -> std::path::PathBuf {
    dirs.home.join(".toolhost/mcp-oauth.json")
}

/// Whether the token file holds a login (it may exist, emptied, once a login moved out).
fn file_holds_a_login(dirs: &HomeAndWorkspace) -> bool {
    std::fs::read_to_string(token_file(dirs)).is_ok_and(|text| text.contains("access_token"))
}

#[test]
fn a_keyring_login_is_used_refreshed_and_deleted_without_a_token_file() {
    let dirs = HomeAndWorkspace::new();
    let keyring = SecretService::start(dirs.root(), &dirs.home);
    let bus = Bus::At(&keyring.bus.address);
    let server = OAuthServer::start(OAuthServerOptions {
        access_lifetime_secs: 10,
        ..OAuthServerOptions::default()
    });
    configure(&dirs, &server, Some("keyring"));

    let logged_in = login(&dirs, bus, &server);
    assert!(logged_in.status.success(), "{}", text(&logged_in));
    assert!(
        text(&logged_in).contains("The tokens are kept in the OS keyring (the Secret Service)."),
        "{}",
        text(&logged_in)
    );
    let stored = lookup(&keyring, &server).expect("the login is in the keyring");
    assert!(
        stored.contains(&server.issuer()) && stored.contains("access_token"),
        "the keyring item holds the credentials and their issuer: {stored}"
    );
    assert!(
        !token_file(&dirs).exists(),
        "no token file is written with the keyring"
    );

    let tested = toolhost(&dirs, bus, &["mcp", "test", "prot"]);
    assert!(tested.status.success(), "{}", text(&tested));
    assert!(
        text(&tested).contains("mcp__prot__whoami"),
        "{}",
        text(&tested)
    );
    let listed = text(&toolhost(&dirs, bus, &["mcp", "list"]));
    assert!(
        listed.contains(&format!("oauth: logged in with {}", server.issuer()))
            && listed.contains("kept in the OS keyring (the Secret Service)"),
        "{listed}"
    );
    let doctor = text(&toolhost(&dirs, bus, &["doctor"]));
    assert!(
        doctor.lines().any(|line| line.contains("prot: started")
            && line.contains("kept in the OS keyring (the Secret Service)")),
        "{doctor}"
    );
    assert!(
        doctor.lines().any(|line| line.contains("oauth")
            && line.contains(
                "tokens kept in the OS keyring (the Secret Service) (mcp_oauth_store = \"keyring\")"
            )),
        "{doctor}"
    );

    // Expired: two processes race, the refresh tokens rotating; the lock (a file, with the
    // keyring too) lets one refresh and the other take the token it saved in the keyring.
    std::thread::sleep(Duration::from_secs(6));
    let racing: Vec<_> = (0..2)
        .map(|_| {
            command(&dirs, bus, &["mcp", "test", "prot"])
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
    let refreshed = lookup(&keyring, &server).expect("the refreshed login is in the keyring");
    assert_ne!(refreshed, stored, "the new tokens are saved in the keyring");
    assert!(!token_file(&dirs).exists());

    let logged_out = toolhost(&dirs, bus, &["mcp", "logout", "prot"]);
    assert!(
        text(&logged_out).contains("Logged out of prot")
            && text(&logged_out).contains("kept in the OS keyring"),
        "{}",
        text(&logged_out)
    );
    assert_eq!(
        lookup(&keyring, &server),
        None,
        "the keyring item is deleted"
    );
    let listed = text(&toolhost(&dirs, bus, &["mcp", "list"]));
    assert!(listed.contains("oauth: not logged in"), "{listed}");
}

/// A login made with the file (before the keyring was used) still works under `auto`, and its
/// next save, a refresh, moves it into the keyring.
#[test]
fn auto_uses_a_login_left_in_the_file_and_moves_it_into_the_keyring() {
    let dirs = HomeAndWorkspace::new();
    let keyring = SecretService::start(dirs.root(), &dirs.home);
    let bus = Bus::At(&keyring.bus.address);
    let server = OAuthServer::start(OAuthServerOptions {
        access_lifetime_secs: 10,
        ..OAuthServerOptions::default()
    });
    configure(&dirs, &server, Some("file"));
    let logged_in = login(&dirs, bus, &server);
    assert!(logged_in.status.success(), "{}", text(&logged_in));
    assert!(file_holds_a_login(&dirs));
    assert_eq!(
        lookup(&keyring, &server),
        None,
        "`file` never touches the keyring"
    );

    configure(&dirs, &server, None);
    let listed = text(&toolhost(&dirs, bus, &["mcp", "list"]));
    assert!(
        listed.contains(&format!("kept in {}", token_file(&dirs).display())),
        "{listed}"
    );
    std::thread::sleep(Duration::from_secs(6));
    let tested = toolhost(&dirs, bus, &["mcp", "test", "prot"]);
    assert!(tested.status.success(), "{}", text(&tested));
    assert_eq!(server.refresh_grants(), 1);
    assert!(
        lookup(&keyring, &server).is_some_and(|stored| stored.contains(&server.issuer())),
        "the refreshed login is saved in the keyring"
    );
    assert!(!file_holds_a_login(&dirs), "and leaves the file");
    let listed = text(&toolhost(&dirs, bus, &["mcp", "list"]));
    assert!(listed.contains("kept in the OS keyring"), "{listed}");
}

#[test]
fn auto_without_a_session_bus_keeps_the_token_in_the_file_and_says_why() {
    let dirs = HomeAndWorkspace::new();
    let server = OAuthServer::start(OAuthServerOptions::default());
    configure(&dirs, &server, None);

    let logged_in = login(&dirs, Bus::None, &server);
    assert!(logged_in.status.success(), "{}", text(&logged_in));
    let file = token_file(&dirs);
    assert!(
        text(&logged_in).contains(&format!(
            "The tokens are kept in {} (mode 0600): no OS keyring answered (there is no D-Bus \
             session bus",
            file.display()
        )),
        "{}",
        text(&logged_in)
    );
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert!(file_holds_a_login(&dirs));

    // The one log line says which store and why (at the info level).
    let tested = command(&dirs, Bus::None, &["mcp", "test", "prot"])
        .env("TOOLHOST_LOG", "toolhost_mcp=info")
        .output()
        .unwrap();
    assert!(tested.status.success(), "{}", text(&tested));
    let said = text(&tested);
    assert_eq!(
        said.matches("OAuth tokens of MCP servers are kept in")
            .count(),
        1,
        "{said}"
    );
    assert!(
        said.contains("mcp_oauth_store = \"auto\" and no OS keyring answered"),
        "{said}"
    );
}

#[test]
fn auto_with_a_bus_but_no_secret_service_keeps_the_file() {
    let dirs = HomeAndWorkspace::new();
    let bus = SessionBus::start(dirs.root());
    let server = OAuthServer::start(OAuthServerOptions::default());
    configure(&dirs, &server, Some("auto"));
    let logged_in = login(&dirs, Bus::At(&bus.address), &server);
    assert!(logged_in.status.success(), "{}", text(&logged_in));
    assert!(
        text(&logged_in).contains("no OS keyring answered"),
        "{}",
        text(&logged_in)
    );
    assert!(file_holds_a_login(&dirs));
}

#[test]
fn keyring_without_a_keyring_is_an_error_that_says_what_to_do() {
    let dirs = HomeAndWorkspace::new();
    let server = OAuthServer::start(OAuthServerOptions::default());
    configure(&dirs, &server, Some("keyring"));
    let refused = login(&dirs, Bus::None, &server);
    assert!(!refused.status.success(), "{}", text(&refused));
    assert!(
        text(&refused).contains(
            "mcp_oauth_store = \"keyring\", but the OS keyring cannot be used: there is no D-Bus \
             session bus"
        ) && text(&refused).contains("set mcp_oauth_store = \"auto\" or \"file\""),
        "{}",
        text(&refused)
    );
    assert!(!token_file(&dirs).exists());
    let listed = text(&toolhost(&dirs, Bus::None, &["mcp", "list"]));
    assert!(
        listed.contains("oauth: mcp_oauth_store = \"keyring\", but"),
        "{listed}"
    );
    // A connection goes on without a login (a server may need none), saying why.
    let tested = text(&toolhost(&dirs, Bus::None, &["mcp", "test", "prot"]));
    assert!(
        tested.contains(&format!(
            "no OAuth login is used for {}: mcp_oauth_store = \"keyring\", but",
            server.mcp_url()
        )) && tested.contains("run `toolhost mcp login prot`"),
        "{tested}"
    );
}

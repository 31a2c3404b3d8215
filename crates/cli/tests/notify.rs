//! Notify (R28) through the real binary: against a real session bus (`dbus-daemon`, which
//! `tests/mcp-clients/setup.sh` installs) with a process owning
//! `org.freedesktop.Notifications` that records the call; and with no bus and no terminal, a
//! clear result that is not an error.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/session_bus.rs"]
mod session_bus;
mod support;

use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use session_bus::SessionBus;
use toolhost_test_support::HomeAndWorkspace;

/// What a notification server was sent: (app name, summary, body).
type Calls = Arc<Mutex<Vec<(String, String, String)>>>;

struct Recorder {
    calls: Calls,
}

#[zbus::interface(name = "org.freedesktop.Notifications")]
impl Recorder {
    #[allow(clippy::too_many_arguments)]
    fn notify(
        &self,
        app_name: String,
        _replaces_id: u32,
        _app_icon: String,
        summary: String,
        body: String,
        _actions: Vec<String>,
        _hints: HashMap<String, zbus::zvariant::OwnedValue>,
        _expire_timeout: i32,
    ) -> u32 {
        self.calls.lock().unwrap().push((app_name, summary, body));
        42
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn notify_shows_a_desktop_notification_over_the_session_bus() {
    let dirs = HomeAndWorkspace::new();
    let bus = SessionBus::start(dirs.root());
    let calls = Calls::default();
    let _server = zbus::connection::Builder::address(bus.address.as_str())
        .unwrap()
        .name("org.freedesktop.Notifications")
        .unwrap()
        .serve_at(
            "/org/freedesktop/Notifications",
            Recorder {
                calls: Arc::clone(&calls),
            },
        )
        .unwrap()
        .build()
        .await
        .unwrap();
    let (workspace, home, address) = (
        dirs.workspace.clone(),
        dirs.home.clone(),
        bus.address.clone(),
    );
    let output = tokio::task::spawn_blocking(move || {
        support::toolhost_with_home(&workspace, &home)
            .env("DBUS_SESSION_BUS_ADDRESS", address)
            .args([
                "call",
                "Notify",
                r#"{"title": "Build done", "body": "all tests pass"}"#,
            ])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        "Notification shown over D-Bus (id 42).\n"
    );
    assert_eq!(
        *calls.lock().unwrap(),
        [(
            "toolhost".to_owned(),
            "Build done".to_owned(),
            "all tests pass".to_owned()
        )]
    );
}

#[test]
fn without_a_bus_or_a_terminal_notify_says_so_and_succeeds() {
    let dirs = HomeAndWorkspace::new();
    // `setsid` runs it in a new session, without a controlling terminal.
    let output = Command::new("setsid")
        .arg(assert_cmd::cargo::cargo_bin("toolhost"))
        .arg("--workspace")
        .arg(&dirs.workspace)
        .args(["call", "Notify", r#"{"title": "Done"}"#])
        .env("HOME", &dirs.home)
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        stdout.starts_with("No notification service: the notification was not shown"),
        "{stdout}"
    );
    assert!(
        stdout.contains("DBUS_SESSION_BUS_ADDRESS is unset"),
        "{stdout}"
    );
}

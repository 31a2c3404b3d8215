//! A private D-Bus session bus (Debian's `dbus-daemon`) and a real Secret Service on it
//! (`gnome-keyring-daemon`, unlocked with a password it is given): what the Notify and the
//! OAuth keyring tests run against. `tests/mcp-clients/setup.sh` installs both. Each stops
//! when dropped, a test that panics included.

#![allow(dead_code, clippy::unwrap_used)]

use std::io::{BufRead as _, Write as _};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The bus name a Secret Service owns.
pub const SECRET_SERVICE_NAME: &str = "org.freedesktop.secrets";

/// How long `gnome-keyring-daemon` may take to own [`SECRET_SERVICE_NAME`].
const SECRET_SERVICE_START: Duration = Duration::from_secs(20);

/// A session bus that activates nothing: a service a test did not start is not there (the
/// standard session configuration would start Debian's own keyring daemon on demand).
const BUS_CONFIG: &str = r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=BUS_SOCKET</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"#;

/// A private session bus in a folder; stopped when dropped.
pub struct SessionBus {
    child: Child,
    /// Its address, for `DBUS_SESSION_BUS_ADDRESS`.
    pub address: String,
}

impl SessionBus {
    /// Starts a bus whose socket and configuration are in `folder`.
    pub fn start(folder: &Path) -> Self {
        let config = folder.join("session-bus.conf");
        let socket = folder.join("bus");
        std::fs::write(
            &config,
            BUS_CONFIG.replace("BUS_SOCKET", &socket.display().to_string()),
        )
        .unwrap();
        let mut child = Command::new("dbus-daemon")
            .arg(format!("--config-file={}", config.display()))
            .args(["--nofork", "--print-address"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|error| {
                panic!(
                    "cannot start dbus-daemon ({error}): install Debian's dbus-daemon package \
                     (tests/mcp-clients/setup.sh does)"
                )
            });
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let address = line.trim().to_owned();
        assert!(address.starts_with("unix:"), "dbus-daemon printed {line:?}");
        Self { child, address }
    }

    /// Whether a process owns `name` on this bus now.
    pub fn has_owner(&self, name: &str) -> bool {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let connection = zbus::connection::Builder::address(self.address.as_str())
                .unwrap()
                .build()
                .await
                .unwrap();
            let bus = zbus::fdo::DBusProxy::new(&connection).await.unwrap();
            bus.name_has_owner(name.try_into().unwrap()).await.unwrap()
        })
    }
}

impl Drop for SessionBus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// GNOME Keyring's Secret Service on a private bus, its login keyring created and unlocked
/// with a password (as a desktop session does at login) and kept under `home`; the keyring
/// daemon and the bus stop when dropped.
pub struct SecretService {
    keyring: Child,
    /// The bus it serves on.
    pub bus: SessionBus,
    /// Its runtime folder (`XDG_RUNTIME_DIR`).
    pub runtime_folder: PathBuf,
}

impl SecretService {
    /// Starts the bus in `folder` and the keyring daemon on it, with `HOME` at `home`; returns
    /// once the daemon owns [`SECRET_SERVICE_NAME`].
    pub fn start(folder: &Path, home: &Path) -> Self {
        let bus = SessionBus::start(folder);
        let runtime_folder = folder.join("runtime");
        std::fs::create_dir_all(&runtime_folder).unwrap();
        std::fs::set_permissions(&runtime_folder, std::fs::Permissions::from_mode(0o700)).unwrap();
        let mut keyring = Command::new("gnome-keyring-daemon")
            .args(["--foreground", "--unlock", "--components=secrets"])
            .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
            .env("HOME", home)
            .env("XDG_RUNTIME_DIR", &runtime_folder)
            .env_remove("XDG_DATA_HOME")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|error| {
                panic!(
                    "cannot start gnome-keyring-daemon ({error}): install Debian's \
                     gnome-keyring package (tests/mcp-clients/setup.sh does)"
                )
            });
        // The password of the login keyring, on stdin; closing it lets the daemon go on.
        let mut stdin = keyring.stdin.take().unwrap();
        stdin.write_all(b"toolhost-test-password").unwrap();
        drop(stdin);
        let service = Self {
            keyring,
            bus,
            runtime_folder,
        };
        let deadline = Instant::now() + SECRET_SERVICE_START;
        while !service.bus.has_owner(SECRET_SERVICE_NAME) {
            assert!(
                Instant::now() < deadline,
                "gnome-keyring-daemon did not own {SECRET_SERVICE_NAME} within {SECRET_SERVICE_START:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        service
    }

    /// The secret libsecret's `secret-tool` finds for these attributes (`service`,
    /// `username`), read over the bus as any other client would; `None` when there is none.
    pub fn lookup(&self, attributes: &[(&str, &str)]) -> Option<String> {
        let output = Command::new("secret-tool")
            .arg("lookup")
            .args(attributes.iter().flat_map(|(key, value)| [*key, *value]))
            .env("DBUS_SESSION_BUS_ADDRESS", &self.bus.address)
            .output()
            .unwrap_or_else(|error| {
                panic!(
                    "cannot run secret-tool ({error}): install Debian's libsecret-tools \
                     package (tests/mcp-clients/setup.sh does)"
                )
            });
        output
            .status
            .success()
            .then(|| String::from_utf8(output.stdout).unwrap())
    }
}

impl Drop for SecretService {
    fn drop(&mut self) {
        let _ = self.keyring.kill();
        let _ = self.keyring.wait();
    }
}

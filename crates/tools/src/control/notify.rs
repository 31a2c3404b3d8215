//! `Notify` (R28): tells the user something outside the conversation (a long task is done).
//!
//! In order: a desktop notification over D-Bus (`org.freedesktop.Notifications`) when a
//! session bus is there (`DBUS_SESSION_BUS_ADDRESS`); else an OSC 9 and an OSC 777 escape
//! written to the controlling terminal (`/dev/tty`), which terminals such as iTerm2, WezTerm,
//! foot, Ghostty, rxvt-unicode and kitty turn into a notification (and others ignore); else a
//! result saying no notification service is there. A notification that cannot be shown is
//! never an error: the session goes on.

use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolhost_core::{
    Sensitivity, ToolAnnotations, ToolContext, ToolError, ToolOutput, ToolSpec, TypedTool,
};

/// How long the D-Bus connection and call may take before the terminal is tried instead.
pub const DBUS_TIMEOUT: Duration = Duration::from_secs(5);

/// The application name notifications carry.
const APP_NAME: &str = "toolhost";

/// Parameters of `Notify`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct NotifyParams {
    /// The notification's title (one short line).
    pub title: String,
    /// More text, when the title is not enough.
    pub body: Option<String>,
}

/// How a notification reached the user, if it did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery {
    /// Over D-Bus; the server's id for it.
    DBus(u32),
    /// As escape sequences to the terminal.
    Terminal,
    /// Not at all: why.
    Unavailable(String),
}

/// Sends desktop or terminal notifications.
pub struct Notify {
    bus_address: Option<String>,
    terminal: PathBuf,
}

impl Default for Notify {
    fn default() -> Self {
        Self::new()
    }
}

impl Notify {
    /// `Notify` using the process's session bus (`DBUS_SESSION_BUS_ADDRESS`) and its
    /// controlling terminal.
    pub fn new() -> Self {
        Self {
            bus_address: std::env::var("DBUS_SESSION_BUS_ADDRESS")
                .ok()
                .filter(|address| !address.trim().is_empty()),
            terminal: PathBuf::from("/dev/tty"),
        }
    }

    /// `Notify` with this bus address (`None`: no bus) and terminal device.
    pub fn with_targets(bus_address: Option<String>, terminal: impl Into<PathBuf>) -> Self {
        Self {
            bus_address,
            terminal: terminal.into(),
        }
    }

    /// Shows the notification the first way that works.
    pub async fn deliver(&self, title: &str, body: &str) -> Delivery {
        let mut reasons = Vec::new();
        match &self.bus_address {
            Some(address) => {
                match tokio::time::timeout(DBUS_TIMEOUT, notify_dbus(address, title, body)).await {
                    Ok(Ok(id)) => return Delivery::DBus(id),
                    Ok(Err(error)) => {
                        reasons.push(format!("the D-Bus session bus failed: {error}"))
                    }
                    Err(_) => reasons.push(format!(
                        "the D-Bus session bus did not answer within {} s",
                        DBUS_TIMEOUT.as_secs()
                    )),
                }
            }
            None => reasons.push("no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is unset)".into()),
        }
        let escape = terminal_escape(title, body);
        let written = std::fs::OpenOptions::new()
            .write(true)
            .open(&self.terminal)
            .and_then(|mut terminal| {
                terminal.write_all(escape.as_bytes())?;
                terminal.flush()
            });
        match written {
            Ok(()) => Delivery::Terminal,
            Err(error) => {
                reasons.push(format!(
                    "no controlling terminal ({}: {error})",
                    self.terminal.display()
                ));
                Delivery::Unavailable(reasons.join("; "))
            }
        }
    }
}

/// `org.freedesktop.Notifications.Notify` on the bus at `address`; the notification's id.
async fn notify_dbus(address: &str, title: &str, body: &str) -> zbus::Result<u32> {
    let connection = zbus::connection::Builder::address(address)?.build().await?;
    let hints: std::collections::HashMap<&str, zbus::zvariant::Value<'_>> =
        std::collections::HashMap::new();
    let reply = connection
        .call_method(
            Some("org.freedesktop.Notifications"),
            "/org/freedesktop/Notifications",
            Some("org.freedesktop.Notifications"),
            "Notify",
            &(
                APP_NAME,
                0u32,
                "",
                title,
                body,
                Vec::<&str>::new(),
                hints,
                -1i32,
            ),
        )
        .await?;
    reply.body().deserialize::<u32>()
}

/// The OSC 9 and OSC 777 escapes for a notification. Control characters are dropped from the
/// text (they could end the escape early and write to the terminal), and `;`, which separates
/// OSC 777's fields, becomes `,` there.
pub fn terminal_escape(title: &str, body: &str) -> String {
    let clean = |text: &str| -> String { text.chars().filter(|c| !c.is_control()).collect() };
    let (title, body) = (clean(title), clean(body));
    let osc9 = if body.is_empty() {
        title.clone()
    } else {
        format!("{title}: {body}")
    };
    format!(
        "\x1b]9;{osc9}\x07\x1b]777;notify;{};{}\x07",
        title.replace(';', ","),
        body.replace(';', ",")
    )
}

impl TypedTool for Notify {
    type Params = NotifyParams;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new(
            "Notify",
            "Shows the user a desktop notification (or a terminal notification), e.g. when a \
             long task is done or you need their attention. Never fails: when no notification \
             service is there, the result says so.",
        )
        .with_label("Notify")
        .with_annotations(ToolAnnotations {
            idempotent: false,
            ..ToolAnnotations::READ_ONLY
        })
        .with_sensitivity(Sensitivity::Safe)
    }

    async fn run(&self, params: NotifyParams, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let body = params.body.unwrap_or_default();
        let (text, via, id) = match self.deliver(&params.title, &body).await {
            Delivery::DBus(id) => (
                format!("Notification shown over D-Bus (id {id})."),
                Some("dbus"),
                Some(id),
            ),
            Delivery::Terminal => (
                "Notification sent to the terminal (OSC 9 / OSC 777).".to_owned(),
                Some("terminal"),
                None,
            ),
            Delivery::Unavailable(why) => (
                format!("No notification service: the notification was not shown ({why})."),
                None,
                None,
            ),
        };
        Ok(ToolOutput::text(text).with_details(json!({
            "delivered": via.is_some(),
            "via": via,
            "id": id,
        })))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_escape_drops_control_characters_and_separators() {
        assert_eq!(
            terminal_escape("Done\x07\x1b]9;x", "a;b"),
            "\x1b]9;Done]9;x: a;b\x07\x1b]777;notify;Done]9,x;a,b\x07"
        );
    }

    #[tokio::test]
    async fn without_a_bus_the_terminal_gets_the_escapes() {
        let dir = tempfile::tempdir().unwrap();
        let terminal = dir.path().join("tty");
        std::fs::write(&terminal, "").unwrap();
        let notify = Notify::with_targets(None, &terminal);
        assert_eq!(notify.deliver("Built", "ok").await, Delivery::Terminal);
        assert_eq!(
            std::fs::read_to_string(&terminal).unwrap(),
            terminal_escape("Built", "ok")
        );
    }

    #[tokio::test]
    async fn without_bus_or_terminal_it_says_so_and_does_not_fail() {
        let dir = tempfile::tempdir().unwrap();
        let notify = Notify::with_targets(
            Some("unix:path=/nonexistent/bus".into()),
            dir.path().join("missing/tty"),
        );
        let Delivery::Unavailable(why) = notify.deliver("t", "").await else {
            panic!("delivered");
        };
        assert!(why.contains("D-Bus session bus failed"), "{why}");
        assert!(why.contains("no controlling terminal"), "{why}");
    }
}

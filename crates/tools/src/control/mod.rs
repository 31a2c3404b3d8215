//! The control tools (R28): Notify.

mod notify;

pub use notify::{DBUS_TIMEOUT, Delivery, Notify, NotifyParams, terminal_escape};

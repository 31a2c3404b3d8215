//! Ctrl-C (SIGINT) for the commands that cancel their work on it, listened for from the moment
//! [`Interrupts::listen`] returns. tokio's `ctrl_c()` installs its handler only when first
//! polled, so a Ctrl-C that came between spawning a listener and its first poll ended the
//! process the default way, without the cancellation's clean-up and exit status.

/// The Ctrl-C presses from now on.
pub struct Interrupts {
    #[cfg(unix)]
    signal: tokio::signal::unix::Signal,
}

impl Interrupts {
    /// Installs the handler now.
    pub fn listen() -> std::io::Result<Self> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(Self {
                signal: signal(SignalKind::interrupt())?,
            })
        }
        #[cfg(not(unix))]
        Ok(Self {})
    }

    /// Waits for the next Ctrl-C; `false` when no more can come.
    pub async fn next(&mut self) -> bool {
        #[cfg(unix)]
        {
            self.signal.recv().await.is_some()
        }
        #[cfg(not(unix))]
        {
            tokio::signal::ctrl_c().await.is_ok()
        }
    }
}

//! The browser's round trip of an authorization: the callback server on 127.0.0.1 the
//! authorization server redirects to, and opening the desktop's browser on the authorization
//! page. `toolhost mcp login` and a scope step-up during a session both use it.

use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;

/// A callback server listening on 127.0.0.1, and the redirect URI that reaches it.
#[derive(Debug)]
pub(crate) struct Callback {
    listener: TcpListener,
    redirect_uri: String,
}

impl Callback {
    /// Listens on `port` (0: any free one), or on the port of `callback_url` when one is
    /// given (a static client's registered redirect URI, which is then the redirect URI).
    ///
    /// # Errors
    /// The URL does not parse or the port is taken.
    pub(crate) async fn bind(port: u16, callback_url: Option<&str>) -> Result<Self, String> {
        let port = match callback_url
            .map(url::Url::parse)
            .transpose()
            .map_err(|error| format!("the callback URL: {error}"))?
        {
            Some(url) => url.port_or_known_default().unwrap_or(port),
            None => port,
        };
        let listener = TcpListener::bind(("127.0.0.1", port))
            .await
            .map_err(|error| {
                format!("cannot listen for the callback on 127.0.0.1:{port}: {error}")
            })?;
        let port = listener
            .local_addr()
            .map_err(|error| error.to_string())?
            .port();
        let redirect_uri = callback_url
            .map(str::to_owned)
            .unwrap_or_else(|| format!("http://127.0.0.1:{port}/callback"));
        Ok(Self {
            listener,
            redirect_uri,
        })
    }

    /// The redirect URI to send to the authorization server.
    pub(crate) fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    /// Waits, at most `limit`, for the browser to come back: the full redirect URL, with
    /// its `code`, `state` and `iss`.
    ///
    /// # Errors
    /// Nothing came back in time, or the callback server failed.
    pub(crate) async fn wait(&self, limit: Duration, again: &str) -> Result<String, String> {
        tokio::time::timeout(limit, self.serve_one())
            .await
            .map_err(|_| format!("no answer from the browser in time: {again}"))?
    }

    async fn serve_one(&self) -> Result<String, String> {
        loop {
            let (mut stream, _) = self
                .listener
                .accept()
                .await
                .map_err(|error| format!("the callback server failed: {error}"))?;
            let mut buffer = vec![0u8; 16 * 1024];
            let mut read = 0;
            while read < buffer.len() {
                let n = stream.read(&mut buffer[read..]).await.unwrap_or(0);
                if n == 0 {
                    break;
                }
                read += n;
                if buffer[..read]
                    .windows(4)
                    .any(|window| window == b"\r\n\r\n")
                {
                    break;
                }
            }
            let head = String::from_utf8_lossy(&buffer[..read]);
            let target = head
                .lines()
                .next()
                .and_then(|line| line.split_whitespace().nth(1))
                .unwrap_or("");
            let Some((_, query)) = target.split_once('?') else {
                // A favicon or a probe: not the redirect.
                let _ = stream
                    .write_all(
                        b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    )
                    .await;
                continue;
            };
            let body = "toolhost: the authorization is complete; you can close this window.\n";
            let answer = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(answer.as_bytes()).await;
            let base = self
                .redirect_uri
                .split('?')
                .next()
                .unwrap_or(&self.redirect_uri);
            return Ok(format!("{base}?{query}"));
        }
    }
}

/// Whether a browser can be opened without anyone at a terminal: `$BROWSER` is set, or there
/// is a desktop session (a display on Linux and the BSDs; always on macOS). A process that
/// has none (SSH, a container, CI) must not start an authorization that nobody can finish.
pub(crate) fn can_open_browser() -> bool {
    let set = |variable: &str| std::env::var_os(variable).is_some_and(|value| !value.is_empty());
    set("BROWSER") || set("DISPLAY") || set("WAYLAND_DISPLAY") || cfg!(target_os = "macos")
}

/// Opens `url` in the desktop's browser when there is one (`$BROWSER`, `xdg-open`, `open`).
pub(crate) fn open_browser(url: &str) {
    let browser = std::env::var("BROWSER")
        .ok()
        .filter(|browser| !browser.is_empty());
    let candidates = browser
        .into_iter()
        .chain(["xdg-open".to_owned(), "open".to_owned()]);
    for program in candidates {
        let started = std::process::Command::new(&program)
            .arg(url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        if started.is_ok() {
            return;
        }
    }
}

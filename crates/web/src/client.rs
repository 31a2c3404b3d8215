//! The HTTP side of WebFetch: one GET, pinned to the addresses the guard checked, `http`
//! tried as `https` first, redirects followed by hand within the host, the body streamed and
//! cut at the cap.

use std::net::SocketAddr;
use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE, LOCATION};
use url::Url;

use super::extract::body_kind;
use super::guard::{CheckedUrl, GuardError, check_url};

/// How long the `https` attempt of an `http` URL may take before falling back to `http`.
pub const HTTPS_UPGRADE_TIMEOUT: Duration = Duration::from_secs(5);

/// Redirects within one host followed at most.
pub const MAX_REDIRECTS: usize = 10;

/// Bytes of a body looked at to tell text from binary before reading on.
const SNIFF_BYTES: usize = 1024;

const USER_AGENT: &str = concat!("toolhost/", env!("CARGO_PKG_VERSION"), " (WebFetch)");
const ACCEPT_TYPES: &str = "text/html,application/xhtml+xml,text/markdown;q=0.9,text/plain;q=0.8,application/json;q=0.8,*/*;q=0.5";

/// What one fetch found.
#[derive(Debug)]
pub enum Fetched {
    /// A response with a readable body (any status).
    Page(Page),
    /// A redirect to another host, not followed: the model fetches it again, so that the
    /// rules and the guard judge that host too.
    OtherHost {
        /// The URL that redirected.
        from: Url,
        /// Where it points.
        to: Url,
        /// The redirect's status.
        status: u16,
    },
}

/// A response and its body, up to the cap.
#[derive(Debug)]
pub struct Page {
    /// The URL after same-host redirects (and the `https` upgrade).
    pub final_url: Url,
    /// The HTTP status.
    pub status: u16,
    /// The `Content-Type` header, as sent.
    pub content_type: String,
    /// The body, cut at the cap.
    pub body: Vec<u8>,
    /// Whether the body was longer than the cap.
    pub cut_at_cap: bool,
}

/// Why a fetch failed.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// A redirect within the host points somewhere the guard refuses.
    #[error("the page redirected to a URL WebFetch refuses: {0}")]
    Redirect(GuardError),
    /// More redirects than [`MAX_REDIRECTS`].
    #[error("{url} redirected more than {MAX_REDIRECTS} times; giving up")]
    TooManyRedirects {
        /// The first URL.
        url: Url,
    },
    /// The body is not something WebFetch reads.
    #[error(
        "{url} is {kind}; WebFetch reads HTML, text and JSON only. Find an HTML or text \
         version of the page, or download the file with a shell command if the user agrees"
    )]
    Unreadable {
        /// The URL that served it.
        url: Url,
        /// What it is.
        kind: String,
    },
    /// The request failed.
    #[error("fetching {url} failed: {message}")]
    Http {
        /// The URL asked.
        url: Url,
        /// What went wrong.
        message: String,
    },
}

/// GETs `checked`, connecting only to `pinned` for its host (an IP literal needs none),
/// keeping at most `max_bytes` of the body.
pub async fn fetch(
    checked: &CheckedUrl,
    pinned: &[SocketAddr],
    max_bytes: usize,
) -> Result<Fetched, FetchError> {
    let client = client_for(checked, pinned)?;
    let mut url = checked.url.clone();
    let mut response = first_response(&client, &mut url).await?;
    let mut redirects = 0;
    while response.status().is_redirection() {
        let Some(location) = response
            .headers()
            .get(LOCATION)
            .and_then(|value| value.to_str().ok())
        else {
            break;
        };
        let next = redirect_target(&url, location)?;
        if !same_host(&next.host, &checked.host) {
            return Ok(Fetched::OtherHost {
                from: url,
                to: next.url,
                status: response.status().as_u16(),
            });
        }
        redirects += 1;
        if redirects > MAX_REDIRECTS {
            return Err(FetchError::TooManyRedirects {
                url: checked.url.clone(),
            });
        }
        url = next.url;
        response = send(&client, &url).await?;
    }
    read_page(response, url, max_bytes).await.map(Fetched::Page)
}

/// Where a `Location` points, checked as it is written: an absolute or scheme-relative
/// target goes through the guard's written-form checks before the parser normalises it
/// (`http://0x7f.1/` is refused, not read as `127.0.0.1`).
fn redirect_target(base: &Url, location: &str) -> Result<CheckedUrl, FetchError> {
    let location = location.trim();
    let slashes = location.len() - location.trim_start_matches(['/', '\\']).len();
    let written = if location.contains("://") {
        location.to_owned()
    } else if slashes >= 2 {
        format!(
            "{}://{}",
            base.scheme(),
            location.trim_start_matches(['/', '\\'])
        )
    } else {
        base.join(location)
            .map_err(|error| FetchError::Http {
                url: base.clone(),
                message: format!("its redirect to '{location}' is not a URL: {error}"),
            })?
            .to_string()
    };
    check_url(&written).map_err(FetchError::Redirect)
}

/// A client that resolves the host to the checked addresses only and follows no redirect.
fn client_for(checked: &CheckedUrl, pinned: &[SocketAddr]) -> Result<reqwest::Client, FetchError> {
    let mut builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(USER_AGENT);
    if !pinned.is_empty() {
        builder = builder.resolve_to_addrs(&checked.host, pinned);
    }
    builder.build().map_err(|error| FetchError::Http {
        url: checked.url.clone(),
        message: error.to_string(),
    })
}

/// The response to `url`; an `http` URL without a port is tried as `https` first (`url`
/// becomes that when it answers).
async fn first_response(
    client: &reqwest::Client,
    url: &mut Url,
) -> Result<reqwest::Response, FetchError> {
    if url.scheme() == "http" && url.port().is_none() {
        let mut secure = url.clone();
        if secure.set_scheme("https").is_ok() {
            let attempt = tokio::time::timeout(HTTPS_UPGRADE_TIMEOUT, send(client, &secure)).await;
            if let Ok(Ok(response)) = attempt {
                *url = secure;
                return Ok(response);
            }
        }
    }
    send(client, url).await
}

async fn send(client: &reqwest::Client, url: &Url) -> Result<reqwest::Response, FetchError> {
    client
        .get(url.clone())
        .header(ACCEPT, ACCEPT_TYPES)
        .send()
        .await
        .map_err(|error| FetchError::Http {
            url: url.clone(),
            message: describe(&error),
        })
}

/// Streams the body up to `max_bytes`; refuses binaries after their first bytes.
async fn read_page(
    mut response: reqwest::Response,
    url: Url,
    max_bytes: usize,
) -> Result<Page, FetchError> {
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let mut body: Vec<u8> = Vec::new();
    let mut sniffed = false;
    let mut cut_at_cap = false;
    loop {
        let chunk = response.chunk().await.map_err(|error| FetchError::Http {
            url: url.clone(),
            message: describe(&error),
        })?;
        let Some(chunk) = chunk else { break };
        let room = max_bytes.saturating_sub(body.len());
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            cut_at_cap = true;
        } else {
            body.extend_from_slice(&chunk);
        }
        if !sniffed && body.len() >= SNIFF_BYTES {
            sniffed = true;
            refuse_binary(&content_type, &body, &url)?;
        }
        if cut_at_cap {
            break;
        }
    }
    if !sniffed {
        refuse_binary(&content_type, &body, &url)?;
    }
    Ok(Page {
        final_url: url,
        status,
        content_type,
        body,
        cut_at_cap,
    })
}

fn refuse_binary(content_type: &str, body: &[u8], url: &Url) -> Result<(), FetchError> {
    body_kind(content_type, body)
        .map(|_| ())
        .map_err(|kind| FetchError::Unreadable {
            url: url.clone(),
            kind,
        })
}

/// Hosts are the same when they differ only in case or a final dot.
fn same_host(a: &str, b: &str) -> bool {
    a.trim_end_matches('.')
        .eq_ignore_ascii_case(b.trim_end_matches('.'))
}

/// A reqwest error with its causes, which say what actually happened (refused, TLS, reset).
fn describe(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn redirect_targets_are_checked_as_written() {
        let base = Url::parse("http://site.test:8080/a/b").unwrap();
        let target =
            |location: &str| redirect_target(&base, location).map(|next| next.url.to_string());
        assert_eq!(target("c").unwrap(), "http://site.test:8080/a/c");
        assert_eq!(target("/d?e=1").unwrap(), "http://site.test:8080/d?e=1");
        assert_eq!(target("//other.test/x").unwrap(), "http://other.test/x");
        assert_eq!(
            target("https://other.test/").unwrap(),
            "https://other.test/"
        );
        for odd in [
            "http://0x7f.1/",
            "//0x7f.1/",
            "/\\0177.0.0.1/",
            "http://a@127.0.0.1/",
        ] {
            assert!(
                matches!(redirect_target(&base, odd), Err(FetchError::Redirect(_))),
                "{odd}"
            );
        }
        assert!(redirect_target(&base, "file:///etc/passwd").is_err());
    }
}

//! Fetching hub indexes and archives: http(s) only, a size cap enforced while the body
//! streams in, and the SHA-256 of what arrived.

use futures::StreamExt as _;
use reqwest::Url;
use sha2::{Digest as _, Sha256};

use super::{HUB_REQUEST_TIMEOUT, HubError};

/// `reference` (an archive's `url`) resolved against the index at `hub`.
pub(super) fn resolve(hub: &str, reference: &str) -> Result<String, HubError> {
    let bad = |message: String| HubError::BadIndex {
        url: hub.to_owned(),
        message,
    };
    let base = Url::parse(hub).map_err(|error| bad(format!("its URL does not parse: {error}")))?;
    let url = base.join(reference).map_err(|error| {
        bad(format!(
            "the archive URL '{reference}' does not parse: {error}"
        ))
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(bad(format!(
            "the archive URL '{url}' is not http:// or https://"
        )));
    }
    Ok(url.to_string())
}

/// The body at `url`, refused when it is longer than `max_bytes`.
pub(super) async fn fetch(url: &str, max_bytes: u64) -> Result<Vec<u8>, HubError> {
    let failed = |message: String| HubError::Fetch {
        url: url.to_owned(),
        message,
    };
    let parsed = Url::parse(url).map_err(|error| failed(format!("not a URL: {error}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(failed(
            "only http:// and https:// URLs are fetched".to_owned(),
        ));
    }
    let mut client = reqwest::Client::builder()
        .timeout(HUB_REQUEST_TIMEOUT)
        .user_agent(concat!("toolhost/", env!("CARGO_PKG_VERSION")));
    if parsed.scheme() == "http" {
        // Loading the system's root certificates costs ~20 ms for nothing on plain http.
        client = client.tls_certs_only(std::iter::empty());
    }
    let client = client
        .build()
        .map_err(|error| failed(format!("cannot build an HTTP client: {error}")))?;
    let response = client
        .get(parsed)
        .send()
        .await
        .map_err(|error| failed(error.to_string()))?;
    let status = response.status();
    if !status.is_success() {
        return Err(failed(format!("the server answered {status}")));
    }
    let too_large = || failed(format!("it is larger than {max_bytes} bytes, the limit"));
    if response
        .content_length()
        .is_some_and(|length| length > max_bytes)
    {
        return Err(too_large());
    }
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|error| failed(error.to_string()))?;
        if body.len() as u64 + chunk.len() as u64 > max_bytes {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The SHA-256 of `bytes`, lowercase hex.
pub(super) fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

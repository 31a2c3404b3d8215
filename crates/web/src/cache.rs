//! WebFetch's cache: a fetched page is kept for [`CACHE_TTL`] by its normalised URL, in one
//! JSON file per URL under a folder (`~/.toolhost/cache/web/`), so that asking the same page
//! again with another `prompt`, in this run or the next, does not fetch it again.
//!
//! Files are written atomically (a temporary file in the same folder, fsync, rename): a reader
//! sees an old entry or a new one, never half of one. An unreadable entry is a miss.

use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use url::Url;

pub use toolhost_config::web::CACHE_TTL;

/// Query parameters that only track who clicked: dropped from the cache key.
const TRACKING_PARAMETERS: [&str; 12] = [
    "fbclid", "gclid", "dclid", "gbraid", "wbraid", "msclkid", "yclid", "mc_cid", "mc_eid",
    "igshid", "_ga", "_hsenc",
];

/// The URL as the cache knows it: no fragment, no tracking parameters (`utm_*`, `fbclid`,
/// `gclid`, …), the other parameters in their order.
pub fn normalize_url(url: &Url) -> Url {
    let mut normal = url.clone();
    normal.set_fragment(None);
    let kept: Vec<(String, String)> = url
        .query_pairs()
        .filter(|(name, _)| {
            let name = name.to_ascii_lowercase();
            !name.starts_with("utm_") && !TRACKING_PARAMETERS.contains(&name.as_str())
        })
        .map(|(name, value)| (name.into_owned(), value.into_owned()))
        .collect();
    // Rewriting the query re-encodes it: only when something was dropped.
    if kept.len() != url.query_pairs().count() {
        if kept.is_empty() {
            normal.set_query(None);
        } else {
            normal.query_pairs_mut().clear().extend_pairs(kept);
        }
    }
    normal
}

/// One fetched page as kept.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CachedPage {
    /// The normalised URL it was asked by.
    pub url: String,
    /// Where it was found after same-host redirects.
    pub final_url: String,
    /// The HTTP status.
    pub status: u16,
    /// The `Content-Type` header (or what the body looked like).
    pub content_type: String,
    /// The body as text.
    pub body: String,
    /// The body's size on the wire, up to the cap.
    pub bytes: usize,
    /// Whether the body was cut at the response cap.
    pub cut_at_cap: bool,
    /// Whether the host was a loopback or private address: served again only while a rule
    /// still names the host.
    pub private: bool,
    /// When it was fetched, in seconds since 1970.
    pub fetched_at: u64,
}

/// The folder of cache entries.
#[derive(Clone, Debug)]
pub struct PageCache {
    folder: PathBuf,
    ttl: Duration,
}

impl PageCache {
    /// Entries in `folder` (created on the first write), served for `ttl`.
    pub fn new(folder: impl Into<PathBuf>, ttl: Duration) -> Self {
        Self {
            folder: folder.into(),
            ttl,
        }
    }

    /// The page kept for `url` (normalised), when it is younger than the TTL.
    pub fn get(&self, url: &Url) -> Option<CachedPage> {
        let key = normalize_url(url);
        let text = std::fs::read(self.path_of(&key)).ok()?;
        let page: CachedPage = serde_json::from_slice(&text).ok()?;
        let age = now_seconds().saturating_sub(page.fetched_at);
        (page.url == key.as_str() && age < self.ttl.as_secs()).then_some(page)
    }

    /// Keeps `page` (its `url` must be normalised); expired entries are removed meanwhile.
    pub fn put(&self, page: &CachedPage) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.folder)?;
        let Ok(key) = Url::parse(&page.url) else {
            return Ok(());
        };
        write_atomically(&self.path_of(&key), &serde_json::to_vec(page)?)?;
        self.remove_expired();
        Ok(())
    }

    fn path_of(&self, normal: &Url) -> PathBuf {
        let digest = Sha256::digest(normal.as_str().as_bytes());
        let name: String = digest.iter().map(|byte| format!("{byte:02x}")).collect();
        self.folder.join(format!("{name}.json"))
    }

    /// Entries older than the TTL are never served: their files go.
    fn remove_expired(&self) {
        let Ok(entries) = std::fs::read_dir(&self.folder) else {
            return;
        };
        let cutoff = SystemTime::now().checked_sub(self.ttl);
        for entry in entries.flatten() {
            let old = entry
                .metadata()
                .and_then(|metadata| metadata.modified())
                .is_ok_and(|modified| cutoff.is_some_and(|cutoff| modified < cutoff));
            if old && entry.path().extension().is_some_and(|ext| ext == "json") {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
}

/// The current time in seconds since 1970.
pub fn now_seconds() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

/// A temporary file beside `path`, synced, then renamed over it.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let folder = path.parent().unwrap_or(Path::new("."));
    let temporary = folder.join(format!(
        ".{}.{}.tmp",
        path.file_name()
            .map_or_else(String::new, |name| name.to_string_lossy().into_owned()),
        std::process::id()
    ));
    let result = (|| {
        // Pages of private hosts may be kept: readable by the user alone.
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&temporary)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temporary, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    result
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use pretty_assertions::assert_eq;

    use super::*;

    fn normal(text: &str) -> String {
        normalize_url(&Url::parse(text).unwrap()).to_string()
    }

    #[test]
    fn the_key_drops_the_fragment_and_tracking_parameters_only() {
        assert_eq!(
            normal("https://example.com/a?utm_source=x&id=3&fbclid=y&UTM_Medium=z&b=4#top"),
            "https://example.com/a?id=3&b=4"
        );
        assert_eq!(
            normal("https://example.com/a?gclid=1#x"),
            "https://example.com/a"
        );
        assert_eq!(normal("HTTPS://EXAMPLE.com/a"), "https://example.com/a");
        assert_eq!(normal("https://example.com/a?q"), "https://example.com/a?q");
    }

    #[test]
    fn a_page_is_served_until_it_expires() {
        let dir = tempfile::tempdir().unwrap();
        let cache = PageCache::new(dir.path().join("web"), CACHE_TTL);
        let url = Url::parse("https://example.com/page?utm_campaign=1").unwrap();
        assert_eq!(cache.get(&url), None);
        let mut page = CachedPage {
            url: normalize_url(&url).to_string(),
            final_url: "https://example.com/page".into(),
            status: 200,
            content_type: "text/plain".into(),
            body: "hello".into(),
            bytes: 5,
            cut_at_cap: false,
            private: false,
            fetched_at: now_seconds(),
        };
        cache.put(&page).unwrap();
        let files: Vec<_> = std::fs::read_dir(dir.path().join("web"))
            .unwrap()
            .flatten()
            .collect();
        assert_eq!(files.len(), 1);
        use std::os::unix::fs::PermissionsExt as _;
        assert_eq!(
            files[0].metadata().unwrap().permissions().mode() & 0o777,
            0o600
        );
        let again = Url::parse("https://example.com/page#section").unwrap();
        assert_eq!(cache.get(&again), Some(page.clone()));
        page.fetched_at -= CACHE_TTL.as_secs();
        cache.put(&page).unwrap();
        assert_eq!(cache.get(&again), None);
    }
}

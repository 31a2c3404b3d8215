//! The web tools: WebFetch and WebSearch, and the private-network guard in front of every
//! fetch. A crate of their own because their HTML stack (readability, HTML to Markdown) and
//! HTTP client are most of what the built-in tools would otherwise compile and link.
//!
//! - [`guard`]: the URL's written form, then the host resolved once, every address checked
//!   ([`address`]) and the connection pinned to them; loopback and private addresses only for
//!   hosts a permission rule names outright.
//! - [`client`]: the GET itself: `http` tried as `https`, redirects followed within the host,
//!   the body streamed and cut at the cap. [`extract`]: HTML to readable Markdown.
//! - [`cache`]: fetched pages kept 15 minutes by normalised URL, in files.
//! - [`fetch`] and [`search`]: the two tools. [`search_service`]: SearXNG, Tavily, Brave,
//!   Jina. Model-backed parts — the summary model of WebFetch, the provider's own search —
//!   are traits ([`WebSummarizer`], [`NativeWebSearch`]) that the agent crate implements.

pub mod address;
pub mod cache;
pub mod client;
pub mod extract;
pub mod fetch;
pub mod guard;
pub mod search;
pub mod search_service;
pub mod summary;

use std::sync::Arc;

use toolhost_core::Tool;

pub use cache::{CACHE_TTL, PageCache};
pub use fetch::{
    DEFAULT_FETCH_TIMEOUT, MAX_CONTENT_CHARS, MAX_RESPONSE_BYTES, SUMMARY_THRESHOLD_BYTES,
    WebFetch, WebFetchParams, WebFetchSettings,
};
pub use guard::HostResolver;
pub use search::{NativeWebSearch, WebSearch, WebSearchParams, WebSearchSettings};
pub use search_service::{SearchHit, SearchProvider, SearchService};
pub use summary::{SummaryError, SummaryRequest, WebSummarizer};

/// WebSearch then WebFetch, in spec order (R9).
pub fn web_tools(search: WebSearchSettings, fetch: WebFetchSettings) -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(WebSearch::new(search)),
        Arc::new(WebFetch::new(fetch)),
    ]
}

//! `[web]` (WebFetch's limits, cache, summary model and fixed host entries) and `[web.search]`
//! (the search service of WebSearch).
//!
//! ```toml
//! [web]
//! timeout = 30                    # seconds per fetch
//! max_response_bytes = 5242880    # the body is cut there
//! max_content_chars = 40000       # page content in one result
//! cache = true                    # ~/.toolhost/cache/web
//! cache_ttl = 900                 # seconds a page is served from the cache
//! summary_model = "claude-haiku-4-5"  # answers a `prompt` about a long page
//! summary_provider = "anthropic"  # default: the run's provider choice
//! resolve = { "intranet.test" = "10.0.0.7" }  # like /etc/hosts; still checked by the guard
//!
//! [web.search]
//! provider = "searxng"            # or "tavily", "brave", "jina"
//! url = "http://localhost:8888"   # required for searxng
//! api_key_env = "TAVILY_API_KEY"  # the variable holding the key
//! native = true                   # the run's provider's own search first (Anthropic)
//! ```

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use super::providers::check_base_url;
use super::{Config, ConfigError};

/// How long a fetched page is served from the cache.
pub const CACHE_TTL: Duration = Duration::from_secs(15 * 60);

/// How long one fetch may take, redirects included.
pub const DEFAULT_FETCH_TIMEOUT: Duration = Duration::from_secs(30);

/// The most of a response body that is read; the rest is cut, and the result says so.
pub const MAX_RESPONSE_BYTES: usize = 5 * 1024 * 1024;

/// The most characters of page content a result holds (under the 50 KB result limit, so
/// that the note about the cut survives the pipeline's truncation).
pub const MAX_CONTENT_CHARS: usize = 40_000;

/// Which service a `[web.search]` section names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SearchProvider {
    /// A SearXNG instance (`url` required; its JSON format must be enabled).
    Searxng,
    /// Tavily's search API.
    Tavily,
    /// Brave Search's web search API.
    Brave,
    /// Jina's search endpoint (`s.jina.ai`).
    Jina,
}

impl SearchProvider {
    /// The name used in configuration.
    pub fn name(self) -> &'static str {
        match self {
            Self::Searxng => "searxng",
            Self::Tavily => "tavily",
            Self::Brave => "brave",
            Self::Jina => "jina",
        }
    }

    /// The public endpoint, for those that have one.
    pub fn default_endpoint(self) -> Option<&'static str> {
        match self {
            Self::Searxng => None,
            Self::Tavily => Some("https://api.tavily.com/search"),
            Self::Brave => Some("https://api.search.brave.com/res/v1/web/search"),
            Self::Jina => Some("https://s.jina.ai/"),
        }
    }

    /// Whether it needs an API key.
    pub fn needs_key(self) -> bool {
        !matches!(self, Self::Searxng)
    }
}

impl std::str::FromStr for SearchProvider {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text.to_ascii_lowercase().as_str() {
            "searxng" => Ok(Self::Searxng),
            "tavily" => Ok(Self::Tavily),
            "brave" => Ok(Self::Brave),
            "jina" => Ok(Self::Jina),
            _ => Err(format!(
                "unknown search provider '{text}': write one of searxng, tavily, brave, jina"
            )),
        }
    }
}

/// `[web]` in a file; every key is checked.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(super) struct FileWeb {
    /// Seconds.
    timeout: Option<Spanned<u64>>,
    max_response_bytes: Option<Spanned<usize>>,
    max_content_chars: Option<Spanned<usize>>,
    cache: Option<Spanned<bool>>,
    /// Seconds.
    cache_ttl: Option<Spanned<u64>>,
    summary_model: Option<Spanned<String>>,
    summary_provider: Option<Spanned<String>>,
    resolve: BTreeMap<String, Spanned<FileAddresses>>,
    search: Option<Spanned<FileWebSearch>>,
}

/// One address or several.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum FileAddresses {
    One(String),
    Many(Vec<String>),
}

/// `[web.search]` in a file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileWebSearch {
    provider: Option<Spanned<String>>,
    url: Option<Spanned<String>>,
    api_key_env: Option<String>,
    native: Option<Spanned<bool>>,
}

/// The merged `[web]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WebConfig {
    /// `timeout`: the longest one fetch (or search) may take (default 30 s).
    pub timeout: Option<Duration>,
    /// `max_response_bytes`: the body is cut there (default 5 MB).
    pub max_response_bytes: Option<usize>,
    /// `max_content_chars`: page content in one result (default 40 000).
    pub max_content_chars: Option<usize>,
    /// `cache`: `false` turns the page cache off (default on).
    pub cache: Option<bool>,
    /// `cache_ttl`: how long a page is served from the cache (default 15 minutes).
    pub cache_ttl: Option<Duration>,
    /// Where the page cache lives: `~/.toolhost/cache/web` (none without a home folder).
    pub cache_folder: Option<PathBuf>,
    /// `summary_model`: the model that answers prompts about long pages.
    pub summary_model: Option<String>,
    /// `summary_provider`: the provider of that model (default: as for runs).
    pub summary_provider: Option<String>,
    /// `resolve`: fixed addresses of host names (lower case), checked by the guard like DNS
    /// answers. Entries of later files replace those of earlier ones, host by host.
    pub resolve: BTreeMap<String, Vec<IpAddr>>,
    /// `[web.search]` with a `provider`: the search service.
    pub search: Option<WebSearchConfig>,
    /// `[web.search] native`: `false` keeps WebSearch off the run's provider's own search
    /// (default on, where the provider has one).
    pub native_search: Option<bool>,
}

/// The merged `[web.search]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebSearchConfig {
    /// `provider`.
    pub provider: SearchProvider,
    /// `url`: the endpoint (required for SearXNG).
    pub url: Option<String>,
    /// `api_key_env`: the variable holding the key.
    pub api_key_env: Option<String>,
    /// Where it was configured (`path:line`).
    pub origin: String,
}

impl Config {
    pub(super) fn merge_web(
        &mut self,
        web: FileWeb,
        origin: &dyn Fn(usize) -> String,
        invalid: &dyn Fn(Option<usize>, String) -> ConfigError,
    ) -> Result<(), ConfigError> {
        if let Some(seconds) = web.timeout {
            if *seconds.get_ref() == 0 {
                return Err(invalid(
                    Some(seconds.span().start),
                    "web.timeout of 0 seconds would stop every fetch: give at least 1".to_owned(),
                ));
            }
            self.web.timeout = Some(Duration::from_secs(*seconds.get_ref()));
            self.sources
                .insert("web.timeout", origin(seconds.span().start));
        }
        for (key, value, target) in [
            (
                "web.max_response_bytes",
                web.max_response_bytes,
                &mut self.web.max_response_bytes,
            ),
            (
                "web.max_content_chars",
                web.max_content_chars,
                &mut self.web.max_content_chars,
            ),
        ] {
            if let Some(value) = value {
                if *value.get_ref() == 0 {
                    return Err(invalid(
                        Some(value.span().start),
                        format!("{key} of 0 would leave nothing of any page: give at least 1"),
                    ));
                }
                *target = Some(*value.get_ref());
                self.sources.insert(key, origin(value.span().start));
            }
        }
        if let Some(seconds) = web.cache_ttl {
            if *seconds.get_ref() == 0 {
                return Err(invalid(
                    Some(seconds.span().start),
                    "web.cache_ttl of 0 seconds keeps nothing: write cache = false to turn the \
                     cache off"
                        .to_owned(),
                ));
            }
            self.web.cache_ttl = Some(Duration::from_secs(*seconds.get_ref()));
            self.sources
                .insert("web.cache_ttl", origin(seconds.span().start));
        }
        if let Some(cache) = web.cache {
            self.web.cache = Some(*cache.get_ref());
            self.sources.insert("web.cache", origin(cache.span().start));
        }
        for (key, value, target) in [
            (
                "web.summary_model",
                web.summary_model,
                &mut self.web.summary_model,
            ),
            (
                "web.summary_provider",
                web.summary_provider,
                &mut self.web.summary_provider,
            ),
        ] {
            if let Some(value) = value {
                if value.get_ref().trim().is_empty() {
                    return Err(invalid(
                        Some(value.span().start),
                        format!("{key} is empty: name a model, or leave the key out"),
                    ));
                }
                *target = Some(value.get_ref().trim().to_owned());
                self.sources.insert(key, origin(value.span().start));
            }
        }
        for (host, addresses) in web.resolve {
            let start = addresses.span().start;
            let texts = match addresses.into_inner() {
                FileAddresses::One(one) => vec![one],
                FileAddresses::Many(many) => many,
            };
            if texts.is_empty() {
                return Err(invalid(
                    Some(start),
                    format!("web.resolve.\"{host}\" has no address: give one, as in \"10.0.0.7\""),
                ));
            }
            let parsed = texts
                .iter()
                .map(|text| {
                    text.parse::<IpAddr>().map_err(|_| {
                        invalid(
                            Some(start),
                            format!(
                                "web.resolve.\"{host}\": '{text}' is not an IP address (write \
                                 it as 10.0.0.7 or fd00::7)"
                            ),
                        )
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            self.web
                .resolve
                .insert(host.trim_end_matches('.').to_ascii_lowercase(), parsed);
        }
        if let Some(search) = web.search {
            let start = search.span().start;
            let search = search.into_inner();
            if let Some(native) = search.native {
                self.web.native_search = Some(*native.get_ref());
                self.sources
                    .insert("web.search.native", origin(native.span().start));
            }
            let Some(provider) = search.provider else {
                if search.url.is_some() || search.api_key_env.is_some() {
                    return Err(invalid(
                        Some(start),
                        "web.search has url or api_key_env but no provider: add provider = \
                         \"searxng\" (or \"tavily\", \"brave\", \"jina\")"
                            .to_owned(),
                    ));
                }
                return Ok(());
            };
            let parsed = provider
                .get_ref()
                .parse::<SearchProvider>()
                .map_err(|problem| {
                    invalid(
                        Some(provider.span().start),
                        format!("web.search.provider: {problem}"),
                    )
                })?;
            if let Some(url) = &search.url {
                check_base_url(url.get_ref()).map_err(|problem| {
                    invalid(Some(url.span().start), format!("web.search.url {problem}"))
                })?;
            } else if parsed == SearchProvider::Searxng {
                return Err(invalid(
                    Some(start),
                    "web.search with provider = \"searxng\" needs url = \"http://…\" (the \
                     instance's address)"
                        .to_owned(),
                ));
            }
            self.web.search = Some(WebSearchConfig {
                provider: parsed,
                url: search.url.map(Spanned::into_inner),
                api_key_env: search.api_key_env,
                origin: origin(start),
            });
        }
        Ok(())
    }
}

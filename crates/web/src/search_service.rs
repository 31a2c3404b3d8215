//! The search services WebSearch can ask (its second tier), by `[web.search]` configuration:
//! a SearXNG instance's JSON API, Tavily, Brave Search and Jina's search endpoint. Each gives
//! the same [`SearchHit`]s.
//!
//! The service's URL is the user's configuration, not the model's: it is not put through the
//! private-network guard (a SearXNG on `localhost` is the usual setup).

use std::time::Duration;

use serde_json::{Value, json};
use url::Url;

/// One search result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchHit {
    /// The page's title.
    pub title: String,
    /// Its URL.
    pub url: String,
    /// A short piece of its text.
    pub snippet: String,
}

pub use toolhost_config::web::SearchProvider;

/// A configured search service.
#[derive(Clone, Debug)]
pub struct SearchService {
    /// Which service.
    pub provider: SearchProvider,
    /// Its endpoint; `None`: the provider's public one.
    pub url: Option<Url>,
    /// The API key, read from the environment.
    pub api_key: Option<String>,
    /// The variable the key is read from, to name it when it is missing.
    pub api_key_env: Option<String>,
    /// How long a search may take.
    pub timeout: Duration,
}

/// Why a search failed; each says what to do.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SearchError {
    /// The service needs a key and none is set.
    #[error(
        "the {provider} search service needs an API key: set the environment variable {variable} \
         ([web.search] api_key_env)"
    )]
    MissingKey {
        /// The service.
        provider: &'static str,
        /// The variable to set.
        variable: String,
    },
    /// No endpoint (a SearXNG without `url`).
    #[error(
        "[web.search] provider = \"{provider}\" needs url = \"https://…\" (the instance's address)"
    )]
    MissingUrl {
        /// The service.
        provider: &'static str,
    },
    /// The request failed or the answer could not be read.
    #[error("the {provider} search at {url} failed: {message}")]
    Failed {
        /// The service.
        provider: &'static str,
        /// The endpoint.
        url: String,
        /// What went wrong.
        message: String,
    },
}

impl SearchService {
    /// The endpoint asked.
    pub fn endpoint(&self) -> Option<Url> {
        self.url.clone().or_else(|| {
            self.provider
                .default_endpoint()
                .and_then(|url| Url::parse(url).ok())
        })
    }

    /// The host asked, for domain rules.
    pub fn host(&self) -> Option<String> {
        self.endpoint()
            .and_then(|url| url.host_str().map(str::to_owned))
    }

    /// At most `count` results for `query`.
    pub async fn search(&self, query: &str, count: usize) -> Result<Vec<SearchHit>, SearchError> {
        let provider = self.provider.name();
        let endpoint = self
            .endpoint()
            .ok_or(SearchError::MissingUrl { provider })?;
        let key = match (&self.api_key, self.provider.needs_key()) {
            (Some(key), _) => Some(key.as_str()),
            (None, false) => None,
            (None, true) => {
                return Err(SearchError::MissingKey {
                    provider,
                    variable: self
                        .api_key_env
                        .clone()
                        .unwrap_or_else(|| format!("{}_API_KEY", provider.to_uppercase())),
                });
            }
        };
        let failed = |message: String| SearchError::Failed {
            provider,
            url: endpoint.to_string(),
            message,
        };
        let client = reqwest::Client::builder()
            .timeout(self.timeout)
            .user_agent(concat!(
                "toolhost/",
                env!("CARGO_PKG_VERSION"),
                " (WebSearch)"
            ))
            .build()
            .map_err(|error| failed(error.to_string()))?;
        let request = self.request(&client, endpoint.clone(), query, count, key);
        let response = request
            .send()
            .await
            .map_err(|error| failed(error.to_string()))?;
        let status = response.status();
        let body = response
            .text()
            .await
            .map_err(|error| failed(error.to_string()))?;
        if !status.is_success() {
            let start: String = body.chars().take(300).collect();
            return Err(failed(format!("HTTP {status}: {start}")));
        }
        let value: Value = serde_json::from_str(&body)
            .map_err(|error| failed(format!("the answer is not JSON ({error})")))?;
        let mut hits = self.hits(&value);
        hits.truncate(count);
        Ok(hits)
    }

    fn request(
        &self,
        client: &reqwest::Client,
        mut endpoint: Url,
        query: &str,
        count: usize,
        key: Option<&str>,
    ) -> reqwest::RequestBuilder {
        let count_text = count.to_string();
        let bearer = key.map(|key| format!("Bearer {key}")).unwrap_or_default();
        match self.provider {
            SearchProvider::Searxng => {
                if !endpoint.path().ends_with("/search") {
                    let path = format!("{}/search", endpoint.path().trim_end_matches('/'));
                    endpoint.set_path(&path);
                }
                endpoint
                    .query_pairs_mut()
                    .append_pair("q", query)
                    .append_pair("format", "json");
                client.get(endpoint)
            }
            SearchProvider::Tavily => client
                .post(endpoint)
                .header("Authorization", bearer)
                .header("Content-Type", "application/json")
                .body(json!({"query": query, "max_results": count}).to_string()),
            SearchProvider::Brave => {
                endpoint
                    .query_pairs_mut()
                    .append_pair("q", query)
                    .append_pair("count", &count_text);
                client
                    .get(endpoint)
                    .header("Accept", "application/json")
                    .header("X-Subscription-Token", key.unwrap_or_default())
            }
            SearchProvider::Jina => {
                endpoint.query_pairs_mut().append_pair("q", query);
                client
                    .get(endpoint)
                    .header("Accept", "application/json")
                    .header("Authorization", bearer)
                    .header("X-Respond-With", "no-content")
            }
        }
    }

    /// The results in the provider's answer.
    fn hits(&self, value: &Value) -> Vec<SearchHit> {
        let (list, snippet_keys): (&Value, &[&str]) = match self.provider {
            SearchProvider::Searxng | SearchProvider::Tavily => (&value["results"], &["content"]),
            SearchProvider::Brave => (&value["web"]["results"], &["description"]),
            SearchProvider::Jina => (&value["data"], &["description", "content"]),
        };
        let text = |item: &Value, key: &str| {
            item.get(key)
                .and_then(Value::as_str)
                .map(str::trim)
                .unwrap_or("")
                .to_owned()
        };
        list.as_array()
            .into_iter()
            .flatten()
            .filter_map(|item| {
                let url = text(item, "url");
                (!url.is_empty()).then(|| SearchHit {
                    title: text(item, "title"),
                    snippet: snippet_keys
                        .iter()
                        .map(|key| text(item, key))
                        .find(|snippet| !snippet.is_empty())
                        .unwrap_or_default(),
                    url,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn service(provider: SearchProvider) -> SearchService {
        SearchService {
            provider,
            url: None,
            api_key: None,
            api_key_env: None,
            timeout: Duration::from_secs(1),
        }
    }

    #[test]
    fn each_provider_s_answer_gives_hits() {
        let brave = json!({"web": {"results": [{"title": "B", "url": "https://b.example/", "description": "bee"}]}});
        assert_eq!(
            service(SearchProvider::Brave).hits(&brave),
            [SearchHit {
                title: "B".into(),
                url: "https://b.example/".into(),
                snippet: "bee".into()
            }]
        );
        let jina = json!({"code": 200, "data": [{"title": "J", "url": "https://j.example/", "content": "jay"}, {"title": "no url"}]});
        assert_eq!(service(SearchProvider::Jina).hits(&jina).len(), 1);
        assert_eq!(service(SearchProvider::Jina).hits(&jina)[0].snippet, "jay");
    }

    #[tokio::test]
    async fn a_keyed_service_without_its_key_names_the_variable() {
        let mut tavily = service(SearchProvider::Tavily);
        tavily.api_key_env = Some("MY_TAVILY".into());
        let error = tavily.search("rust", 3).await.unwrap_err();
        assert!(error.to_string().contains("MY_TAVILY"), "{error}");
        let error = service(SearchProvider::Searxng)
            .search("rust", 3)
            .await
            .unwrap_err();
        assert_eq!(
            error,
            SearchError::MissingUrl {
                provider: "searxng"
            }
        );
    }
}

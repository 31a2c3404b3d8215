//! Anthropic's search: one Messages request that offers the model
//! Anthropic's server-side `web_search` tool (`web_search_20250305`, one use), whose
//! `web_search_tool_result` blocks are the results. Snippets come from the answer's citations
//! of each result (`cited_text`), else the page's age.
//!
//! Anthropic runs the search and bills it; an organisation that has not enabled it gets an
//! error, and WebSearch falls back to its next tier.

use std::time::Duration;

use crate::ANTHROPIC_BASE_URL;
use crate::anthropic::API_VERSION as ANTHROPIC_VERSION;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolhost_web::{NativeWebSearch, SearchHit};

use super::post_json;
use toolhost_config::model_choice::ChosenProvider;

/// The most tokens of the answer around the results (the results themselves are blocks).
const SEARCH_MAX_OUTPUT_TOKENS: u32 = 1024;

/// Anthropic's `web_search` server tool on the run's provider.
pub(super) struct AnthropicWebSearch {
    url: String,
    api_key: Option<String>,
    headers: Vec<(String, String)>,
    model: String,
    timeout: Duration,
}

impl AnthropicWebSearch {
    /// The search of `chosen` (an Anthropic provider), each request within `timeout`.
    pub(super) fn new(chosen: &ChosenProvider, timeout: Duration) -> Self {
        let base = chosen
            .entry
            .base_url
            .clone()
            .unwrap_or_else(|| ANTHROPIC_BASE_URL.to_owned());
        Self {
            url: format!("{}/v1/messages", base.trim_end_matches('/')),
            api_key: chosen.api_key.clone(),
            headers: chosen
                .entry
                .headers
                .iter()
                .map(|(name, value)| (name.clone(), value.clone()))
                .collect(),
            model: chosen.model.clone(),
            timeout,
        }
    }

    async fn ask(&self, query: &str, count: usize) -> Result<Value, String> {
        let body = json!({
            "model": self.model,
            "max_tokens": SEARCH_MAX_OUTPUT_TOKENS,
            "messages": [{
                "role": "user",
                "content": format!(
                    "Search the web for: {query}\nList the {count} most relevant results, one \
                     line each, citing each."
                ),
            }],
            "tools": [{"type": "web_search_20250305", "name": "web_search", "max_uses": 1}],
        });
        let mut headers = vec![("anthropic-version".to_owned(), ANTHROPIC_VERSION.to_owned())];
        if let Some(key) = &self.api_key {
            headers.push(("x-api-key".to_owned(), key.clone()));
        }
        headers.extend(self.headers.iter().cloned());
        post_json(&self.url, &headers, &body, self.timeout).await
    }
}

#[async_trait::async_trait]
impl NativeWebSearch for AnthropicWebSearch {
    fn name(&self) -> String {
        "anthropic web_search".to_owned()
    }

    async fn search(
        &self,
        query: &str,
        count: usize,
        cancel: CancellationToken,
    ) -> Result<Vec<SearchHit>, String> {
        let answer = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err("cancelled".to_owned()),
            answer = self.ask(query, count) => answer?,
        };
        let mut hits = search_hits(&answer)?;
        hits.truncate(count);
        Ok(hits)
    }
}

/// The results of a Messages answer: every `web_search_result`, with the text the answer
/// cites from it.
fn search_hits(answer: &Value) -> Result<Vec<SearchHit>, String> {
    let blocks = answer["content"].as_array().cloned().unwrap_or_default();
    let cited = |url: &str| -> Option<String> {
        blocks
            .iter()
            .flat_map(|block| block["citations"].as_array().cloned().unwrap_or_default())
            .find(|citation| citation["url"].as_str() == Some(url))
            .and_then(|citation| citation["cited_text"].as_str().map(str::to_owned))
    };
    let mut hits = Vec::new();
    for block in blocks
        .iter()
        .filter(|block| block["type"] == "web_search_tool_result")
    {
        let content = &block["content"];
        if content["type"] == "web_search_tool_result_error" {
            return Err(format!(
                "the search failed: {}",
                content["error_code"].as_str().unwrap_or("unknown error")
            ));
        }
        for result in content.as_array().into_iter().flatten() {
            let Some(url) = result["url"].as_str() else {
                continue;
            };
            let snippet = cited(url).unwrap_or_else(|| {
                result["page_age"]
                    .as_str()
                    .map(|age| format!("(page age: {age})"))
                    .unwrap_or_default()
            });
            hits.push(SearchHit {
                title: result["title"].as_str().unwrap_or("").to_owned(),
                url: url.to_owned(),
                snippet,
            });
        }
    }
    if hits.is_empty()
        && !blocks
            .iter()
            .any(|block| block["type"] == "server_tool_use")
    {
        return Err(
            "the model did not search (the web_search tool may not be enabled for this \
                    organisation or model)"
                .to_owned(),
        );
    }
    Ok(hits)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn results_come_from_the_search_blocks_with_cited_text() {
        let answer = json!({"content": [
            {"type": "text", "text": "Searching."},
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "rust"}},
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [
                {"type": "web_search_result", "url": "https://www.rust-lang.org/", "title": "Rust", "encrypted_content": "x", "page_age": "1 day"},
                {"type": "web_search_result", "url": "https://doc.rust-lang.org/book/", "title": "The Book", "encrypted_content": "y"}
            ]},
            {"type": "text", "text": "Rust is a language.", "citations": [
                {"type": "web_search_result_location", "url": "https://www.rust-lang.org/", "title": "Rust", "cited_text": "A language empowering everyone."}
            ]}
        ]});
        assert_eq!(
            search_hits(&answer).unwrap(),
            [
                SearchHit {
                    title: "Rust".into(),
                    url: "https://www.rust-lang.org/".into(),
                    snippet: "A language empowering everyone.".into(),
                },
                SearchHit {
                    title: "The Book".into(),
                    url: "https://doc.rust-lang.org/book/".into(),
                    snippet: String::new(),
                },
            ]
        );
    }

    #[test]
    fn a_search_error_or_no_search_is_an_error() {
        let failed = json!({"content": [
            {"type": "server_tool_use", "id": "s", "name": "web_search", "input": {}},
            {"type": "web_search_tool_result", "tool_use_id": "s", "content": {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}}
        ]});
        assert_eq!(
            search_hits(&failed).unwrap_err(),
            "the search failed: max_uses_exceeded"
        );
        let no_search = json!({"content": [{"type": "text", "text": "I cannot search."}]});
        assert!(
            search_hits(&no_search)
                .unwrap_err()
                .contains("did not search")
        );
    }
}

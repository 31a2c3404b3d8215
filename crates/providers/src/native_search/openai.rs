//! OpenAI's search: one Responses request offering the `web_search` tool, with the sources
//! of its `web_search_call` included. Results are the answer's `url_citation` annotations
//! (title, URL, the cited span of text as snippet), then the sources no citation named.

use std::time::Duration;

use crate::OPENAI_BASE_URL;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolhost_web::{NativeWebSearch, SearchHit};

use super::post_json;
use toolhost_config::model_choice::ChosenProvider;

/// The OpenAI Responses `web_search` tool on the run's provider.
pub(super) struct OpenAiWebSearch {
    url: String,
    api_key: Option<String>,
    headers: Vec<(String, String)>,
    model: String,
    timeout: Duration,
}

impl OpenAiWebSearch {
    /// The search of `chosen` (an OpenAI Responses provider), each request within `timeout`.
    pub(super) fn new(chosen: &ChosenProvider, timeout: Duration) -> Self {
        let base = chosen
            .entry
            .base_url
            .clone()
            .unwrap_or_else(|| OPENAI_BASE_URL.to_owned());
        Self {
            url: format!("{}/responses", base.trim_end_matches('/')),
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
}

#[async_trait::async_trait]
impl NativeWebSearch for OpenAiWebSearch {
    fn name(&self) -> String {
        "openai web_search".to_owned()
    }

    async fn search(
        &self,
        query: &str,
        count: usize,
        cancel: CancellationToken,
    ) -> Result<Vec<SearchHit>, String> {
        let body = json!({
            "model": self.model,
            "input": format!(
                "Search the web for: {query}\nList the {count} most relevant results, one line \
                 each, citing each."
            ),
            "tools": [{"type": "web_search"}],
            "tool_choice": "required",
            "include": ["web_search_call.action.sources"],
        });
        let mut headers = self.headers.clone();
        if let Some(key) = &self.api_key {
            headers.push(("authorization".to_owned(), format!("Bearer {key}")));
        }
        let answer = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err("cancelled".to_owned()),
            answer = post_json(&self.url, &headers, &body, self.timeout) => answer?,
        };
        let mut hits = search_hits(&answer)?;
        hits.truncate(count);
        Ok(hits)
    }
}

/// The cited results, then the uncited sources, each URL once.
fn search_hits(answer: &Value) -> Result<Vec<SearchHit>, String> {
    let output = answer["output"].as_array().cloned().unwrap_or_default();
    let mut hits: Vec<SearchHit> = Vec::new();
    let push = |hit: SearchHit, hits: &mut Vec<SearchHit>| {
        if !hits.iter().any(|seen| seen.url == hit.url) {
            hits.push(hit);
        }
    };
    for part in output
        .iter()
        .filter(|item| item["type"] == "message")
        .flat_map(|item| item["content"].as_array().cloned().unwrap_or_default())
    {
        let text: Vec<char> = part["text"].as_str().unwrap_or("").chars().collect();
        for citation in part["annotations"].as_array().into_iter().flatten() {
            let Some(url) = citation["url"]
                .as_str()
                .filter(|_| citation["type"] == "url_citation")
            else {
                continue;
            };
            let span = |key: &str| {
                citation[key]
                    .as_u64()
                    .and_then(|at| usize::try_from(at).ok())
            };
            let snippet = match (span("start_index"), span("end_index")) {
                (Some(start), Some(end)) if start < end && end <= text.len() => {
                    text[start..end].iter().collect::<String>()
                }
                _ => String::new(),
            };
            let hit = SearchHit {
                title: citation["title"].as_str().unwrap_or("").to_owned(),
                url: url.to_owned(),
                snippet: snippet.trim().to_owned(),
            };
            push(hit, &mut hits);
        }
    }
    let calls: Vec<&Value> = output
        .iter()
        .filter(|item| item["type"] == "web_search_call")
        .collect();
    for source in calls.iter().flat_map(|call| {
        call["action"]["sources"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }) {
        if let Some(url) = source["url"].as_str() {
            let hit = SearchHit {
                title: String::new(),
                url: url.to_owned(),
                snippet: String::new(),
            };
            push(hit, &mut hits);
        }
    }
    if hits.is_empty() && calls.is_empty() {
        return Err(
            "the model did not search (the web_search tool may not be available for \
                    this model or server)"
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
    fn results_are_the_citations_then_the_other_sources() {
        let answer = json!({"output": [
            {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {
                "type": "search", "query": "rust",
                "sources": [{"type": "url", "url": "https://www.rust-lang.org/"}, {"type": "url", "url": "https://crates.io/"}]
            }},
            {"type": "message", "role": "assistant", "content": [{
                "type": "output_text",
                "text": "Rust is fast and safe. Learn it from the book.",
                "annotations": [
                    {"type": "url_citation", "start_index": 0, "end_index": 22, "url": "https://www.rust-lang.org/", "title": "Rust"},
                    {"type": "url_citation", "start_index": 23, "end_index": 46, "url": "https://doc.rust-lang.org/book/", "title": "The Book"}
                ]
            }]}
        ]});
        let hit = |title: &str, url: &str, snippet: &str| SearchHit {
            title: title.into(),
            url: url.into(),
            snippet: snippet.into(),
        };
        assert_eq!(
            search_hits(&answer).unwrap(),
            [
                hit(
                    "Rust",
                    "https://www.rust-lang.org/",
                    "Rust is fast and safe."
                ),
                hit(
                    "The Book",
                    "https://doc.rust-lang.org/book/",
                    "Learn it from the book."
                ),
                hit("", "https://crates.io/", ""),
            ]
        );
        let no_search = json!({"output": [{"type": "message", "content": [{"type": "output_text", "text": "No."}]}]});
        assert!(
            search_hits(&no_search)
                .unwrap_err()
                .contains("did not search")
        );
    }
}

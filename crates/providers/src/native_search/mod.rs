//! WebSearch's first tier: the run's provider's own web search, asked in a request of its
//! own. Anthropic's `web_search` server tool ([`AnthropicWebSearch`]) and the OpenAI
//! Responses `web_search` tool ([`OpenAiWebSearch`]); chat-completions servers have none.
//! `[web.search] native = false` turns this tier off.

mod anthropic;
mod openai;

use std::sync::Arc;
use std::time::Duration;

use crate::Api;
use serde_json::Value;
use toolhost_web::NativeWebSearch;

use toolhost_config::model_choice::ChosenProvider;

use anthropic::AnthropicWebSearch;
use openai::OpenAiWebSearch;

/// The own search of `chosen`'s API, when it has one; each request within `timeout`.
pub fn native_search(
    chosen: &ChosenProvider,
    timeout: Duration,
) -> Option<Arc<dyn NativeWebSearch>> {
    match chosen.entry.api {
        Api::Anthropic => Some(Arc::new(AnthropicWebSearch::new(chosen, timeout))),
        Api::OpenAiResponses => Some(Arc::new(OpenAiWebSearch::new(chosen, timeout))),
        Api::OpenAiChat => None,
    }
}

/// POSTs `body` as JSON with `headers`; the answer's JSON, or what went wrong.
async fn post_json(
    url: &str,
    headers: &[(String, String)],
    body: &Value,
    timeout: Duration,
) -> Result<Value, String> {
    let client = reqwest::Client::builder()
        .timeout(timeout)
        .build()
        .map_err(|error| error.to_string())?;
    let mut request = client
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_string());
    for (name, value) in headers {
        request = request.header(name, value);
    }
    let response = request.send().await.map_err(|error| error.to_string())?;
    let status = response.status();
    let text = response.text().await.map_err(|error| error.to_string())?;
    if !status.is_success() {
        let start: String = text.chars().take(300).collect();
        return Err(format!("HTTP {status}: {start}"));
    }
    serde_json::from_str(&text).map_err(|error| format!("the answer is not JSON ({error})"))
}

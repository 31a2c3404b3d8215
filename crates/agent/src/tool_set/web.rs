//! The web tools' settings from `[web]`: WebFetch's limits, cache, fixed host entries and
//! summary model (a [`WebSummarizer`] on the providers of `toolhost-providers`), and
//! WebSearch's service.
//!
//! WebSearch's first tier is the run's provider's own search, when it has one and
//! `[web.search] native` is not `false` (see `toolhost_providers::native_search`). Commands without a model (`toolhost call`, `serve`) have no
//! provider, so their WebSearch starts at the configured service.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use toolhost_core::conversation::Message;
use toolhost_providers::{ModelProvider, ModelRequest, complete};
use toolhost_tools::web::{
    CACHE_TTL, DEFAULT_FETCH_TIMEOUT, HostResolver, PageCache, SearchService, SummaryError,
    SummaryRequest, WebSummarizer,
};
use toolhost_tools::{WebFetchSettings, WebSearchSettings};

use crate::provider_connect::connect_provider;
use toolhost_config::Config;
use toolhost_config::model_choice::{ChosenProvider, ModelFlags, choose_provider};
use toolhost_providers::native_search::native_search;

/// The most tokens a summary answer may have.
const SUMMARY_MAX_OUTPUT_TOKENS: u32 = 1024;

const SUMMARY_SYSTEM_PROMPT: &str = "You answer a question about one web page, from the page's \
     content alone. Be concise and specific: keep exact names, numbers, code and URLs as the \
     page gives them. If the page does not answer the question, say so and say what it does \
     contain.";

/// WebSearch's and WebFetch's settings under `config`, for a run asking `provider` (when
/// there is one); `env` reads the API keys.
pub(super) fn web_settings(
    config: &Config,
    provider: Option<&ChosenProvider>,
    env: &dyn Fn(&str) -> Option<String>,
) -> (WebSearchSettings, WebFetchSettings) {
    let web = &config.web;
    let timeout = web.timeout.unwrap_or(DEFAULT_FETCH_TIMEOUT);
    let service = web.search.as_ref().map(|search| SearchService {
        provider: search.provider,
        url: search
            .url
            .as_deref()
            .and_then(|url| url::Url::parse(url).ok()),
        api_key: search
            .api_key_env
            .as_deref()
            .and_then(env)
            .filter(|key| !key.trim().is_empty()),
        api_key_env: search.api_key_env.clone(),
        timeout,
    });
    let cache = match (web.cache, &web.cache_folder) {
        (Some(false), _) | (_, None) => None,
        (_, Some(folder)) => Some(PageCache::new(folder, web.cache_ttl.unwrap_or(CACHE_TTL))),
    };
    let fetch = WebFetchSettings {
        timeout: Some(timeout),
        max_response_bytes: web.max_response_bytes,
        max_content_chars: web.max_content_chars,
        cache,
        resolver: HostResolver::with_fixed(web.resolve.clone()),
        summarizer: web
            .summary_model
            .as_ref()
            .map(|model| summarizer(config, model, env)),
    };
    (
        WebSearchSettings {
            native: provider
                .filter(|_| web.native_search != Some(false))
                .and_then(|chosen| native_search(chosen, timeout)),
            service,
        },
        fetch,
    )
}

/// The summary model, or one that says why it cannot be used (in every result that would
/// have needed it, rather than stopping the command).
fn summarizer(
    config: &Config,
    model: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Arc<dyn WebSummarizer> {
    let flags = ModelFlags {
        provider: config.web.summary_provider.clone(),
        model: Some(model.to_owned()),
    };
    let provider = choose_provider(config, &flags, env)
        .map_err(|error| error.to_string())
        .and_then(|chosen| connect_provider(&chosen).map_err(|error| error.to_string()));
    Arc::new(ProviderSummarizer {
        model: model.to_owned(),
        provider,
    })
}

/// A [`WebSummarizer`] on a model provider.
struct ProviderSummarizer {
    model: String,
    provider: Result<Arc<dyn ModelProvider>, String>,
}

#[async_trait::async_trait]
impl WebSummarizer for ProviderSummarizer {
    fn model(&self) -> String {
        self.model.clone()
    }

    async fn answer(
        &self,
        request: SummaryRequest<'_>,
        cancel: CancellationToken,
    ) -> Result<String, SummaryError> {
        let provider = self
            .provider
            .as_ref()
            .map_err(|problem| SummaryError(format!("it cannot be used: {problem}")))?;
        let mut page = format!("URL: {}\n", request.url);
        if let Some(title) = request.title {
            page.push_str(&format!("Title: {title}\n"));
        }
        let question = format!(
            "{page}\n<page>\n{}\n</page>\n\nQuestion: {}",
            request.content, request.prompt
        );
        let model_request = ModelRequest {
            system: SUMMARY_SYSTEM_PROMPT.to_owned(),
            messages: vec![Message::user(question)],
            max_output_tokens: Some(SUMMARY_MAX_OUTPUT_TOKENS),
            ..ModelRequest::default()
        };
        let answer = complete(provider.as_ref(), &model_request, cancel)
            .await
            .map_err(|error| SummaryError(error.to_string()))?;
        let text = answer.text();
        if text.trim().is_empty() {
            return Err(SummaryError("it gave an empty answer".to_owned()));
        }
        Ok(text)
    }
}

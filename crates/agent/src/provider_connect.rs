//! A chosen provider turned into a connected [`ModelProvider`].

use std::sync::Arc;

use toolhost_providers::{
    ANTHROPIC_BASE_URL, Api, ModelProvider, OPENAI_BASE_URL, ProviderConfig, ProviderError,
};

use toolhost_config::model_choice::ChosenProvider;

/// The provider `chosen` describes, with the configured timeouts, retries and headers over
/// the provider's defaults.
pub(crate) fn connect_provider(
    chosen: &ChosenProvider,
) -> Result<Arc<dyn ModelProvider>, ProviderError> {
    let entry = &chosen.entry;
    let base_url = entry.base_url.clone().unwrap_or_else(|| {
        match entry.api {
            Api::Anthropic => ANTHROPIC_BASE_URL,
            Api::OpenAiChat | Api::OpenAiResponses => OPENAI_BASE_URL,
        }
        .to_owned()
    });
    let mut config = ProviderConfig::new(entry.name.clone(), entry.api, base_url, &chosen.model);
    config.api_key = chosen.api_key.clone();
    config.headers = entry.headers.clone();
    config.context_window = entry.context_window;
    config.max_output_tokens = entry.max_output_tokens;
    let timeouts = &mut config.timeouts;
    for (configured, target) in [
        (entry.timeouts.connect, &mut timeouts.connect),
        (entry.timeouts.first_byte, &mut timeouts.first_byte),
        (entry.timeouts.idle, &mut timeouts.idle),
        (entry.timeouts.request, &mut timeouts.request),
    ] {
        if let Some(value) = configured {
            *target = value;
        }
    }
    if let Some(retries) = entry.max_retries {
        config.retry.max_attempts = retries.saturating_add(1);
    }
    config.prompt_cache = entry.prompt_cache.unwrap_or(true);
    config.native_tool_search = entry.native_tool_search.unwrap_or(true);
    config.temperature = entry.temperature.map(|temperature| temperature.0);
    toolhost_providers::connect(config)
}

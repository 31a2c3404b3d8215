//! `[providers.NAME]` (the model providers a run can ask) and `[agent]` (which one, which
//! model, how many turns).
//!
//! ```toml
//! [agent]
//! provider = "local"
//! max_iterations = 30
//!
//! [providers.local]
//! api = "openai-chat"            # or "openai-responses", "anthropic"
//! base_url = "http://127.0.0.1:8091/v1"
//! model = "qwen2.5-coder-1.5b"
//! first_byte_timeout = 300       # seconds
//! pricing = { input = 0.0, output = 0.0 }   # USD per million tokens
//! ```
//!
//! The API key is never written in a file: `api_key_env` names the variable that holds it. A
//! layer's `[providers.NAME]` replaces an earlier one of the same name.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::Config;
use crate::pricing::{Pricing, built_in_pricing};

/// The wire format a provider speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Api {
    /// OpenAI chat completions, `POST {base_url}/chat/completions` — what llama.cpp, vLLM,
    /// Ollama, LM Studio, OpenRouter and most gateways speak.
    #[serde(rename = "openai-chat")]
    OpenAiChat,
    /// The OpenAI Responses API, `POST {base_url}/responses`.
    #[serde(rename = "openai-responses")]
    OpenAiResponses,
    /// Anthropic messages, `POST {base_url}/v1/messages`.
    #[serde(rename = "anthropic")]
    Anthropic,
}

impl Api {
    /// The name used in configuration files (`openai-chat`, `openai-responses`, `anthropic`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OpenAiChat => "openai-chat",
            Self::OpenAiResponses => "openai-responses",
            Self::Anthropic => "anthropic",
        }
    }
}

impl std::str::FromStr for Api {
    type Err = String;

    /// Reads a configuration name; the error lists the names there are.
    fn from_str(name: &str) -> Result<Self, String> {
        [Self::OpenAiChat, Self::OpenAiResponses, Self::Anthropic]
            .into_iter()
            .find(|api| api.as_str() == name)
            .ok_or_else(|| {
                format!("unknown api `{name}`: use openai-chat, openai-responses or anthropic")
            })
    }
}

impl std::fmt::Display for Api {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The providers known without configuration, by their conventional variables.
pub const CONVENTIONAL_PROVIDERS: [&str; 2] = ["openai", "anthropic"];

/// One `[providers.NAME]` table; every key is checked.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileProvider {
    api: Spanned<String>,
    base_url: Option<Spanned<String>>,
    api_key_env: Option<String>,
    model: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    context_window: Option<u64>,
    max_output_tokens: Option<u32>,
    /// Seconds.
    connect_timeout: Option<Spanned<u64>>,
    /// Seconds.
    first_byte_timeout: Option<Spanned<u64>>,
    /// Seconds.
    idle_timeout: Option<Spanned<u64>>,
    /// Seconds.
    request_timeout: Option<Spanned<u64>>,
    max_retries: Option<u32>,
    prompt_cache: Option<bool>,
    native_tool_search: Option<bool>,
    temperature: Option<Spanned<f64>>,
    /// USD per million tokens.
    pricing: Option<Spanned<FilePricing>>,
}

/// `pricing = { input = 3.0, output = 15.0, cached_input = 0.3, cache_write = 3.75 }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FilePricing {
    input: f64,
    output: f64,
    cached_input: Option<f64>,
    cache_write: Option<f64>,
}

/// `[agent]`; every key is checked.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(super) struct FileAgentSettings {
    provider: Option<Spanned<String>>,
    model: Option<Spanned<String>>,
    max_iterations: Option<Spanned<usize>>,
    compact_at: Option<Spanned<f64>>,
}

/// A sampling temperature, checked from 0 to 2 when read (so equality is an equivalence and
/// [`ProviderEntry`] stays `Eq`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Temperature(pub f32);

impl Eq for Temperature {}

/// A configured model provider, before its key is read from the environment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProviderEntry {
    /// The table's name (`local` for `[providers.local]`).
    pub name: String,
    /// The wire format.
    pub api: Api,
    /// The API's base URL; `None`: the API's public endpoint.
    pub base_url: Option<String>,
    /// The environment variable holding the API key; `None`: no key is sent.
    pub api_key_env: Option<String>,
    /// The default model.
    pub model: Option<String>,
    /// Extra HTTP headers sent with every request.
    pub headers: BTreeMap<String, String>,
    /// The model's context window in tokens.
    pub context_window: Option<u64>,
    /// The most tokens a response may have.
    pub max_output_tokens: Option<u32>,
    /// Named timeouts; `None` keeps the provider's default.
    pub timeouts: ProviderTimeouts,
    /// How many times a failed request is tried again.
    pub max_retries: Option<u32>,
    /// Anthropic prompt-cache breakpoints (default on).
    pub prompt_cache: Option<bool>,
    /// The API's own deferred loading of deferred tools where the format has it (Anthropic's
    /// and the Responses API's `defer_loading`; default on); off, the loaded tools are
    /// appended to the tools list.
    pub native_tool_search: Option<bool>,
    /// The sampling temperature (0 to 2); `None`: the server's default.
    pub temperature: Option<Temperature>,
    /// What its models cost (`pricing = { input = 3.0, output = 15.0 }`, USD per million
    /// tokens); `None`: the built-in prices of the hosted models, if any
    /// ([`provider_pricing`]).
    pub pricing: Option<Pricing>,
    /// Where it was configured (`path:line`).
    pub origin: String,
}

/// The named timeouts of a provider; `None` keeps the provider's default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProviderTimeouts {
    /// Opening the connection.
    pub connect: Option<Duration>,
    /// From the request to the response's first byte (slow local models need minutes).
    pub first_byte: Option<Duration>,
    /// Between two pieces of a streamed response.
    pub idle: Option<Duration>,
    /// The whole request, streaming included.
    pub request: Option<Duration>,
}

/// How many model turns a run may take when nothing else is configured (R25).
pub const DEFAULT_MAX_ITERATIONS: usize = 50;

/// The share of the context window at which a conversation is compacted by default.
pub const DEFAULT_COMPACT_AT: f64 = 0.8;

/// `[agent]`: the defaults of `toolhost run` and `toolhost chat`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AgentSettings {
    /// The provider to ask (a `[providers.NAME]`, or `openai` / `anthropic` from the
    /// conventional environment variables).
    pub provider: Option<String>,
    /// The model, over the provider's own.
    pub model: Option<String>,
    /// The most model turns per run (R25).
    pub max_iterations: Option<usize>,
    /// Compact the conversation past this share of the context window (0: never).
    pub compact_at: Option<f64>,
}

/// `[providers.NAME]` checked: a known `api`, an `http(s)` base URL, timeouts over zero.
pub(super) fn provider_entry(
    name: &str,
    file: FileProvider,
    origin: String,
) -> Result<ProviderEntry, (usize, String)> {
    let api = file.api.get_ref().parse::<Api>().map_err(|problem| {
        (
            file.api.span().start,
            format!("providers.{name}.api: {problem}"),
        )
    })?;
    if let Some(url) = &file.base_url {
        check_base_url(url.get_ref()).map_err(|problem| {
            (
                url.span().start,
                format!("providers.{name}.base_url {problem}"),
            )
        })?;
    }
    let seconds = |key: &str, value: Option<Spanned<u64>>| match value {
        None => Ok(None),
        Some(value) if *value.get_ref() == 0 => Err((
            value.span().start,
            format!(
                "providers.{name}.{key} of 0 seconds would stop every request: give at least 1"
            ),
        )),
        Some(value) => Ok(Some(Duration::from_secs(*value.get_ref()))),
    };
    let temperature = match file.temperature {
        None => None,
        Some(value) if (0.0..=2.0).contains(value.get_ref()) =>
        {
            #[allow(clippy::cast_possible_truncation)]
            Some(Temperature(*value.get_ref() as f32))
        }
        Some(value) => {
            return Err((
                value.span().start,
                format!(
                    "providers.{name}.temperature = {} is not a sampling temperature: give a \
                     number from 0 to 2",
                    value.get_ref()
                ),
            ));
        }
    };
    let pricing = match file.pricing {
        None => None,
        Some(pricing) => {
            let start = pricing.span().start;
            let FilePricing {
                input,
                output,
                cached_input,
                cache_write,
            } = pricing.into_inner();
            let pricing = Pricing {
                input,
                output,
                cached_input,
                cache_write,
            };
            pricing
                .check()
                .map_err(|problem| (start, format!("providers.{name}.{problem}")))?;
            Some(pricing)
        }
    };
    Ok(ProviderEntry {
        name: name.to_owned(),
        api,
        base_url: file.base_url.map(Spanned::into_inner),
        api_key_env: file.api_key_env,
        model: file.model,
        headers: file.headers,
        context_window: file.context_window,
        max_output_tokens: file.max_output_tokens,
        timeouts: ProviderTimeouts {
            connect: seconds("connect_timeout", file.connect_timeout)?,
            first_byte: seconds("first_byte_timeout", file.first_byte_timeout)?,
            idle: seconds("idle_timeout", file.idle_timeout)?,
            request: seconds("request_timeout", file.request_timeout)?,
        },
        max_retries: file.max_retries,
        prompt_cache: file.prompt_cache,
        native_tool_search: file.native_tool_search,
        temperature,
        pricing,
        origin,
    })
}

/// `[agent]` checked.
pub(super) fn agent_settings(
    file: FileAgentSettings,
    into: &mut AgentSettings,
) -> Result<Vec<(&'static str, usize)>, (usize, String)> {
    let mut set = Vec::new();
    if let Some(provider) = file.provider {
        set.push(("agent.provider", provider.span().start));
        into.provider = Some(provider.into_inner());
    }
    if let Some(model) = file.model {
        set.push(("agent.model", model.span().start));
        into.model = Some(model.into_inner());
    }
    if let Some(limit) = file.max_iterations {
        if *limit.get_ref() == 0 {
            return Err((
                limit.span().start,
                "agent.max_iterations of 0 would end every run before it starts: give at least 1"
                    .to_owned(),
            ));
        }
        set.push(("agent.max_iterations", limit.span().start));
        into.max_iterations = Some(limit.into_inner());
    }
    if let Some(share) = file.compact_at {
        if !(0.0..=1.0).contains(share.get_ref()) {
            return Err((
                share.span().start,
                format!(
                    "agent.compact_at is a share of the context window, from 0 (never compact)                      to 1, such as 0.8; {} is not one",
                    share.get_ref()
                ),
            ));
        }
        set.push(("agent.compact_at", share.span().start));
        into.compact_at = Some(share.into_inner());
    }
    Ok(set)
}

/// Why a base URL is not usable, or `Ok`.
pub fn check_base_url(url: &str) -> Result<(), String> {
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err(format!(
            "'{url}' is not a URL: write it with its scheme, as in 'http://127.0.0.1:8080/v1'"
        ));
    };
    if !matches!(scheme, "http" | "https") {
        return Err(format!("'{url}' must start with http:// or https://"));
    }
    if rest.is_empty() || rest.starts_with('/') {
        return Err(format!("'{url}' has no host"));
    }
    Ok(())
}

/// The price of `model` asked through `entry`: its `pricing`, else the built-in table when
/// the entry talks to the public Anthropic or OpenAI API (a local server may name its model
/// `gpt-4o`; it costs nothing).
pub fn provider_pricing(entry: &ProviderEntry, model: &str) -> Option<Pricing> {
    if let Some(pricing) = entry.pricing {
        return Some(pricing);
    }
    let hosted = entry.base_url.as_deref().is_none_or(|url| {
        url.starts_with("https://api.openai.com") || url.starts_with("https://api.anthropic.com")
    });
    hosted.then(|| built_in_pricing(model)).flatten()
}

/// The price of `model` asked through the provider named `provider`, as a session records
/// them: the configured `[providers.NAME]` (see [`provider_pricing`]), else, for the
/// conventional `openai` and `anthropic`, the built-in table.
pub fn pricing_for(config: &Config, provider: &str, model: &str) -> Option<Pricing> {
    match config.providers.get(provider) {
        Some(entry) => provider_pricing(entry, model),
        None if CONVENTIONAL_PROVIDERS.contains(&provider) => built_in_pricing(model),
        None => None,
    }
}

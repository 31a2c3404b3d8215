//! What each wire format supplies to the one HTTP client: its endpoint, headers and body, and
//! a decoder for its events. What the formats' own code shares is in `stream_format`.

use std::collections::BTreeSet;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use toolhost_core::ToolSpec;

use crate::config::{Api, ProviderConfig};
use crate::provider::{ModelRequest, ProviderError};
use crate::stream_format::StreamDecoder;
use crate::{anthropic, openai_chat, openai_responses};

/// The URL path appended to the configured base URL.
pub(crate) fn endpoint_path(api: Api) -> &'static str {
    match api {
        Api::OpenAiChat => "chat/completions",
        Api::OpenAiResponses => "responses",
        Api::Anthropic => "v1/messages",
    }
}

/// The headers of every request: the format's, then the configured ones (which win).
pub(crate) fn headers(config: &ProviderConfig) -> Result<HeaderMap, ProviderError> {
    let invalid = |what: &str, name: &str| {
        ProviderError::Config(format!(
            "provider `{}`: the {what} `{name}` cannot be sent in an HTTP header",
            config.name
        ))
    };
    let mut headers = HeaderMap::new();
    let mut set = |name: &str, value: &str, what: &str| -> Result<(), ProviderError> {
        let header_name =
            HeaderName::from_bytes(name.as_bytes()).map_err(|_| invalid("header name", name))?;
        let mut header_value = HeaderValue::from_str(value).map_err(|_| invalid(what, name))?;
        // Keys stay out of debug output and HTTP/2 header compression tables.
        header_value.set_sensitive(matches!(name, "authorization" | "x-api-key"));
        headers.insert(header_name, header_value);
        Ok(())
    };
    set("content-type", "application/json", "value of")?;
    set("accept", "text/event-stream", "value of")?;
    match config.api {
        Api::OpenAiChat | Api::OpenAiResponses => {
            if let Some(key) = &config.api_key {
                set("authorization", &format!("Bearer {key}"), "API key for")?;
            }
        }
        Api::Anthropic => {
            if let Some(key) = &config.api_key {
                set("x-api-key", key, "API key for")?;
            }
            set("anthropic-version", anthropic::API_VERSION, "value of")?;
        }
    }
    for (name, value) in &config.headers {
        set(name, value, "value of header")?;
    }
    Ok(headers)
}

/// The request body in the configured format, but for the tools: those are rendered once
/// per tool set ([`tools_json`]) and joined in by [`encode`].
pub(crate) fn body(config: &ProviderConfig, request: &ModelRequest) -> Value {
    match config.api {
        Api::OpenAiChat => openai_chat::request_body(config, request),
        Api::OpenAiResponses => openai_responses::request_body(config, request),
        Api::Anthropic => anthropic::request_body(config, request),
    }
}

/// The tool definitions in the configured format, as the JSON text of the `tools` array;
/// `deferred` names the tools sent deferred (only a format that defers natively is given
/// any, see [`native_deferral`]).
pub(crate) fn tools_json(
    config: &ProviderConfig,
    tools: &[ToolSpec],
    deferred: &BTreeSet<String>,
) -> String {
    let tools = match config.api {
        Api::OpenAiChat => openai_chat::tools_body(tools),
        Api::OpenAiResponses => openai_responses::tools_body(tools, deferred),
        Api::Anthropic => anthropic::tools_body(config, tools, deferred),
    };
    tools.to_string()
}

/// Whether the configured format is sent deferred tools natively, unless the configuration
/// turns it off: Anthropic's `defer_loading` and `tool_reference`, the Responses API's
/// `defer_loading` and client-executed tool search. Chat completions has none.
pub(crate) fn native_deferral(config: &ProviderConfig) -> bool {
    matches!(config.api, Api::Anthropic | Api::OpenAiResponses) && config.native_tool_search
}

/// The bytes of a request: `body` with `"tools": tools` as its last member when there are
/// tools. The tools are already JSON text, so a loop's every turn writes them without
/// rendering (or copying into a `Value`) the same definitions again.
pub(crate) fn encode(body: &Value, tools: Option<&str>) -> serde_json::Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec(body)?;
    if let Some(tools) = tools {
        // `body` is a non-empty object (it always names the model), so its text ends in `}`
        // and a member goes before it after a comma.
        debug_assert!(body.as_object().is_some_and(|members| !members.is_empty()));
        bytes.pop();
        bytes.extend_from_slice(b",\"tools\":");
        bytes.extend_from_slice(tools.as_bytes());
        bytes.push(b'}');
    }
    Ok(bytes)
}

/// The whole request body as a server reads it (the tests compare it with what they expect).
#[cfg(test)]
pub(crate) fn full_body(config: &ProviderConfig, request: &ModelRequest) -> Value {
    let tools = (!request.tools.is_empty())
        .then(|| tools_json(config, &request.tools, &request.deferred_tools));
    let bytes = encode(&body(config, request), tools.as_deref()).expect("the body encodes");
    serde_json::from_slice(&bytes).expect("the body is JSON")
}

/// A fresh decoder for one response.
pub(crate) fn decoder(api: Api) -> Box<dyn StreamDecoder> {
    match api {
        Api::OpenAiChat => Box::<openai_chat::ChatDecoder>::default(),
        Api::OpenAiResponses => Box::<openai_responses::ResponsesDecoder>::default(),
        Api::Anthropic => Box::<anthropic::MessagesDecoder>::default(),
    }
}

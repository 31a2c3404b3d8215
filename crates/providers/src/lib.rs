//! Model providers: one trait, [`ModelProvider`], and three wire formats — OpenAI chat
//! completions (what llama.cpp, vLLM, Ollama, LM Studio, OpenRouter and most gateways speak),
//! the OpenAI Responses API, and Anthropic messages.
//!
//! A provider turns a [`ModelRequest`] (system prompt, the conversation as
//! [`toolhost_core::conversation::Message`]s, the tools' specs) into one streamed response:
//! it reports [`StreamEvent`]s while the response arrives (text, reasoning, tool-call deltas,
//! retries) and returns the whole [`AssistantMessage`] at the end, with its usage. Retries of
//! rate limits, overloads and dropped connections happen inside; the caller sees them only as
//! events.
//!
//! ```no_run
//! # async fn example() -> Result<(), toolhost_providers::ProviderError> {
//! use toolhost_core::conversation::Message;
//! use toolhost_providers::{ModelRequest, ProviderConfig, complete, connect};
//!
//! let config = ProviderConfig::anthropic("claude-sonnet-4-5").with_api_key("sk-ant-…");
//! let provider = connect(config)?;
//! let request = ModelRequest {
//!     system: "Answer in one word.".into(),
//!     messages: vec![Message::user("What colour is the sky?")],
//!     ..ModelRequest::default()
//! };
//! let answer = complete(provider.as_ref(), &request, Default::default()).await?;
//! println!("{} ({} tokens out)", answer.text(), answer.usage.output_tokens);
//! # Ok(()) }
//! ```
//!
//! Layout: [`config`] (what to reach and how), `provider` (the contract), `http` (the one
//! client: timeouts, retries, cancellation), `sse` (the event-stream decoder), `accumulate`
//! (deltas into a message), and one module per wire format: `openai_chat`,
//! `openai_responses`, [`anthropic`]; and [`native_search`], a provider's own web search as
//! the first tier of the WebSearch tool (the tool and its trait are `toolhost-tools`').

use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use toolhost_core::conversation::AssistantMessage;

mod accumulate;
pub mod anthropic;
pub mod config;
mod http;
pub mod native_search;
mod openai_chat;
mod openai_responses;
mod provider;
mod retry;
mod sse;
mod stream_format;
mod wire;

#[cfg(test)]
mod replay;

pub use config::{
    ANTHROPIC_BASE_URL, Api, DEFAULT_ANTHROPIC_MAX_OUTPUT_TOKENS, OPENAI_BASE_URL, ProviderConfig,
    RetryPolicy, Timeouts,
};
pub use provider::{
    DeferredLoading, EventSink, ModelProvider, ModelRequest, ProviderError, StreamEvent,
};

/// A provider for `config`, after checking it: a bad base URL, an unusable header or key, or
/// a missing model is a [`ProviderError::Config`] naming the provider and the value.
pub fn connect(config: ProviderConfig) -> Result<Arc<dyn ModelProvider>, ProviderError> {
    Ok(Arc::new(http::HttpProvider::new(config)?))
}

/// An [`EventSink`] that drops every event.
pub fn no_events() -> EventSink {
    Arc::new(|_| {})
}

/// One request whose events nobody watches (summaries, titles): the whole response, retried
/// like any other.
pub async fn complete(
    provider: &dyn ModelProvider,
    request: &ModelRequest,
    cancel: CancellationToken,
) -> Result<AssistantMessage, ProviderError> {
    provider.stream(request, no_events(), cancel).await
}

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

mod provider;

pub use provider::{EventSink, ModelProvider, ModelRequest, ProviderError, StreamEvent};

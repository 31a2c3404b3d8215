//! The provider contract: what the agent loop asks of a model, and what it hears back.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use toolhost_config::ReasoningEffort;
use toolhost_core::ToolSpec;
use toolhost_core::conversation::{AssistantMessage, Message};

/// Everything one model request needs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModelRequest {
    /// The system prompt.
    pub system: String,
    /// The conversation so far, oldest first.
    pub messages: Vec<Message>,
    /// The tools the model may call, in the order they are offered. Shared, so that a loop
    /// sends the same set every turn without copying it, and the provider renders it once
    /// (its definitions are cached by this `Arc`'s identity).
    pub tools: Arc<[ToolSpec]>,
    /// Of `tools`, the ones sent deferred, for a provider whose
    /// [`ModelProvider::deferred_loading`] is [`DeferredLoading::Native`]: flagged so that
    /// the model sees only their names until a tool result's
    /// [`ContentBlock::ToolReference`](toolhost_core::ContentBlock::ToolReference) loads
    /// them. Empty when nothing is deferred, or the loop injects what is loaded instead.
    /// Shared like `tools`, and part of the same rendering.
    pub deferred_tools: Arc<BTreeSet<String>>,
    /// The most tokens the answer may have; `None` uses the provider's configured default.
    pub max_output_tokens: Option<u32>,
    /// How hard the model should think (a sub-agent's `effort`); `None` sends nothing, so
    /// the model's own default applies.
    pub reasoning_effort: Option<ReasoningEffort>,
}

/// What a provider reports while a response streams in.
#[derive(Clone, Debug, PartialEq)]
pub enum StreamEvent {
    /// The provider sent the request (once per attempt).
    RequestSent {
        /// 1 for the first attempt, then 2, 3, …
        attempt: u32,
    },
    /// A piece of answer text.
    TextDelta(String),
    /// A piece of reasoning.
    ReasoningDelta(String),
    /// A tool call began; its name may still be empty when a provider sends it later.
    ToolCallStart {
        /// Position of the call in the response.
        index: usize,
        /// The call's id.
        id: String,
        /// The tool's name, when already known.
        name: String,
    },
    /// A piece of a tool call's arguments.
    ToolCallDelta {
        /// Position of the call in the response.
        index: usize,
        /// The new piece of JSON text.
        arguments: String,
    },
    /// A request failed in a way worth retrying; the provider waits `delay`, then tries again.
    RetryScheduled {
        /// The attempt that will follow (2 for the first retry).
        attempt: u32,
        /// How long it waits first (the server's `retry-after` when it gave one).
        delay: Duration,
        /// What went wrong, for a person to read.
        reason: String,
    },
    /// A stream broke after it had begun: everything streamed so far for this response is void
    /// and will arrive again from the start.
    Restarted,
}

/// How a provider can be sent tools that are deferred (see `toolhost_core::deferral`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DeferredLoading {
    /// The API has no deferred loading: a request offers only the tools not deferred and
    /// those loaded so far, appended in the order they were loaded (the tools list grows, and
    /// a provider's cache keeps only the part before the first tool appended).
    #[default]
    Injected,
    /// The API defers tools itself: every request offers every tool, the deferred ones
    /// flagged ([`ModelRequest::deferred_tools`]), and a tool result's tool references load
    /// them — the tools list stays the same, byte for byte, and so does its cache (Anthropic's
    /// `defer_loading` and `tool_reference`; the Responses API's `defer_loading` and
    /// `tool_search_output`).
    Native,
}

/// Receives [`StreamEvent`]s; called on the task that runs the request.
pub type EventSink = Arc<dyn Fn(StreamEvent) + Send + Sync>;

/// Why a model request failed for good (after its retries).
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    /// The request was cancelled.
    #[error("the model request was cancelled")]
    Cancelled,
    /// The server answered with an error status.
    #[error("{provider} answered {status}: {message}")]
    Status {
        /// The provider's name.
        provider: String,
        /// The HTTP status.
        status: u16,
        /// The error the server gave, or the start of its body.
        message: String,
    },
    /// The server reported an error inside a stream it had begun (an `error` event).
    #[error("{provider} reported an error: {message}")]
    Server {
        /// The provider's name.
        provider: String,
        /// The error the server gave, with its type when it named one.
        message: String,
    },
    /// The server could not be reached, or the connection broke.
    #[error("{provider}: {message}")]
    Connection {
        /// The provider's name.
        provider: String,
        /// What happened.
        message: String,
    },
    /// A named timeout ran out.
    #[error("{provider}: {which} timeout of {after:?} ran out")]
    Timeout {
        /// The provider's name.
        provider: String,
        /// Which timeout (`connect`, `first byte`, `idle`, `request`).
        which: &'static str,
        /// Its length.
        after: Duration,
    },
    /// The response did not follow the wire format.
    #[error("{provider} sent a response toolhost cannot read: {message}")]
    Protocol {
        /// The provider's name.
        provider: String,
        /// What was wrong.
        message: String,
    },
    /// The provider is not configured right (no key, bad URL).
    #[error("{0}")]
    Config(String),
}

/// A model behind some wire format.
#[async_trait::async_trait]
pub trait ModelProvider: Send + Sync {
    /// The provider's name as configured (`openai`, `anthropic`, `local`).
    fn name(&self) -> &str;

    /// The model it asks.
    fn model(&self) -> &str;

    /// The model's context window in tokens, when known.
    fn context_window(&self) -> Option<u64> {
        None
    }

    /// How this provider is sent deferred tools.
    fn deferred_loading(&self) -> DeferredLoading {
        DeferredLoading::Injected
    }

    /// Sends `request` and streams the response, retrying what is worth retrying; returns the
    /// whole response. Stops with [`ProviderError::Cancelled`] soon after `cancel` fires.
    async fn stream(
        &self,
        request: &ModelRequest,
        events: EventSink,
        cancel: CancellationToken,
    ) -> Result<AssistantMessage, ProviderError>;
}

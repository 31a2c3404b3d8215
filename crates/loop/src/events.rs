//! What the loop tells whoever watches it: one stream of typed, UI-neutral events.
//!
//! The line mode, the full-screen UI, `--output-format stream-json` and sub-agent progress are
//! all readers of this one stream; none of them reaches into the loop.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use toolhost_core::conversation::{AssistantMessage, ToolCall, Usage};
use toolhost_core::{ToolCallResult, ToolUpdate};

/// One thing that happened in a run, in the order it happened.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    /// The run began.
    RunStart {
        /// The session the run belongs to.
        session_id: String,
        /// The provider's name.
        provider: String,
        /// The model asked.
        model: String,
        /// The tools offered, in order.
        tools: Vec<String>,
    },
    /// A model turn began (1 for the first).
    TurnStart {
        /// The turn's number.
        turn: usize,
    },
    /// A piece of answer text.
    TextDelta {
        /// The new text.
        text: String,
    },
    /// A piece of reasoning.
    ReasoningDelta {
        /// The new text.
        text: String,
    },
    /// The response streamed so far is void; it will arrive again from the start.
    ResponseRestarted,
    /// A model request failed and will be retried (`auto_retry_start`).
    RetryStart {
        /// The attempt that follows.
        attempt: u32,
        /// How long the provider waits first.
        #[serde(rename = "delay_ms", serialize_with = "millis")]
        delay: Duration,
        /// What went wrong.
        reason: String,
    },
    /// A retried request got its answer (`auto_retry_end`).
    RetryEnd {
        /// The attempt that succeeded.
        attempt: u32,
    },
    /// The model's whole response.
    AssistantMessage {
        /// The response, with its usage.
        message: AssistantMessage,
    },
    /// A tool call is about to run.
    ToolCallStart {
        /// The call as the model wrote it.
        call: ToolCall,
    },
    /// A running tool streamed a partial result.
    ToolCallUpdate {
        /// The call's id.
        call_id: String,
        /// The partial result.
        update: ToolUpdate,
    },
    /// A tool call finished (or was refused).
    ToolCallEnd {
        /// The result the model will read.
        result: ToolCallResult,
    },
    /// The conversation is being compacted (`auto_compaction_start` when automatic).
    CompactionStart {
        /// `auto` (the conversation neared the context window) or `manual` (`/compact`).
        trigger: &'static str,
        /// The conversation's estimated size, in tokens.
        tokens_before: u64,
    },
    /// Compaction ended (`auto_compaction_end`): the older part is now one summary.
    CompactionEnd {
        /// How many recent messages stayed verbatim (none when it failed).
        kept_messages: usize,
        /// The estimated size afterwards, in tokens.
        tokens_after: u64,
        /// Why it failed, if it did; the conversation then goes on as it was.
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// Something happened in a sub-agent's run (`spawn_agent`, `SessionsSpawn`): its own
    /// event, tagged with the run it belongs to, so that a reader shows a child's progress.
    SubAgent {
        /// The sub-agent run (`run-1`).
        run_id: String,
        /// The agent definition it runs.
        agent: String,
        /// The parent's tool call that started it.
        parent_call_id: String,
        /// The child's event.
        event: Box<AgentEvent>,
    },
    /// The run ended.
    RunEnd {
        /// How.
        outcome: RunOutcome,
        /// Model turns taken.
        turns: usize,
        /// Tokens spent over the whole run.
        usage: Usage,
    },
}

fn millis<S: serde::Serializer>(delay: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_u64(u64::try_from(delay.as_millis()).unwrap_or(u64::MAX))
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RunOutcome {
    /// The model answered in text without asking for tools.
    Answered {
        /// The answer.
        text: String,
    },
    /// A tool ended the run (`SessionsYield`-style: it called `ctx.abort()`); its result is
    /// the run's message.
    Stopped {
        /// The tool that stopped the run.
        tool: String,
        /// Its result text.
        message: String,
    },
    /// The model kept calling tools until the iteration limit (R25).
    MaxIterations {
        /// The limit.
        limit: usize,
    },
    /// Somebody cancelled the run.
    Cancelled,
    /// The provider failed for good (after its retries).
    Failed {
        /// What went wrong.
        error: String,
    },
}

impl RunOutcome {
    /// Whether the run ended as it should (an answer or a tool's stop).
    pub fn is_success(&self) -> bool {
        matches!(self, Self::Answered { .. } | Self::Stopped { .. })
    }

    /// The text a script wants from the run: the answer, the stopping tool's message, or what
    /// went wrong.
    pub fn text(&self) -> String {
        match self {
            Self::Answered { text } => text.clone(),
            Self::Stopped { message, .. } => message.clone(),
            Self::MaxIterations { limit } => format!(
                "the model was still calling tools after {limit} turns (max_iterations); \
                 raise [agent] max_iterations or --max-iterations to let it go on"
            ),
            Self::Cancelled => "the run was cancelled".to_owned(),
            Self::Failed { error } => error.clone(),
        }
    }
}

/// Receives the loop's events, on the loop's task: keep it quick (send to a channel).
pub type AgentEventSink = Arc<dyn Fn(AgentEvent) + Send + Sync>;

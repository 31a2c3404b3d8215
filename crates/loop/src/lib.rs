//! The agent loop: a model turn, the tool calls it asks for through the one pipeline, their
//! results back to the model, and again — until the model answers in text, a tool ends the
//! run, the iteration limit is reached, or somebody cancels.
//!
//! The loop holds no UI: everything it does is told as [`AgentEvent`]s to one sink. It is
//! given its registry, provider, hooks and extensions ready-made (`toolhost-agent` assembles
//! them and re-exports this crate as `toolhost_agent::agent_loop`), so it knows no tool set,
//! no sub-agent and no face.

pub mod compaction;
mod deferred;
mod events;
mod extension_events;
mod inbox;
mod message_updates;
mod nudges;
mod repeats;
mod todo_reminder;
mod tool_batch;
mod transcript;

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use toolhost_core::conversation::{AssistantMessage, Message, ToolResultMessage, Usage};
use toolhost_core::{ContentBlock, SessionEvent, SessionInfo, ToolRegistry, ToolSpec};
use toolhost_providers::{EventSink, ModelProvider, ModelRequest, StreamEvent};
use toolhost_script::{CompactRequest, CompactVerdict, ExtensionSession};

pub use events::{AgentEvent, AgentEventSink, RunOutcome};
pub use inbox::Inbox;
pub use nudges::{DESCRIBED_CALL_NOTE, ECHOED_RESULT_NOTE, IMITATED_TOOL_NOTE};
pub use repeats::{REPEATED_CALL_NOTE, REPEATED_CALL_NUDGE};
pub use transcript::{Recorded, Transcript};

use toolhost_config::providers::{DEFAULT_COMPACT_AT, DEFAULT_MAX_ITERATIONS};

use compaction::{
    Compacted, CompactionError, CompactionPolicy, DEFAULT_CONTEXT_WINDOW, estimate_tokens,
};
use deferred::Deferral;
use extension_events::LoopExtensions;
use nudges::{Nudge, Nudges};
use repeats::RepeatedCalls;
use tool_batch::run_tool_calls;
use toolhost_hooks::PreCompactHooks;

/// What a run has so far.
struct RunState<'a> {
    messages: Vec<Message>,
    transcript: Option<&'a dyn Transcript>,
    usage: Usage,
    turns: usize,
    model_time: Duration,
    /// The conversation's size in tokens as the provider last counted it, and how many
    /// messages that count covered.
    measured: Option<(u64, usize)>,
    /// The system prompt for this run, when an extension changed it (`before_agent_start`).
    system: Option<String>,
}

impl RunState<'_> {
    /// Adds `message` to the conversation, recorded first.
    fn push(&mut self, message: Message, details: Option<&Value>) -> Result<(), RunOutcome> {
        if let Some(transcript) = self.transcript {
            transcript
                .record(Recorded::Message {
                    message: &message,
                    details,
                })
                .map_err(|error| RunOutcome::Failed {
                    error: format!("the session could not be saved: {error}"),
                })?;
        }
        self.messages.push(message);
        Ok(())
    }
}

/// An agent: a model, the tools it is offered, and how it is told to work.
pub struct AgentLoop {
    provider: Arc<dyn ModelProvider>,
    registry: Arc<ToolRegistry>,
    /// The registry's specs, taken once: every turn offers this same set (less the deferred
    /// tools not loaded yet), so the provider renders it once per loaded set.
    tools: Arc<[ToolSpec]>,
    deferral: Deferral,
    system_prompt: String,
    max_iterations: usize,
    max_output_tokens: Option<u32>,
    reasoning_effort: Option<toolhost_config::ReasoningEffort>,
    session: Arc<SessionInfo>,
    transcript: Option<Arc<dyn Transcript>>,
    compaction: CompactionPolicy,
    /// `[[hooks.PreCompact]]`: may add instructions to every compaction.
    pre_compact: Option<Arc<PreCompactHooks>>,
    inbox: Option<Arc<dyn Inbox>>,
    /// Whether an answer waits for the background work still expected to report (so that a
    /// headless run does not end before its background children do).
    waits_for_inbox: bool,
    /// Turns without `TodoWrite`, while the todo list has open tasks, before a reminder (0:
    /// none).
    todo_reminder_turns: usize,
    /// pi extensions' lifecycle events.
    extensions: LoopExtensions,
}

/// What a run produced.
#[derive(Clone, Debug)]
pub struct RunReport {
    /// How it ended.
    pub outcome: RunOutcome,
    /// The whole conversation afterwards: what it was given, then every response and result.
    pub messages: Vec<Message>,
    /// Model turns taken.
    pub turns: usize,
    /// Tokens spent.
    pub usage: Usage,
    /// Wall time of the run.
    pub duration: Duration,
    /// Time spent waiting for the model.
    pub model_time: Duration,
}

impl RunReport {
    /// What a turn that never asked the model reports: the conversation as it was, answered
    /// with nothing (an extension's `input` handler or command dealt with it), or failed with
    /// `error`.
    pub fn idle(messages: &[Message], error: Option<String>) -> Self {
        Self {
            outcome: match error {
                Some(error) => RunOutcome::Failed { error },
                None => RunOutcome::Answered {
                    text: String::new(),
                },
            },
            messages: messages.to_vec(),
            turns: 0,
            usage: Usage::default(),
            duration: Duration::ZERO,
            model_time: Duration::ZERO,
        }
    }
}

impl AgentLoop {
    /// An agent asking `provider`, offered the tools of `registry` (already filtered for the
    /// permission mode and the agent's tool list), with this system prompt.
    pub fn new(
        provider: Arc<dyn ModelProvider>,
        registry: Arc<ToolRegistry>,
        system_prompt: impl Into<String>,
    ) -> Self {
        let session = SessionInfo {
            session_id: None,
            model: Some(provider.model().to_owned()),
            state: toolhost_core::SessionState::default(),
        };
        let tools = registry.specs().into();
        let compaction = CompactionPolicy {
            context_window: provider.context_window().unwrap_or(DEFAULT_CONTEXT_WINDOW),
            compact_at: DEFAULT_COMPACT_AT,
        };
        Self {
            provider,
            registry,
            tools,
            deferral: Deferral::default(),
            system_prompt: system_prompt.into(),
            max_iterations: DEFAULT_MAX_ITERATIONS,
            max_output_tokens: None,
            reasoning_effort: None,
            session: Arc::new(session),
            transcript: None,
            compaction,
            pre_compact: None,
            inbox: None,
            waits_for_inbox: true,
            todo_reminder_turns: todo_reminder::DEFAULT_TODO_REMINDER_TURNS,
            extensions: LoopExtensions::default(),
        }
    }

    /// Reminds the model of its open todo list after this many turns without `TodoWrite`
    /// (0: never), firing the `todo_reminder` session event.
    #[must_use]
    pub fn todo_reminder_turns(mut self, turns: usize) -> Self {
        self.todo_reminder_turns = turns;
        self
    }

    /// Tells these pi extensions the loop's lifecycle events (`before_agent_start`,
    /// `agent_start`, `turn_start`, `context`, …) and delivers the messages they queue.
    #[must_use]
    pub fn extensions(mut self, session: Arc<ExtensionSession>) -> Self {
        self.extensions = LoopExtensions::new(session);
        self
    }

    /// Defers tools once their definitions pass `threshold` tokens (`None`: a tenth of the
    /// context window): the built-ins and the tools `always_loaded` names are sent in full,
    /// the others by name in `tool_search`'s description until it loads them.
    #[must_use]
    pub fn defer_tools(mut self, threshold: Option<u64>, always_loaded: Vec<String>) -> Self {
        self.deferral = Deferral::new(threshold, always_loaded);
        self.plan_deferral();
        self
    }

    /// Runs `hooks` before every compaction; what they print joins its instructions.
    #[must_use]
    pub fn pre_compact_hooks(mut self, hooks: Arc<PreCompactHooks>) -> Self {
        self.pre_compact = Some(hooks);
        self
    }

    /// Adds what arrives in `inbox` to the conversation before each model request; when the
    /// model answers while a message is still expected, the run waits for it and goes on
    /// (unless [`Self::set_waits_for_inbox`] says not to).
    #[must_use]
    pub fn inbox(mut self, inbox: Arc<dyn Inbox>) -> Self {
        self.inbox = Some(inbox);
        self
    }

    /// Whether an answer waits for the messages still expected in the inbox (default: yes).
    /// An interactive front end that shows them at the next turn can say no.
    pub fn set_waits_for_inbox(&mut self, waits: bool) {
        self.waits_for_inbox = waits;
    }

    /// At most this many model turns per run.
    #[must_use]
    pub fn max_iterations(mut self, limit: usize) -> Self {
        self.max_iterations = limit.max(1);
        self
    }

    /// At most this many tokens per response (the provider's default otherwise).
    #[must_use]
    pub fn max_output_tokens(mut self, tokens: Option<u32>) -> Self {
        self.max_output_tokens = tokens;
        self
    }

    /// How hard the model thinks (a sub-agent's `effort`; the provider's default otherwise).
    #[must_use]
    pub fn reasoning_effort(mut self, effort: Option<toolhost_config::ReasoningEffort>) -> Self {
        self.reasoning_effort = effort;
        self
    }

    /// The session the calls belong to (tools and approvers see its id).
    #[must_use]
    pub fn session_id(mut self, id: impl Into<String>) -> Self {
        self.session = Arc::new(SessionInfo {
            session_id: Some(id.into()),
            model: self.session.model.clone(),
            state: self.session.state.clone(),
        });
        self
    }

    /// Keeps every message the run adds in `transcript` before the next model request.
    #[must_use]
    pub fn transcript(mut self, transcript: Arc<dyn Transcript>) -> Self {
        self.transcript = Some(transcript);
        self
    }

    /// Compacts the conversation past this share of the context window (0: never), instead
    /// of [`DEFAULT_COMPACT_AT`].
    #[must_use]
    pub fn compact_at(mut self, share: f64) -> Self {
        self.compaction.compact_at = share;
        self
    }

    /// When the conversation is compacted.
    pub fn compaction_policy(&self) -> CompactionPolicy {
        self.compaction
    }

    /// Compacts `messages` now (`/compact [instructions]`), recorded in the transcript: the
    /// conversation to go on with, or why it could not be compacted (it is unchanged then).
    pub async fn compact_now(
        &self,
        messages: &[Message],
        instructions: Option<&str>,
        events: &AgentEventSink,
        cancel: CancellationToken,
    ) -> Result<Compacted, CompactionError> {
        let request = CompactRequest::new(instructions.map(str::to_owned));
        self.compact(messages, "manual", Some(&request), events, cancel)
            .await
    }

    async fn compact(
        &self,
        messages: &[Message],
        trigger: &'static str,
        request: Option<&CompactRequest>,
        events: &AgentEventSink,
        cancel: CancellationToken,
    ) -> Result<Compacted, CompactionError> {
        let instructions = request.and_then(|request| request.instructions.as_deref());
        let automatic = trigger == "auto";
        let tokens_before = estimate_tokens(messages);
        let given = match self
            .extensions
            .before_compact(instructions, tokens_before)
            .await
        {
            CompactVerdict::Cancel(why) => {
                let cancelled = Err(CompactionError::Cancelled(why));
                self.extensions.compacted(request, &cancelled, false).await;
                return cancelled;
            }
            CompactVerdict::Summary(summary) => Some(summary),
            CompactVerdict::Proceed => None,
        };
        events(AgentEvent::CompactionStart {
            trigger,
            tokens_before,
        });
        if automatic {
            self.session_event(SessionEvent::AutoCompactionStart).await;
        }
        let mut compacted = match &given {
            Some(summary) => compaction::compact_with_summary(
                &self.registry,
                messages,
                &self.compaction,
                summary,
            ),
            None => {
                let hooked = match &self.pre_compact {
                    Some(hooks) => {
                        hooks
                            .instructions(trigger, instructions, self.session.session_id.as_deref())
                            .await
                    }
                    None => instructions.map(str::to_owned),
                };
                compaction::compact(
                    &*self.provider,
                    &self.registry,
                    messages,
                    &self.compaction,
                    hooked.as_deref(),
                    cancel,
                )
                .await
            }
        };
        if let (Ok(done), Some(transcript)) = (&compacted, &self.transcript) {
            let recorded = transcript.record(Recorded::Compaction {
                summary: &done.summary,
                kept_messages: done.kept_messages,
                tokens_before: done.tokens_before,
                files_read: &done.files_read,
                files_modified: &done.files_modified,
                usage: done.usage,
            });
            if let Err(error) = recorded {
                compacted = Err(CompactionError::NotSaved(error));
            }
        }
        events(match &compacted {
            Ok(done) => AgentEvent::CompactionEnd {
                kept_messages: done.kept_messages,
                tokens_after: estimate_tokens(&done.messages),
                error: None,
            },
            Err(error) => AgentEvent::CompactionEnd {
                kept_messages: 0,
                tokens_after: estimate_tokens(messages),
                error: Some(error.to_string()),
            },
        });
        if automatic {
            self.session_event(SessionEvent::AutoCompactionEnd).await;
        }
        self.extensions
            .compacted(request, &compacted, given.is_some())
            .await;
        compacted
    }

    /// From now on, keeps the run's messages in `transcript` (or nowhere).
    pub fn set_transcript(&mut self, transcript: Option<Arc<dyn Transcript>>) {
        self.transcript = transcript;
    }

    /// From now on, asks `provider` (`/model`). Deferral is planned again: the budget follows
    /// the context window, and how deferred tools are sent follows the provider.
    pub fn set_provider(&mut self, provider: Arc<dyn ModelProvider>) {
        self.compaction.context_window =
            provider.context_window().unwrap_or(DEFAULT_CONTEXT_WINDOW);
        self.session = Arc::new(SessionInfo {
            session_id: self.session.session_id.clone(),
            model: Some(provider.model().to_owned()),
            state: self.session.state.clone(),
        });
        self.provider = provider;
        self.plan_deferral();
    }

    /// From now on, offers the tools of `registry` (`/mode` changes what a mode offers).
    pub fn set_registry(&mut self, registry: Arc<ToolRegistry>) {
        self.registry = registry;
        self.plan_deferral();
    }

    /// Decides what to defer of the registry for the provider, and takes the specs to offer.
    fn plan_deferral(&mut self) {
        self.tools = self.deferral.apply(
            &self.registry,
            self.compaction.context_window,
            self.provider.deferred_loading(),
        );
    }

    /// From now on, the calls belong to session `id`.
    pub fn set_session_id(&mut self, id: impl Into<String>) {
        self.session = Arc::new(SessionInfo {
            session_id: Some(id.into()),
            model: self.session.model.clone(),
            state: self.session.state.clone(),
        });
    }

    /// The session the calls belong to: its id, model and state (what it has read).
    pub fn session(&self) -> &Arc<SessionInfo> {
        &self.session
    }

    /// The tools offered.
    pub fn registry(&self) -> &Arc<ToolRegistry> {
        &self.registry
    }

    /// The provider asked.
    pub fn provider(&self) -> &Arc<dyn ModelProvider> {
        &self.provider
    }

    /// The system prompt.
    pub fn system_prompt(&self) -> &str {
        &self.system_prompt
    }

    /// Tells the tools a session lifecycle event (R4: `start`, `shutdown`, …); a tool that
    /// fails to listen is logged, never fatal.
    pub async fn session_event(&self, event: SessionEvent) {
        self.session_event_with(event, Value::Object(serde_json::Map::new()))
            .await;
    }

    /// [`Self::session_event`], with what pi's extensions hear of it besides its name
    /// (`{ reason: "new" }` for a `switch` to a new session).
    pub async fn session_event_with(&self, event: SessionEvent, details: Value) {
        self.registry
            .dispatch_session_event(&event, &self.session)
            .await;
        self.extensions.session_event(&event, &details).await;
    }

    /// Runs the conversation `messages` (ending with the user's message) until it ends. The
    /// given messages are the caller's to record; the run records what it adds.
    pub async fn run(
        &self,
        messages: Vec<Message>,
        events: AgentEventSink,
        cancel: CancellationToken,
    ) -> RunReport {
        let started = Instant::now();
        todo_reminder::restore(&self.session.state, &messages);
        let mut run = RunState {
            messages,
            transcript: self.transcript.as_deref(),
            usage: Usage::default(),
            turns: 0,
            model_time: Duration::ZERO,
            measured: None,
            system: None,
        };
        run.system = self
            .extensions
            .run_start(&run.messages, &self.system_prompt)
            .await;
        events(AgentEvent::RunStart {
            session_id: self.session.session_id.clone().unwrap_or_default(),
            provider: self.provider.name().to_owned(),
            model: self.provider.model().to_owned(),
            tools: self.registry.names(),
        });
        let outcome = match self.turns(&mut run, &events, &cancel).await {
            Ok(outcome) | Err(outcome) => outcome,
        };
        self.extensions.run_end(&run.messages).await;
        events(AgentEvent::RunEnd {
            outcome: outcome.clone(),
            turns: run.turns,
            usage: run.usage,
        });
        RunReport {
            outcome,
            messages: run.messages,
            turns: run.turns,
            usage: run.usage,
            duration: started.elapsed(),
            model_time: run.model_time,
        }
    }

    /// Model turns until the run ends; `Err` is an end too (a failure to record, mostly),
    /// so that `?` can end it.
    async fn turns(
        &self,
        run: &mut RunState<'_>,
        events: &AgentEventSink,
        cancel: &CancellationToken,
    ) -> Result<RunOutcome, RunOutcome> {
        let mut repeats = RepeatedCalls::default();
        let mut nudges = Nudges::default();
        loop {
            if cancel.is_cancelled() {
                return Ok(RunOutcome::Cancelled);
            }
            self.deliver_inbox(run)?;
            self.compact_if_full(run, events, cancel).await;
            run.turns += 1;
            events(AgentEvent::TurnStart { turn: run.turns });
            self.extensions.turn_start(run.turns).await;
            let asked = Instant::now();
            let sent = self.extensions.context(&run.messages).await;
            let system = run.system.as_deref().unwrap_or(&self.system_prompt);
            let response = self
                .ask_model(
                    sent.as_deref().unwrap_or(&run.messages),
                    system,
                    events,
                    cancel,
                )
                .await;
            run.model_time += asked.elapsed();
            let response = response?;
            run.usage += response.usage;
            run.measured = Some((
                response.usage.input_tokens + response.usage.output_tokens,
                run.messages.len() + 1,
            ));
            events(AgentEvent::AssistantMessage {
                message: response.clone(),
            });
            self.extensions.assistant_message(&response).await;
            let calls: Vec<_> = response.tool_calls().cloned().collect();
            let text = response.text();
            if calls.is_empty()
                && run.turns < self.max_iterations
                && let Some(nudge) = nudges.for_answer(&text, &run.messages, |text| {
                    self.names_an_offered_tool(text)
                })
            {
                // A dropped reply is not kept in the conversation: a small model that reads
                // its own imitation or echo back repeats it, note or not (Qwen2.5-Coder 1.5B
                // did, even sampled at 0.6); without it, it makes the call.
                let note = match nudge {
                    Nudge::Drop(note) => note,
                    Nudge::Keep(note) => {
                        run.push(Message::Assistant(response), None)?;
                        note
                    }
                };
                run.push(Message::user(note), None)?;
                continue;
            }
            run.push(Message::Assistant(response), None)?;
            if calls.is_empty() {
                let answer = run.messages.last().cloned();
                if let Some(answer) = &answer {
                    self.extensions.turn_end(run.turns, answer, &[]).await;
                }
                if run.turns < self.max_iterations && self.wait_for_inbox(cancel).await? {
                    continue;
                }
                return Ok(RunOutcome::Answered { text });
            }
            nudges.called_a_tool();
            if run.turns >= self.max_iterations {
                // Every call needs a result, or the conversation cannot go on later.
                for call in &calls {
                    let result = self.registry.reject_call(
                        &call.id,
                        &call.name,
                        format!("not run: the run reached its limit of {} turns", run.turns),
                    );
                    run.push(Message::ToolResult(ToolResultMessage::from(&result)), None)?;
                }
                return Ok(RunOutcome::MaxIterations {
                    limit: self.max_iterations,
                });
            }
            let (sink, updates) = self.extensions.with_updates(&calls, events);
            let calls_run = async move {
                let finished =
                    run_tool_calls(&self.registry, &calls, &self.session, &sink, cancel).await;
                // Dropping the sink ends `tell_updates` once it told the last update.
                drop(sink);
                (finished, calls)
            };
            let ((finished, calls), ()) =
                futures::join!(calls_run, self.extensions.tell_updates(updates));
            let stop =
                finished
                    .iter()
                    .find(|done| done.stopped_run)
                    .map(|done| RunOutcome::Stopped {
                        tool: done.result.tool_name.clone(),
                        message: done.result.text(),
                    });
            let mut reminder =
                todo_reminder::after_turn(&self.session.state, &calls, self.todo_reminder_turns);
            if reminder.is_some() {
                self.session_event(SessionEvent::TodoReminder).await;
            }
            let last = calls.len().saturating_sub(1);
            let answered_at = run.messages.len();
            let mut repeated = false;
            for (index, (call, done)) in calls.iter().zip(&finished).enumerate() {
                let mut result = ToolResultMessage::from(&done.result);
                // A duplicate in the same response already says so.
                if done.duplicate_of.is_none() {
                    repeated |= repeats.note(call, &mut result);
                }
                // The reminder rides on the turn's last result, as Claude Code's do.
                if index == last
                    && let Some(note) = reminder.take()
                {
                    result.content.push(ContentBlock::text(note));
                }
                run.push(Message::ToolResult(result), done.result.details.as_ref())?;
            }
            if let Some(message) = run.messages.get(answered_at.wrapping_sub(1)) {
                self.extensions
                    .turn_end(run.turns, message, &run.messages[answered_at..])
                    .await;
            }
            // After the turn's results (and what extensions heard of them), as the user.
            if repeated && stop.is_none() {
                run.push(Message::user(REPEATED_CALL_NUDGE), None)?;
            }
            if cancel.is_cancelled() {
                return Ok(RunOutcome::Cancelled);
            }
            if let Some(stop) = stop {
                return Ok(stop);
            }
        }
    }

    /// Adds the inbox's messages to the conversation, recorded.
    fn deliver_inbox(&self, run: &mut RunState<'_>) -> Result<(), RunOutcome> {
        if let Some(inbox) = &self.inbox {
            for text in inbox.take() {
                run.push(Message::user(text), None)?;
            }
        }
        for text in self.extensions.queued() {
            run.push(Message::user(text), None)?;
        }
        Ok(())
    }

    /// After an answer: when the inbox still expects a message (a background child runs),
    /// waits for it; `true` when the run should go on with a turn that reads it.
    async fn wait_for_inbox(&self, cancel: &CancellationToken) -> Result<bool, RunOutcome> {
        let Some(inbox) = self.inbox.as_ref().filter(|_| self.waits_for_inbox) else {
            return Ok(false);
        };
        if !inbox.outstanding() {
            return Ok(false);
        }
        tokio::select! {
            biased;
            () = cancel.cancelled() => Err(RunOutcome::Cancelled),
            () = inbox.wait() => Ok(inbox.outstanding()),
        }
    }

    /// Whether `text` names one of the offered tools as a word of its own ("call the Grep
    /// function"): the tools' own names, from the registry, not a list.
    fn names_an_offered_tool(&self, text: &str) -> bool {
        let words: std::collections::HashSet<&str> = text
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|word| !word.is_empty())
            .collect();
        self.tools
            .iter()
            .any(|spec| words.contains(spec.name.as_str()))
    }

    /// Compacts the conversation when it has passed the policy's share of the window: its
    /// size is the last response's tokens (what the provider counted), plus an estimate of
    /// the messages since. A failed compaction is told and the run goes on.
    async fn compact_if_full(
        &self,
        run: &mut RunState<'_>,
        events: &AgentEventSink,
        cancel: &CancellationToken,
    ) {
        if let Some(request) = self.extensions.compact_request() {
            // An extension's `ctx.compact()`: now, whatever the size.
            let compacted = self
                .compact(
                    &run.messages,
                    "manual",
                    Some(&request),
                    events,
                    cancel.clone(),
                )
                .await;
            if let Ok(done) = compacted {
                run.usage += done.usage;
                run.messages = done.messages;
                run.measured = None;
            }
            return;
        }
        let Some(threshold) = self.compaction.threshold() else {
            return;
        };
        let size = match run.measured {
            Some((tokens, upto)) => {
                tokens + estimate_tokens(&run.messages[upto.min(run.messages.len())..])
            }
            None => estimate_tokens(&run.messages) + self.system_prompt.len() as u64 / 4,
        };
        if size <= threshold {
            return;
        }
        let compacted = self
            .compact(&run.messages, "auto", None, events, cancel.clone())
            .await;
        if let Ok(done) = compacted {
            run.usage += done.usage;
            run.messages = done.messages;
            run.measured = None;
        }
    }

    /// One model response, streamed into `events`; retries are the provider's, told as
    /// `auto_retry_start` / `auto_retry_end` session events too (R4).
    async fn ask_model(
        &self,
        messages: &[Message],
        system: &str,
        events: &AgentEventSink,
        cancel: &CancellationToken,
    ) -> Result<AssistantMessage, RunOutcome> {
        let tools = self.extensions.offered_tools(&self.tools, &self.registry);
        let offered = self.deferral.offered(&tools, messages);
        let request = ModelRequest {
            system: system.to_owned(),
            messages: messages.to_vec(),
            tools: offered.tools,
            deferred_tools: offered.deferred,
            max_output_tokens: self.max_output_tokens,
            reasoning_effort: self.reasoning_effort,
        };
        let last_attempt = Arc::new(AtomicU32::new(1));
        let model = self.provider.model();
        let (sink, updates) = self
            .extensions
            .with_message_updates(self.stream_sink(events, &last_attempt), model);
        self.extensions.message_start(model).await;
        let streamed = async {
            let (result, ()) = futures::join!(
                self.provider.stream(&request, sink, cancel.clone()),
                self.extensions.tell_message_updates(updates)
            );
            result
        };
        let result = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(RunOutcome::Cancelled),
            result = streamed => result,
        };
        let attempt = last_attempt.load(Ordering::Relaxed);
        if attempt > 1 {
            events(AgentEvent::RetryEnd { attempt });
            self.session_event(SessionEvent::AutoRetryEnd).await;
        }
        result.map_err(|error| match error {
            toolhost_providers::ProviderError::Cancelled => RunOutcome::Cancelled,
            error => RunOutcome::Failed {
                error: error.to_string(),
            },
        })
    }

    /// Turns the provider's stream events into the loop's.
    fn stream_sink(&self, events: &AgentEventSink, last_attempt: &Arc<AtomicU32>) -> EventSink {
        let events = Arc::clone(events);
        let last_attempt = Arc::clone(last_attempt);
        let registry = Arc::clone(&self.registry);
        let session = Arc::clone(&self.session);
        Arc::new(move |event| match event {
            StreamEvent::TextDelta(text) => events(AgentEvent::TextDelta { text }),
            StreamEvent::ReasoningDelta(text) => events(AgentEvent::ReasoningDelta { text }),
            StreamEvent::Restarted => events(AgentEvent::ResponseRestarted),
            StreamEvent::RetryScheduled {
                attempt,
                delay,
                reason,
            } => {
                last_attempt.store(attempt, Ordering::Relaxed);
                events(AgentEvent::RetryStart {
                    attempt,
                    delay,
                    reason,
                });
                // Tools hear it while the provider waits; the sink itself cannot wait.
                let registry = Arc::clone(&registry);
                let session = Arc::clone(&session);
                tokio::spawn(async move {
                    registry
                        .dispatch_session_event(&SessionEvent::AutoRetryStart, &session)
                        .await;
                });
            }
            StreamEvent::RequestSent { .. }
            | StreamEvent::ToolCallStart { .. }
            | StreamEvent::ToolCallDelta { .. } => {}
        })
    }
}

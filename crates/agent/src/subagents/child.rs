//! Making and running one child: its definition, limits, permission system, tools, model,
//! prompt and session, then its loop (again while messages keep arriving for it).

use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;
use toolhost_core::conversation::{Message, Usage};
use toolhost_core::permission::PermissionMode;
use toolhost_core::{ToolError, ToolRegistry};
use toolhost_mcp::McpClients;
use toolhost_session::SessionId;

use super::mailbox::Mailbox;
use super::runs::{RunRecord, RunStatus};
use super::{Scope, SubAgents, lock};
use toolhost_config::providers::DEFAULT_MAX_ITERATIONS;

use super::worktree::AgentWorktree;
use crate::agent_loop::{AgentEvent, AgentEventSink, AgentLoop, Inbox, RunOutcome, Transcript};
use crate::offered_registry::OfferedRegistry;
use crate::provider_connect::connect_provider;
use crate::session_record::{RecordedSession, turn_context};

/// What the model tells a child about its place, after toolhost's own prompt.
pub(super) const CHILD_ROLE: &str = "You are a sub-agent: another agent gave you the task in the user's \
     message. Do it with your tools, then answer with what it asked for: your final answer is \
     all it sees of your work.";

/// What a caller asks of a child.
#[derive(Default)]
pub(crate) struct ChildSpec {
    pub(crate) prompt: String,
    pub(crate) agent: Option<String>,
    pub(crate) model: Option<String>,
    pub(crate) background: Option<bool>,
    pub(crate) max_iterations: Option<usize>,
    pub(crate) permission_mode: Option<PermissionMode>,
    pub(crate) tools: Option<Vec<String>>,
    pub(crate) title: Option<String>,
    /// Go on with this stored session instead of starting one.
    pub(crate) resume: Option<SessionId>,
    /// The provider and model the resumed session was using (it goes on with them).
    pub(crate) resumed_model: Option<(String, String)>,
    /// The caller's tool call.
    pub(crate) call_id: String,
    /// The caller's session.
    pub(crate) caller_session: Option<String>,
    /// The child must be kept in the store (the session tools address it there).
    pub(crate) needs_store: bool,
}

/// A child ready to run.
pub(crate) struct Child {
    pub(crate) record: Arc<RunRecord>,
    pub(crate) background: bool,
    /// What the caller should know besides the answer (a mode made stricter, unknown tools).
    pub(crate) notes: Vec<String>,
    agent: AgentLoop,
    messages: Vec<Message>,
    transcript: Option<Arc<RecordedSession>>,
    handle: SubAgents,
    /// Kept alive while the child runs (its scope refers to it weakly).
    registry: Arc<ToolRegistry>,
    extra_mcp: Option<Arc<McpClients>>,
    /// Its git worktree (`isolation: worktree`), ended with the run.
    worktree: Option<AgentWorktree>,
}

/// How a child's run ended.
pub(crate) struct ChildEnd {
    pub(crate) outcome: RunOutcome,
    pub(crate) turns: usize,
    pub(crate) usage: Usage,
    /// Where its changes are, when it worked in a git worktree and changed something.
    pub(crate) worktree_note: Option<String>,
    /// The child's last `RunEnd`, not yet told to the front end: whoever ran the child tells
    /// it once the run's end is settled ([`SubAgents::tell_end`]).
    last_event: Option<AgentEvent>,
}

pub(super) fn refuse(message: impl Into<String>) -> ToolError {
    ToolError::new(message.into())
}

impl SubAgents {
    /// Makes the child `spec` asks for, cancelled with `cancel`; refused at the limits, for
    /// an unknown agent or model, or when its session cannot be kept.
    pub(crate) async fn prepare_child(
        &self,
        spec: ChildSpec,
        cancel: CancellationToken,
    ) -> Result<Child, ToolError> {
        let hub = &self.hub;
        let depth = self.scope.depth + 1;
        if depth > hub.limits.max_depth {
            return Err(refuse(format!(
                "cannot start a sub-agent: this agent is at depth {} and sub-agents nest at most \
                 {} deep ([subagents] max_depth). Do the work yourself with your own tools.",
                self.scope.depth, hub.limits.max_depth
            )));
        }
        let definition = self.definition(spec.agent.as_deref())?;
        let background = spec.background.unwrap_or(definition.background);
        let mut notes = Vec::new();
        let parent_mode = self.scope.permissions.mode();
        let asked = spec
            .permission_mode
            .or(definition.permission_mode)
            .unwrap_or(parent_mode);
        let chosen = match &spec.resumed_model {
            Some((provider, model)) => self.resumed_provider(provider, model)?,
            None => self.child_provider(spec.model.as_deref().or(definition.model.as_deref()))?,
        };
        let provider = connect_provider(&chosen).map_err(|error| refuse(error.to_string()))?;

        let record = self.reserve(&definition.name, &spec, background, depth, cancel)?;
        let worktree = match AgentWorktree::for_run(
            definition.isolation,
            self.workspace(),
            &definition.name,
            &record.id,
        )
        .await
        {
            Ok(worktree) => worktree,
            Err(error) => {
                record.fail_to_start(&error.to_string());
                return Err(error);
            }
        };
        // Its hooks run where it works: a worktree's paths are not the workspace's.
        let permissions = self.scope.permissions.for_child(
            asked,
            &[],
            &definition.hooks,
            worktree
                .as_ref()
                .map(|worktree| worktree.workspace.as_path()),
        );
        if permissions.mode() != asked {
            notes.push(format!(
                "permissionMode {asked} was asked, but a sub-agent is never looser than its \
                 parent: it runs in {}",
                permissions.mode()
            ));
        }
        let handle = SubAgents {
            hub: Arc::clone(hub),
            scope: Arc::new(Scope {
                run_id: Some(record.id.clone()),
                depth,
                mailbox: Arc::default(),
                permissions: permissions.clone(),
                registry: OfferedRegistry::default(),
                provider: std::sync::RwLock::new(Some(chosen.clone())),
                // A sub-agent of one that works in a worktree works there too.
                workspace: worktree
                    .as_ref()
                    .map(|worktree| worktree.workspace.clone())
                    .or_else(|| self.scope.workspace.clone()),
            }),
        };
        let built = self
            .build_rest(
                &handle,
                &definition,
                &spec,
                &permissions,
                worktree.as_ref(),
                &mut notes,
            )
            .await;
        let (registry, extra_mcp, prompt, inputs) = match built {
            Ok(built) => built,
            Err(error) => {
                record.fail_to_start(&error.to_string());
                AgentWorktree::end_unused(worktree).await;
                return Err(error);
            }
        };
        handle.scope.registry.set(&registry);
        let offered = Arc::new(registry.for_mode(permissions.mode()));
        let max_iterations = spec
            .max_iterations
            .or(definition.max_turns)
            .or(hub.context.config.agent_settings.max_iterations)
            .unwrap_or(DEFAULT_MAX_ITERATIONS);
        let mut agent = AgentLoop::new(provider, Arc::clone(&offered), prompt)
            .max_iterations(max_iterations)
            .max_output_tokens(chosen.entry.max_output_tokens)
            .reasoning_effort(definition.effort)
            .inbox(handle.inbox());
        if let Some(share) = hub.context.config.agent_settings.compact_at {
            agent = agent.compact_at(share);
        }
        let context = turn_context(
            &chosen.entry.name,
            &chosen.model,
            permissions.mode(),
            chosen.entry.max_output_tokens,
            &inputs,
        );
        let kept = self.keep_session(&spec, &definition.name, context);
        let (transcript, mut messages) = match kept {
            Ok(kept) => kept,
            Err(error) => {
                record.fail_to_start(&error.to_string());
                if let Some(mcp) = &extra_mcp {
                    mcp.shutdown().await;
                }
                AgentWorktree::end_unused(worktree).await;
                return Err(error);
            }
        };
        let prompt_message = Message::user(spec.prompt.clone());
        if let Some(transcript) = &transcript {
            if let Err(error) = transcript.record_message(&prompt_message) {
                let error = format!("the sub-agent's session could not be saved: {error}");
                record.fail_to_start(&error);
                if let Some(mcp) = &extra_mcp {
                    mcp.shutdown().await;
                }
                AgentWorktree::end_unused(worktree).await;
                return Err(refuse(error));
            }
            agent = agent
                .transcript(Arc::clone(transcript) as Arc<dyn Transcript>)
                .session_id(transcript.id().to_string());
            record.set_session(Some(transcript.id().to_string()));
            // Reachable by SessionsSend from now on, before its task even starts.
            lock(&self.hub.live_sessions).insert(
                transcript.id().to_string(),
                Arc::clone(&handle.scope.mailbox),
            );
        } else {
            agent = agent.session_id(record.id.clone());
        }
        messages.push(prompt_message);
        Ok(Child {
            record,
            background,
            notes,
            agent,
            messages,
            transcript,
            handle,
            registry,
            extra_mcp,
            worktree,
        })
    }

    /// Checks the number of running sub-agents and records the new run, pending.
    fn reserve(
        &self,
        agent: &str,
        spec: &ChildSpec,
        background: bool,
        depth: usize,
        cancel: CancellationToken,
    ) -> Result<Arc<RunRecord>, ToolError> {
        let limit = self.hub.limits.max_concurrent;
        let mut runs = lock(&self.hub.runs);
        let running = runs
            .iter()
            .filter(|run| !run.status().is_finished())
            .count();
        if running >= limit {
            return Err(refuse(format!(
                "cannot start a sub-agent: {running} are running already, the most at once \
                 ([subagents] max_concurrent). Wait for one to finish (subagent_status), or do \
                 the work yourself."
            )));
        }
        let record = Arc::new(RunRecord::new(
            self.next_run_id(),
            agent.to_owned(),
            &spec.prompt,
            background,
            self.scope.run_id.clone(),
            depth,
            spec.call_id.clone(),
            cancel,
        ));
        runs.push(Arc::clone(&record));
        Ok(record)
    }
}

impl Child {
    /// Runs the child to its end (again while messages arrived for it after its last turn),
    /// its session and record marked, its own MCP servers stopped.
    pub(crate) async fn run(self) -> ChildEnd {
        let Self {
            record,
            agent,
            mut messages,
            transcript,
            handle,
            registry,
            extra_mcp,
            worktree,
            ..
        } = self;
        // A round's `RunEnd` is held back until the next round starts or the run is over and
        // its result delivered: a front end that shows the child finished can count on its
        // result reaching the parent's next turn.
        let held_end: Arc<Mutex<Option<AgentEvent>>> = Arc::default();
        let sink: AgentEventSink = {
            let record = Arc::clone(&record);
            let handle = handle.clone();
            let held_end = Arc::clone(&held_end);
            Arc::new(move |event: AgentEvent| {
                record.observe(&event);
                let mut held = lock(&held_end);
                if matches!(event, AgentEvent::RunEnd { .. }) {
                    *held = Some(event);
                    return;
                }
                if let Some(ended) = held.take() {
                    handle.tell(&record, ended);
                }
                drop(held);
                handle.tell(&record, event);
            })
        };
        let session = record.session_id();
        let mailbox: Arc<Mailbox> = Arc::clone(&handle.scope.mailbox);
        let mut turns = 0;
        let mut usage = Usage::default();
        let outcome = loop {
            let report = agent
                .run(messages, Arc::clone(&sink), record.cancel.clone())
                .await;
            turns += report.turns;
            usage += report.usage;
            // A message that came after the loop last looked starts another round.
            let late = {
                let mut live = lock(&handle.hub.live_sessions);
                let late = mailbox.take();
                if late.is_empty()
                    && let Some(session) = &session
                {
                    live.remove(session);
                }
                late
            };
            if late.is_empty() || !report.outcome.is_success() {
                break report.outcome;
            }
            messages = report.messages;
            for text in late {
                let message = Message::user(text);
                if let Some(transcript) = &transcript
                    && let Err(error) = transcript.record_message(&message)
                {
                    tracing::warn!("sub-agent {}: {error}", record.id);
                }
                messages.push(message);
            }
        };
        if let Some(session) = &session {
            lock(&handle.hub.live_sessions).remove(session);
        }
        if let Some(transcript) = &transcript
            && let Err(error) = transcript.finish(&outcome)
        {
            tracing::warn!("sub-agent {}: {error}", record.id);
        }
        record.finish(&outcome, turns, usage);
        if let Some(mcp) = extra_mcp {
            mcp.shutdown().await;
        }
        drop(registry);
        let worktree_note = match worktree {
            Some(worktree) => worktree.finish().await,
            None => None,
        };
        let last_event = lock(&held_end).take();
        ChildEnd {
            outcome,
            turns,
            usage,
            worktree_note,
            last_event,
        }
    }
}

impl SubAgents {
    /// Tells the front end that the run `end` came from ended (its last `RunEnd`, held back
    /// until its session was marked and its result delivered).
    pub(crate) fn tell_end(&self, record: &RunRecord, end: &mut ChildEnd) {
        if let Some(event) = end.last_event.take() {
            self.tell(record, event);
        }
    }
}

/// What the parent reads at its next turn when a background run ended.
pub(crate) fn delivery(record: &RunRecord, end: &ChildEnd) -> String {
    let what = if record.parent_call_id.is_empty() {
        String::new()
    } else {
        format!(" (started by your call {})", record.parent_call_id)
    };
    let session = record
        .session_id()
        .map(|id| format!(", session {id}"))
        .unwrap_or_default();
    let worktree = end
        .worktree_note
        .as_ref()
        .map(|note| format!("\n\n{note}"))
        .unwrap_or_default();
    let told = match RunStatus::of(&end.outcome) {
        RunStatus::Completed => format!(
            "[toolhost] The background agent {} ({}{session}){what} finished after {} turn{}. \
             Its answer:\n\n{}",
            record.id,
            record.agent,
            end.turns,
            if end.turns == 1 { "" } else { "s" },
            end.outcome.text()
        ),
        RunStatus::Cancelled => format!(
            "[toolhost] The background agent {} ({}{session}){what} was cancelled.",
            record.id, record.agent
        ),
        _ => format!(
            "[toolhost] The background agent {} ({}{session}){what} failed: {}",
            record.id,
            record.agent,
            end.outcome.text()
        ),
    };
    told + &worktree
}

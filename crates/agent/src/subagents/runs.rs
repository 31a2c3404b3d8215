//! What `subagent_list` and `subagent_status` report of a sub-agent run: its status, time,
//! turns, tokens, last tool calls and answer, kept up to date from the run's own events.

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolhost_core::conversation::Usage;

use crate::agent_loop::{AgentEvent, RunOutcome};

/// How many of a run's latest tool calls its status shows.
pub const STATUS_TOOL_CALLS: usize = 5;

/// The longest argument or result line a status shows for a call, in characters.
const CALL_LINE_CHARS: usize = 120;

/// How a sub-agent run stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Accepted, not yet asking its model.
    Pending,
    /// Asking its model or running tools.
    Running,
    /// It answered (or a tool ended it).
    Completed,
    /// Its model failed, its session could not be kept, or it hit its turn limit.
    Failed,
    /// Cancelled (its parent was).
    Cancelled,
}

impl RunStatus {
    /// Whether the run has ended.
    pub fn is_finished(self) -> bool {
        !matches!(self, Self::Pending | Self::Running)
    }

    /// How a run that ended this way stands.
    pub fn of(outcome: &RunOutcome) -> Self {
        match outcome {
            RunOutcome::Answered { .. } | RunOutcome::Stopped { .. } => Self::Completed,
            RunOutcome::Cancelled => Self::Cancelled,
            RunOutcome::MaxIterations { .. } | RunOutcome::Failed { .. } => Self::Failed,
        }
    }
}

/// One of the latest tool calls of a run.
#[derive(Clone, Debug, Serialize)]
struct CallSummary {
    id: String,
    tool: String,
    arguments: String,
    /// `running`, `ok` or `error`.
    outcome: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<String>,
}

#[derive(Default)]
struct Progress {
    status: Option<RunStatus>,
    ended: Option<Instant>,
    turns: usize,
    usage: Usage,
    calls: VecDeque<CallSummary>,
    answer: Option<String>,
    error: Option<String>,
    session_id: Option<String>,
}

/// One sub-agent run: who started it, and how it goes.
pub(crate) struct RunRecord {
    pub(crate) id: String,
    pub(crate) agent: String,
    pub(crate) prompt: String,
    pub(crate) background: bool,
    /// The run that started it (`None`: the top-level agent).
    pub(crate) parent_run: Option<String>,
    pub(crate) depth: usize,
    pub(crate) parent_call_id: String,
    pub(crate) cancel: CancellationToken,
    started: Instant,
    progress: Mutex<Progress>,
}

impl RunRecord {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        id: String,
        agent: String,
        prompt: &str,
        background: bool,
        parent_run: Option<String>,
        depth: usize,
        parent_call_id: String,
        cancel: CancellationToken,
    ) -> Self {
        Self {
            id,
            agent,
            prompt: first_line(prompt),
            background,
            parent_run,
            depth,
            parent_call_id,
            cancel,
            started: Instant::now(),
            progress: Mutex::new(Progress::default()),
        }
    }

    fn progress(&self) -> MutexGuard<'_, Progress> {
        self.progress.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The run's status.
    pub(crate) fn status(&self) -> RunStatus {
        self.progress().status.unwrap_or(RunStatus::Pending)
    }

    /// The session the run is kept in.
    pub(crate) fn set_session(&self, id: Option<String>) {
        self.progress().session_id = id;
    }

    /// The session the run is kept in, if it is.
    pub(crate) fn session_id(&self) -> Option<String> {
        self.progress().session_id.clone()
    }

    /// Follows one of the run's own events.
    pub(crate) fn observe(&self, event: &AgentEvent) {
        let mut progress = self.progress();
        match event {
            AgentEvent::RunStart { .. } => {
                progress.status.get_or_insert(RunStatus::Running);
            }
            AgentEvent::TurnStart { turn } => {
                progress.status = Some(RunStatus::Running);
                progress.turns = *turn;
            }
            AgentEvent::AssistantMessage { message } => progress.usage += message.usage,
            AgentEvent::ToolCallStart { call } => {
                if progress.calls.len() == STATUS_TOOL_CALLS {
                    progress.calls.pop_front();
                }
                progress.calls.push_back(CallSummary {
                    id: call.id.clone(),
                    tool: call.name.clone(),
                    arguments: cut(&call.arguments),
                    outcome: "running",
                    result: None,
                });
            }
            AgentEvent::ToolCallEnd { result } => {
                if let Some(call) = progress
                    .calls
                    .iter_mut()
                    .find(|call| call.id == result.tool_call_id)
                {
                    call.outcome = if result.is_error { "error" } else { "ok" };
                    call.result = Some(cut(&result.text()));
                }
            }
            _ => {}
        }
    }

    /// The run ended: `outcome` after `turns` turns, having spent `usage`.
    pub(crate) fn finish(&self, outcome: &RunOutcome, turns: usize, usage: Usage) {
        let mut progress = self.progress();
        progress.status = Some(RunStatus::of(outcome));
        progress.ended = Some(Instant::now());
        progress.turns = turns;
        progress.usage = usage;
        match outcome {
            outcome if outcome.is_success() => progress.answer = Some(outcome.text()),
            outcome => progress.error = Some(outcome.text()),
        }
    }

    /// The run failed before its loop started.
    pub(crate) fn fail_to_start(&self, error: &str) {
        let mut progress = self.progress();
        progress.status = Some(RunStatus::Failed);
        progress.ended = Some(Instant::now());
        progress.error = Some(error.to_owned());
    }

    fn elapsed(&self, progress: &Progress) -> Duration {
        progress
            .ended
            .map_or_else(|| self.started.elapsed(), |ended| ended - self.started)
    }

    /// The run as `subagent_status` reports it.
    pub(crate) fn snapshot(&self) -> Value {
        let progress = self.progress();
        let mut value = json!({
            "runId": self.id,
            "agent": self.agent,
            "prompt": self.prompt,
            "background": self.background,
            "depth": self.depth,
            "status": progress.status.unwrap_or(RunStatus::Pending),
            "elapsedMs": u64::try_from(self.elapsed(&progress).as_millis()).unwrap_or(u64::MAX),
            "turns": progress.turns,
            "usage": {
                "inputTokens": progress.usage.input_tokens,
                "outputTokens": progress.usage.output_tokens,
            },
            "lastToolCalls": progress.calls,
        });
        for (key, text) in [
            ("sessionId", &progress.session_id),
            ("answer", &progress.answer),
            ("error", &progress.error),
        ] {
            if let Some(text) = text {
                value[key] = text.clone().into();
            }
        }
        value
    }

    /// The run in a few lines, for the model.
    pub(crate) fn describe(&self) -> String {
        let snapshot = self.snapshot();
        let progress = self.progress();
        let mut text = format!(
            "{} ({}): {}, {:.1} s, {} turn{}, {} tokens in / {} out",
            self.id,
            self.agent,
            snapshot["status"].as_str().unwrap_or("pending"),
            self.elapsed(&progress).as_secs_f64(),
            progress.turns,
            if progress.turns == 1 { "" } else { "s" },
            progress.usage.input_tokens,
            progress.usage.output_tokens,
        );
        text.push_str(&format!("\n  task: {}", self.prompt));
        for call in &progress.calls {
            text.push_str(&format!(
                "\n  {} {} {} → {}",
                if call.outcome == "error" { "✗" } else { "·" },
                call.tool,
                call.arguments,
                call.result.as_deref().unwrap_or(call.outcome)
            ));
        }
        if let Some(answer) = &progress.answer {
            text.push_str(&format!("\n  answer:\n{answer}"));
        }
        if let Some(error) = &progress.error {
            text.push_str(&format!("\n  error: {error}"));
        }
        text
    }
}

fn first_line(text: &str) -> String {
    cut(text.trim().lines().next().unwrap_or_default())
}

/// The first line of `text`, at most [`CALL_LINE_CHARS`] characters.
fn cut(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    match line.char_indices().nth(CALL_LINE_CHARS) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_owned(),
    }
}

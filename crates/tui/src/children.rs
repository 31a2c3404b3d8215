//! The sub-agents a chat started, as the screen follows them: each child's status, turns,
//! time and latest tool call for its line in the transcript, and its own transcript (its
//! answer and tool boxes as they came) for the read-only view that watches it.

use std::time::{Duration, Instant};

use toolhost_agent::agent_loop::AgentEvent;
use toolhost_agent::subagents::RunStatus;

use super::transcript::{self, Entry, Notice, NoticeKind, ToolBox};

/// One sub-agent run, from its first event.
#[derive(Debug)]
pub struct ChildRun {
    /// The run (`run-1`).
    pub run_id: String,
    /// The agent definition it runs.
    pub agent: String,
    /// Whether it runs in the background (its parent's `spawn_agent` said so).
    pub background: bool,
    /// How it stands.
    pub status: RunStatus,
    /// Model turns taken, over every round it ran.
    pub turns: usize,
    /// Turns of the rounds that ended (a message that comes late starts another round).
    turns_before: usize,
    /// When the screen first heard of it.
    pub started: Instant,
    /// When it ended, if it did.
    pub ended: Option<Instant>,
    /// Why it failed or stopped early, if it did.
    pub error: Option<String>,
    /// Its own transcript.
    pub transcript: Vec<Entry>,
}

impl ChildRun {
    /// A run the screen hears of now.
    pub fn new(run_id: String, agent: String, background: bool) -> Self {
        Self {
            run_id,
            agent,
            background,
            status: RunStatus::Pending,
            turns: 0,
            turns_before: 0,
            started: Instant::now(),
            ended: None,
            error: None,
            transcript: Vec::new(),
        }
    }

    /// Follows one of the run's own events.
    pub fn observe(&mut self, event: AgentEvent) {
        let Some(event) = transcript::follow(&mut self.transcript, event) else {
            return;
        };
        match event {
            AgentEvent::RunStart { .. } => {
                self.status = RunStatus::Running;
                self.ended = None;
            }
            AgentEvent::TurnStart { turn } => {
                self.status = RunStatus::Running;
                self.turns = self.turns_before + turn;
            }
            AgentEvent::RetryStart {
                attempt, reason, ..
            } => self.transcript.push(Entry::Notice(Notice {
                kind: NoticeKind::Warning,
                text: format!("retrying (attempt {attempt}): {reason}"),
            })),
            AgentEvent::RunEnd { outcome, turns, .. } => {
                self.turns_before += turns;
                self.turns = self.turns_before;
                self.status = RunStatus::of(&outcome);
                self.ended = Some(Instant::now());
                self.error = (!outcome.is_success()).then(|| outcome.text());
                if let Some(error) = &self.error {
                    self.transcript.push(Entry::Notice(Notice {
                        kind: NoticeKind::Error,
                        text: error.clone(),
                    }));
                }
            }
            _ => {}
        }
    }

    /// Whether it still runs.
    pub fn is_running(&self) -> bool {
        !self.status.is_finished()
    }

    /// How long it ran, or runs so far.
    pub fn elapsed(&self) -> Duration {
        self.ended.unwrap_or_else(Instant::now) - self.started
    }

    /// Its latest tool call's box.
    pub fn last_call(&self) -> Option<&ToolBox> {
        self.transcript.iter().rev().find_map(|entry| match entry {
            Entry::Tool(tool) => Some(tool.as_ref()),
            _ => None,
        })
    }
}

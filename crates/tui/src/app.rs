//! The full-screen chat's state and how it changes: the loop's events, the user's keys and
//! what the background tasks report come in; the state changes, and what must happen outside
//! it (send a message, cancel the turn, write a rule, run a renderer) comes out as
//! [`Action`]s. Nothing here touches the terminal, the session or a file, so every behaviour
//! is tested by feeding events and drawing into a test backend.

use std::collections::{HashSet, VecDeque};

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use toolhost_agent::agent_loop::{AgentEvent, RunOutcome};
use toolhost_core::conversation::Usage;
use toolhost_core::permission::PermissionMode;
use toolhost_script::{PendingAction, Rendering};

use super::dialogs::{Dialog, DialogOutcome};
use super::input::{InputBox, InputOutcome};
use super::renderers::SPINNER;
use super::transcript::{self, Entry, Notice, NoticeKind, PendingState, ToolBox};

#[path = "app/children.rs"]
mod children;
#[path = "app/pending.rs"]
mod pending;

pub use children::Watching;

/// Which hook a render job runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Hook {
    /// `renderCall`.
    Call,
    /// `renderResult`.
    Result,
}

impl Hook {
    /// The hook's JavaScript name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Call => "renderCall",
            Self::Result => "renderResult",
        }
    }
}

/// What the chat must do outside the state.
#[derive(Debug, PartialEq)]
pub enum Action {
    /// Send a line (a message or a slash command) to the session.
    Submit(String),
    /// Cancel the running turn.
    CancelTurn,
    /// Switch the permission mode (at once for approvals; the tools from the next turn).
    SwitchMode(PermissionMode),
    /// Write allow rules to `.toolhost/config.local.toml`.
    RememberRules(Vec<toolhost_core::permission::PermissionRule>),
    /// Run a custom tool's render hook for the box of `call_id`.
    Render {
        /// The call.
        call_id: String,
        /// The hook.
        hook: Hook,
    },
    /// Apply or discard a pending action.
    Resolve(PendingAction, bool),
    /// Leave.
    Quit,
}

/// What the status line shows.
#[derive(Clone, Debug, Default)]
pub struct Status {
    /// The provider's name.
    pub provider: String,
    /// The model.
    pub model: String,
    /// The permission mode.
    pub mode: PermissionMode,
    /// Tokens spent in this chat.
    pub usage: Usage,
    /// The prompt size of the last response, in tokens: the context used.
    pub context_tokens: u64,
    /// The model's context window, when configured.
    pub context_window: Option<u64>,
    /// What a custom tool put in the status line (`api.ui.setStatus`).
    pub tool_status: Option<String>,
}

/// The chat's state.
#[derive(Debug, Default)]
pub struct App {
    /// The transcript, oldest first.
    pub transcript: Vec<Entry>,
    /// The input box.
    pub input: InputBox,
    /// The status line.
    pub status: Status,
    /// The dialogs waiting, the first one shown.
    pub dialogs: VecDeque<Dialog>,
    /// Whether tool boxes are expanded (Ctrl-O).
    pub expanded: bool,
    /// Rows scrolled back from the bottom (0: following the end).
    pub scroll_back: usize,
    /// Whether a turn runs.
    pub busy: bool,
    /// The spinner's frame.
    pub spinner_frame: u32,
    /// Custom tools with render hooks, by name.
    pub rendered_tools: HashSet<String>,
    /// Renderers whose failure was already reported (`tool/hook`): once each.
    reported_failures: HashSet<String>,
    /// Render jobs running, by call and hook, with whether the box changed meanwhile.
    rendering: Vec<(String, Hook, bool)>,
    /// Whether the chat should end.
    pub quit: bool,
    /// Counts the times the transcript was cleared (what was drawn before is void).
    pub epoch: u64,
    /// Pending actions the user decided on, not yet told to the model.
    decisions: Vec<String>,
    /// The sub-agents started in this chat, in the order they were heard of.
    pub children: Vec<super::children::ChildRun>,
    /// The child whose transcript is shown (Ctrl-T), if one is.
    pub watching: Option<Watching>,
}

/// The modes Shift-Tab cycles through.
const MODE_CYCLE: [PermissionMode; 3] = [
    PermissionMode::Default,
    PermissionMode::AcceptEdits,
    PermissionMode::Plan,
];

impl App {
    /// Empties the transcript (`/clear`).
    pub fn clear_transcript(&mut self) {
        self.transcript.clear();
        self.epoch += 1;
    }

    /// Says something in the transcript.
    pub fn notice(&mut self, kind: NoticeKind, text: impl Into<String>) {
        self.transcript.push(Entry::Notice(Notice {
            kind,
            text: text.into(),
        }));
    }

    /// A key: the open dialog's, else the watched child's view's, else the chat's own (Esc,
    /// Ctrl-C, Ctrl-D, Shift-Tab, Ctrl-O, Ctrl-T, paging), else the input box's.
    pub fn key(&mut self, key: KeyEvent) -> Vec<Action> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        // Ctrl-C cancels the turn even over a dialog (its call is abandoned with it).
        if ctrl && key.code == KeyCode::Char('c') && self.busy {
            return vec![Action::CancelTurn];
        }
        if let Some(dialog) = self.dialogs.front_mut() {
            let outcome = dialog.key(key);
            if outcome != DialogOutcome::Open {
                self.dialogs.pop_front();
            }
            return match outcome {
                DialogOutcome::Open | DialogOutcome::Closed => Vec::new(),
                DialogOutcome::RememberRules(rules) => vec![Action::RememberRules(rules)],
                DialogOutcome::Resolve(action, apply) => {
                    self.set_pending(action.id, PendingState::Resolving);
                    vec![Action::Resolve(action, apply)]
                }
            };
        }
        if self.watching.is_some() {
            self.watching_key(key);
            return Vec::new();
        }
        match key.code {
            KeyCode::Char('t') if ctrl => {
                if !self.watch() {
                    self.notice(NoticeKind::Info, "no sub-agent has run in this chat yet");
                }
                return Vec::new();
            }
            KeyCode::Esc if self.busy => return vec![Action::CancelTurn],
            KeyCode::Char('c') if ctrl => {
                if self.busy {
                    return vec![Action::CancelTurn];
                }
                self.input.set_text("");
                return Vec::new();
            }
            KeyCode::Char('d') if ctrl && self.input.text().is_empty() => {
                self.quit = true;
                return vec![Action::Quit];
            }
            KeyCode::BackTab => {
                let at = MODE_CYCLE.iter().position(|mode| *mode == self.status.mode);
                let next = MODE_CYCLE[at.map_or(0, |at| (at + 1) % MODE_CYCLE.len())];
                self.status.mode = next;
                return vec![Action::SwitchMode(next)];
            }
            KeyCode::Char('o') if ctrl => {
                self.expanded = !self.expanded;
                return self.rerender_results();
            }
            KeyCode::PageUp => {
                self.scroll_back += 10;
                return Vec::new();
            }
            KeyCode::PageDown => {
                self.scroll_back = self.scroll_back.saturating_sub(10);
                return Vec::new();
            }
            _ => {}
        }
        match self.input.key(key) {
            InputOutcome::Submitted(text) if text.trim().is_empty() => Vec::new(),
            InputOutcome::Submitted(text) if self.busy => {
                self.input.set_text(&text);
                self.notice(
                    NoticeKind::Warning,
                    "a turn is running: wait for it, or press Esc to cancel it",
                );
                Vec::new()
            }
            InputOutcome::Submitted(text) => {
                let trimmed = text.trim();
                if matches!(trimmed, "/exit" | "/quit") {
                    self.quit = true;
                    return vec![Action::Quit];
                }
                let mut sent = text.clone();
                if !trimmed.starts_with('/') {
                    self.transcript.push(Entry::User(trimmed.to_owned()));
                    if !self.decisions.is_empty() {
                        // What the user decided on proposed actions reaches the model with
                        // the next message (the transcript shows the message alone).
                        sent = format!(
                            "{}\n\n[Decided by the user since the last turn: {}]",
                            trimmed,
                            std::mem::take(&mut self.decisions).join("; ")
                        );
                    }
                }
                self.busy = true;
                self.scroll_back = 0;
                vec![Action::Submit(sent)]
            }
            InputOutcome::Edited | InputOutcome::Ignored => Vec::new(),
        }
    }

    /// Pasted text goes into the input (or the open dialog's field).
    pub fn paste(&mut self, text: &str) {
        if self.dialogs.is_empty() {
            self.input.paste(text);
        }
    }

    /// A tick of the spinner, while something runs.
    pub fn tick(&mut self) {
        self.spinner_frame = (self.spinner_frame + 1) % SPINNER.len() as u32;
    }

    /// One of the loop's events.
    pub fn agent_event(&mut self, event: AgentEvent) -> Vec<Action> {
        // A custom tool's box is drawn again by its hooks when it starts, streams or ends.
        let redrawn = match &event {
            AgentEvent::ToolCallStart { call } => Some((call.id.clone(), Hook::Call)),
            AgentEvent::ToolCallUpdate { call_id, .. } => Some((call_id.clone(), Hook::Result)),
            AgentEvent::ToolCallEnd { result } => Some((result.tool_call_id.clone(), Hook::Result)),
            _ => None,
        };
        let Some(event) = transcript::follow(&mut self.transcript, event) else {
            let custom = redrawn.filter(|(id, _)| {
                self.tool(id)
                    .is_some_and(|tool| self.rendered_tools.contains(&tool.call.name))
            });
            return match custom {
                Some((id, hook)) => self.render(&id, hook).into_iter().collect(),
                None => Vec::new(),
            };
        };
        match event {
            AgentEvent::RunStart { model, .. } => self.status.model = model,
            AgentEvent::AssistantMessage { message } => {
                self.status.context_tokens =
                    message.usage.input_tokens + message.usage.output_tokens;
            }
            AgentEvent::RetryStart {
                attempt, reason, ..
            } => self.notice(
                NoticeKind::Warning,
                format!("retrying (attempt {attempt}): {reason}"),
            ),
            AgentEvent::CompactionStart { tokens_before, .. } => self.notice(
                NoticeKind::Info,
                format!("compacting the conversation (~{tokens_before} tokens)…"),
            ),
            AgentEvent::CompactionEnd {
                kept_messages,
                tokens_after,
                error,
            } => match error {
                Some(error) => {
                    self.notice(NoticeKind::Error, format!("compaction failed: {error}"))
                }
                None => self.notice(
                    NoticeKind::Info,
                    format!(
                        "compacted: ~{tokens_after} tokens, {kept_messages} recent messages kept"
                    ),
                ),
            },
            AgentEvent::RunEnd { usage, .. } => self.status.usage += usage,
            AgentEvent::SubAgent {
                run_id,
                agent,
                parent_call_id,
                event,
            } => self.subagent_event(run_id, agent, &parent_call_id, *event),
            AgentEvent::TurnStart { .. } | AgentEvent::RetryEnd { .. } => {}
            // What the transcript itself takes was taken above.
            AgentEvent::TextDelta { .. }
            | AgentEvent::ReasoningDelta { .. }
            | AgentEvent::ResponseRestarted
            | AgentEvent::ToolCallStart { .. }
            | AgentEvent::ToolCallUpdate { .. }
            | AgentEvent::ToolCallEnd { .. } => {}
        }
        Vec::new()
    }

    /// The turn (or command) ended; `outcome` when it was a turn, `text` what a command said.
    pub fn turn_ended(&mut self, outcome: Option<RunOutcome>, text: Option<String>) {
        self.busy = false;
        self.dialogs.retain(|dialog| !dialog.is_abandoned());
        match outcome {
            Some(RunOutcome::Answered { .. } | RunOutcome::Stopped { .. }) | None => {}
            Some(RunOutcome::Cancelled) => self.notice(NoticeKind::Warning, "turn cancelled"),
            Some(other) => self.notice(NoticeKind::Error, other.text()),
        }
        if let Some(text) = text.filter(|text| !text.is_empty()) {
            self.notice(NoticeKind::Info, text);
        }
    }

    /// A render job's result. A failing renderer is reported once per tool and hook, and the
    /// box keeps the default rendering.
    pub fn rendered(&mut self, call_id: &str, hook: Hook, rendering: Rendering) -> Vec<Action> {
        let again = self
            .rendering
            .iter()
            .position(|(id, h, _)| id == call_id && *h == hook)
            .map(|at| self.rendering.remove(at).2)
            .unwrap_or(false);
        let Some(tool) = self.tool_mut(call_id) else {
            return Vec::new();
        };
        let name = tool.call.name.clone();
        tool.revision += 1;
        match rendering {
            Rendering::Custom(tree) => match hook {
                Hook::Call => tool.custom_call = Some(tree),
                Hook::Result => tool.custom_result = Some(tree),
            },
            Rendering::Default { error, .. } => {
                match hook {
                    Hook::Call => tool.custom_call = None,
                    Hook::Result => tool.custom_result = None,
                }
                if let Some(error) = error
                    && self
                        .reported_failures
                        .insert(format!("{name}/{}", hook.name()))
                {
                    tracing::warn!(tool = %name, "{error}; the default rendering is used");
                    self.notice(
                        NoticeKind::Warning,
                        format!("the renderer of {name} failed ({error}); drawn as plain text"),
                    );
                }
            }
        }
        if again {
            return self.render(call_id, hook).into_iter().collect();
        }
        Vec::new()
    }

    /// Asks for a render job, unless one runs for this box and hook (then it runs again when
    /// that one ends, with what changed meanwhile).
    fn render(&mut self, call_id: &str, hook: Hook) -> Option<Action> {
        if let Some(running) = self
            .rendering
            .iter_mut()
            .find(|(id, h, _)| id == call_id && *h == hook)
        {
            running.2 = true;
            return None;
        }
        self.rendering.push((call_id.to_owned(), hook, false));
        Some(Action::Render {
            call_id: call_id.to_owned(),
            hook,
        })
    }

    /// Expanding changes what `renderResult` is asked to draw: ask again for the finished
    /// custom boxes.
    fn rerender_results(&mut self) -> Vec<Action> {
        let ids: Vec<String> = self
            .transcript
            .iter()
            .filter_map(|entry| match entry {
                Entry::Tool(tool)
                    if tool.result.is_some() && self.rendered_tools.contains(&tool.call.name) =>
                {
                    Some(tool.call.id.clone())
                }
                _ => None,
            })
            .collect();
        ids.iter()
            .filter_map(|id| self.render(id, Hook::Result))
            .collect()
    }

    /// The box of a call.
    pub fn tool(&self, call_id: &str) -> Option<&ToolBox> {
        self.transcript.iter().rev().find_map(|entry| match entry {
            Entry::Tool(tool) if tool.call.id == call_id => Some(tool.as_ref()),
            _ => None,
        })
    }

    fn tool_mut(&mut self, call_id: &str) -> Option<&mut ToolBox> {
        transcript::tool_mut(&mut self.transcript, call_id)
    }
}

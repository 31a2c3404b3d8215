//! Sub-agents in the chat's state: a line in the transcript per child, followed from its
//! events, and the read-only view of one child's transcript (Ctrl-T opens it, Esc leaves).

use ratatui::crossterm::event::{KeyCode, KeyEvent};

use super::App;
use crate::children::ChildRun;
use crate::transcript::{Entry, ToolBox};

/// Rows PgUp and PgDn scroll.
const PAGE: usize = 10;

/// The child whose transcript the screen shows instead of the chat's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Watching {
    /// Which child ([`App::children`]).
    pub child: usize,
    /// Rows scrolled back from the bottom of its transcript.
    pub scroll_back: usize,
}

impl App {
    /// One of a child's events: its line appears with the first, and follows the rest.
    pub(super) fn subagent_event(
        &mut self,
        run_id: String,
        agent: String,
        parent_call_id: &str,
        event: toolhost_agent::agent_loop::AgentEvent,
    ) {
        let at = match self
            .children
            .iter()
            .position(|child| child.run_id == run_id)
        {
            Some(at) => at,
            None => {
                let call = self.spawning_call(parent_call_id);
                let background =
                    call.is_some_and(|call| call.args["background"].as_bool() == Some(true));
                // Its transcript opens with its task, as the chat's with the user's message.
                let task = call
                    .and_then(|call| call.args["prompt"].as_str())
                    .map(|prompt| Entry::User(prompt.to_owned()));
                let mut child = ChildRun::new(run_id.clone(), agent, background);
                child.transcript.extend(task);
                self.transcript.push(Entry::Child(run_id));
                self.children.push(child);
                self.children.len() - 1
            }
        };
        self.children[at].observe(event);
    }

    /// The `spawn_agent` call that started a child: the chat's own, or a child's (a
    /// grandchild).
    fn spawning_call(&self, call_id: &str) -> Option<&ToolBox> {
        self.tool(call_id).or_else(|| {
            self.children.iter().find_map(|child| {
                child.transcript.iter().find_map(|entry| match entry {
                    Entry::Tool(tool) if tool.call.id == call_id => Some(tool.as_ref()),
                    _ => None,
                })
            })
        })
    }

    /// The child of `run_id`.
    pub fn child(&self, run_id: &str) -> Option<&ChildRun> {
        self.children.iter().find(|child| child.run_id == run_id)
    }

    /// Whether a child still runs (the spinner turns for it).
    pub fn children_running(&self) -> bool {
        self.children.iter().any(ChildRun::is_running)
    }

    /// The child being watched, if one is.
    pub fn watched(&self) -> Option<&ChildRun> {
        self.watching
            .and_then(|watching| self.children.get(watching.child))
    }

    /// Ctrl-T: watch the latest child that runs, else the latest one; `false` when the chat
    /// has none.
    pub(super) fn watch(&mut self) -> bool {
        let latest = self
            .children
            .iter()
            .rposition(ChildRun::is_running)
            .or_else(|| self.children.len().checked_sub(1));
        self.watching = latest.map(|child| Watching {
            child,
            scroll_back: 0,
        });
        self.watching.is_some()
    }

    /// A key while a child is watched: Esc goes back, ←/→ (or Tab) go to the other
    /// children, PgUp/PgDn scroll; the rest is ignored (the view is read-only).
    pub(super) fn watching_key(&mut self, key: KeyEvent) {
        let count = self.children.len();
        let Some(watching) = self.watching.as_mut() else {
            return;
        };
        match key.code {
            KeyCode::Esc => self.watching = None,
            KeyCode::Right | KeyCode::Tab => {
                *watching = Watching {
                    child: (watching.child + 1) % count,
                    scroll_back: 0,
                };
            }
            KeyCode::Left | KeyCode::BackTab => {
                *watching = Watching {
                    child: (watching.child + count - 1) % count,
                    scroll_back: 0,
                };
            }
            KeyCode::PageUp => watching.scroll_back += PAGE,
            KeyCode::PageDown => watching.scroll_back = watching.scroll_back.saturating_sub(PAGE),
            _ => {}
        }
    }
}

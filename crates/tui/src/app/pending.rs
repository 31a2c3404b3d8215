//! Pending actions in the chat's state: shown, decided, and told to the model.

use toolhost_script::PendingAction;

use super::App;
use crate::dialogs::{Dialog, PendingDialog};
use crate::transcript::{Entry, PendingEntry, PendingState};

impl App {
    /// Pending actions tools pushed: each shows in the transcript and asks for a decision.
    pub fn pending_actions(&mut self, actions: Vec<PendingAction>) {
        for action in actions {
            self.transcript.push(Entry::Pending(PendingEntry {
                action: action.clone(),
                state: PendingState::Waiting,
            }));
            self.dialogs
                .push_back(Dialog::Pending(PendingDialog { action }));
        }
    }

    /// A pending action was applied or discarded: its box says so, and the model is told
    /// with the next message.
    pub fn resolved(&mut self, id: u32, applied: bool, outcome: Result<Option<String>, String>) {
        let label = self
            .transcript
            .iter()
            .find_map(|entry| match entry {
                Entry::Pending(pending) if pending.action.id == id => pending.action.label.clone(),
                _ => None,
            })
            .unwrap_or_else(|| format!("action {id}"));
        let (state, note) = match (outcome, applied) {
            (Ok(said), true) => {
                let note = match &said {
                    Some(said) => format!("applied \"{label}\" ({said})"),
                    None => format!("applied \"{label}\""),
                };
                (PendingState::Applied(said), note)
            }
            (Ok(_), false) => (PendingState::Discarded, format!("discarded \"{label}\"")),
            (Err(error), _) => {
                let note = format!("\"{label}\" could not be resolved: {error}");
                (PendingState::Failed(error), note)
            }
        };
        self.set_pending(id, state);
        self.decisions.push(note);
    }

    /// A pending action's state.
    pub fn set_pending(&mut self, id: u32, state: PendingState) {
        for entry in &mut self.transcript {
            if let Entry::Pending(pending) = entry
                && pending.action.id == id
            {
                pending.state = state.clone();
            }
        }
    }
}

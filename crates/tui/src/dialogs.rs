//! Dialogs over the transcript: an approval (allow once, allow always with the rule the
//! dialog proposes, deny with a message to the model), a custom tool's question (`confirm`,
//! `select`, `input` of `api.ui`), and the decision on a pending action. Each holds the
//! channel its answer goes back on; the key that decides it sends the answer.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::Value;
use tokio::sync::oneshot;
use toolhost_core::permission::{ApprovalAnswer, ApprovalRequest, PermissionRule};
use toolhost_script::{PendingAction, UiRequest};

/// The message a denial sends the model when the user gives none.
pub const DEFAULT_DENIAL: &str =
    "The user refused this call. Do not retry it; ask the user what to do instead.";

/// A dialog waiting for the user.
#[derive(Debug)]
pub enum Dialog {
    /// A call asks for approval.
    Approval(ApprovalDialog),
    /// A custom tool asks a question.
    Question(QuestionDialog),
    /// A pending action waits to be applied or discarded.
    Pending(PendingDialog),
}

/// What deciding a dialog asks of the chat.
#[derive(Debug, PartialEq)]
pub enum DialogOutcome {
    /// Still open.
    Open,
    /// Answered; nothing more to do.
    Closed,
    /// Allowed always: write these rules to `.toolhost/config.local.toml`.
    RememberRules(Vec<PermissionRule>),
    /// Apply (`true`) or discard the pending action.
    Resolve(PendingAction, bool),
}

/// The choices of an approval, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApprovalChoice {
    /// Run this call.
    AllowOnce,
    /// Run it and allow the proposed rules from now on (kept in the local config).
    AllowAlways,
    /// Refuse, with a message to the model.
    Deny,
}

const APPROVAL_CHOICES: [ApprovalChoice; 3] = [
    ApprovalChoice::AllowOnce,
    ApprovalChoice::AllowAlways,
    ApprovalChoice::Deny,
];

/// An approval.
#[derive(Debug)]
pub struct ApprovalDialog {
    /// The request.
    pub request: ApprovalRequest,
    /// The highlighted choice.
    pub selected: usize,
    /// The message being typed after choosing Deny (`None` before).
    pub denial: Option<String>,
    reply: Option<oneshot::Sender<ApprovalAnswer>>,
}

impl ApprovalDialog {
    /// A dialog answering on `reply`.
    pub fn new(request: ApprovalRequest, reply: oneshot::Sender<ApprovalAnswer>) -> Self {
        Self {
            request,
            selected: 0,
            denial: None,
            reply: Some(reply),
        }
    }

    /// The choices, with their labels.
    pub fn choices(&self) -> Vec<(ApprovalChoice, String)> {
        APPROVAL_CHOICES
            .iter()
            .map(|choice| {
                let label = match choice {
                    ApprovalChoice::AllowOnce => "Allow once".to_owned(),
                    ApprovalChoice::AllowAlways => format!(
                        "Allow always: {} (saved in .toolhost/config.local.toml)",
                        self.proposed_rules()
                            .iter()
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    ApprovalChoice::Deny => "Deny, and tell the model why".to_owned(),
                };
                (*choice, label)
            })
            .collect()
    }

    /// The rules "allow always" writes: the request's suggestions, or the bare tool.
    pub fn proposed_rules(&self) -> Vec<PermissionRule> {
        if self.request.suggested_rules.is_empty() {
            PermissionRule::parse(&self.request.tool)
                .map(|rule| vec![rule])
                .unwrap_or_default()
        } else {
            self.request.suggested_rules.clone()
        }
    }

    fn answer(&mut self, answer: ApprovalAnswer) {
        if let Some(reply) = self.reply.take() {
            let _ = reply.send(answer);
        }
    }

    fn key(&mut self, key: KeyEvent) -> DialogOutcome {
        if let Some(denial) = &mut self.denial {
            match key.code {
                KeyCode::Enter => {
                    let message = match denial.trim() {
                        "" => DEFAULT_DENIAL.to_owned(),
                        reason => format!("The user refused this call: {reason}"),
                    };
                    self.answer(ApprovalAnswer::Deny { message });
                    return DialogOutcome::Closed;
                }
                KeyCode::Esc => self.denial = None,
                KeyCode::Backspace => {
                    denial.pop();
                }
                KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                    denial.push(c);
                }
                _ => {}
            }
            return DialogOutcome::Open;
        }
        let choice = match key.code {
            KeyCode::Up | KeyCode::BackTab => {
                self.selected = self.selected.saturating_sub(1);
                return DialogOutcome::Open;
            }
            KeyCode::Down | KeyCode::Tab => {
                self.selected = (self.selected + 1).min(APPROVAL_CHOICES.len() - 1);
                return DialogOutcome::Open;
            }
            KeyCode::Enter => APPROVAL_CHOICES[self.selected],
            KeyCode::Char('1' | 'y') => ApprovalChoice::AllowOnce,
            KeyCode::Char('2' | 'a') => ApprovalChoice::AllowAlways,
            KeyCode::Char('3' | 'n') => ApprovalChoice::Deny,
            KeyCode::Esc => {
                self.answer(ApprovalAnswer::Deny {
                    message: DEFAULT_DENIAL.to_owned(),
                });
                return DialogOutcome::Closed;
            }
            _ => return DialogOutcome::Open,
        };
        match choice {
            ApprovalChoice::AllowOnce => {
                self.answer(ApprovalAnswer::AllowOnce);
                DialogOutcome::Closed
            }
            ApprovalChoice::AllowAlways => {
                let rules = self.proposed_rules();
                self.answer(ApprovalAnswer::AllowForSession);
                DialogOutcome::RememberRules(rules)
            }
            ApprovalChoice::Deny => {
                self.selected = 2;
                self.denial = Some(String::new());
                DialogOutcome::Open
            }
        }
    }
}

/// A custom tool's question.
#[derive(Debug)]
pub struct QuestionDialog {
    /// The question.
    pub request: UiRequest,
    /// The highlighted option (`select`; for `confirm` 0 is yes).
    pub selected: usize,
    /// The text typed (`input`).
    pub text: String,
    reply: Option<oneshot::Sender<Value>>,
}

impl QuestionDialog {
    /// A dialog answering on `reply`.
    pub fn new(request: UiRequest, reply: oneshot::Sender<Value>) -> Self {
        Self {
            request,
            selected: 0,
            text: String::new(),
            reply: Some(reply),
        }
    }

    fn answer(&mut self, value: Value) -> DialogOutcome {
        if let Some(reply) = self.reply.take() {
            let _ = reply.send(value);
        }
        DialogOutcome::Closed
    }

    fn key(&mut self, key: KeyEvent) -> DialogOutcome {
        let count = match &self.request {
            UiRequest::Confirm { .. } => 2,
            UiRequest::Select { options, .. } => options.len(),
            UiRequest::Input { .. } => 0,
        };
        match (&self.request, key.code) {
            (UiRequest::Confirm { .. } | UiRequest::Select { .. }, KeyCode::Esc) => {
                let dismissed = match self.request {
                    UiRequest::Confirm { .. } => Value::Bool(false),
                    _ => Value::Null,
                };
                self.answer(dismissed)
            }
            (UiRequest::Input { .. }, KeyCode::Esc) => self.answer(Value::Null),
            (UiRequest::Confirm { .. }, KeyCode::Char('y')) => self.answer(Value::Bool(true)),
            (UiRequest::Confirm { .. }, KeyCode::Char('n')) => self.answer(Value::Bool(false)),
            (UiRequest::Confirm { .. }, KeyCode::Enter) => {
                self.answer(Value::Bool(self.selected == 0))
            }
            (UiRequest::Select { options, .. }, KeyCode::Enter) => {
                let chosen = options.get(self.selected).cloned();
                self.answer(chosen.map_or(Value::Null, Value::String))
            }
            (UiRequest::Input { .. }, KeyCode::Enter) => {
                let text = std::mem::take(&mut self.text);
                self.answer(Value::String(text))
            }
            (UiRequest::Input { .. }, KeyCode::Backspace) => {
                self.text.pop();
                DialogOutcome::Open
            }
            (UiRequest::Input { .. }, KeyCode::Char(c))
                if !key.modifiers.contains(KeyModifiers::CONTROL) =>
            {
                self.text.push(c);
                DialogOutcome::Open
            }
            (_, KeyCode::Up | KeyCode::Left | KeyCode::BackTab) => {
                self.selected = self.selected.saturating_sub(1);
                DialogOutcome::Open
            }
            (_, KeyCode::Down | KeyCode::Right | KeyCode::Tab) => {
                self.selected = (self.selected + 1).min(count.saturating_sub(1));
                DialogOutcome::Open
            }
            _ => DialogOutcome::Open,
        }
    }
}

/// The decision on a pending action.
#[derive(Debug)]
pub struct PendingDialog {
    /// The action.
    pub action: PendingAction,
}

impl PendingDialog {
    fn key(&mut self, key: KeyEvent) -> DialogOutcome {
        match key.code {
            KeyCode::Char('a' | 'y') | KeyCode::Enter => {
                DialogOutcome::Resolve(self.action.clone(), true)
            }
            KeyCode::Char('d' | 'n') | KeyCode::Esc => {
                DialogOutcome::Resolve(self.action.clone(), false)
            }
            _ => DialogOutcome::Open,
        }
    }
}

impl Dialog {
    /// Whether nobody waits for the answer any more (the call was cancelled).
    pub fn is_abandoned(&self) -> bool {
        match self {
            Self::Approval(dialog) => dialog.reply.as_ref().is_none_or(oneshot::Sender::is_closed),
            Self::Question(dialog) => dialog.reply.as_ref().is_none_or(oneshot::Sender::is_closed),
            Self::Pending(_) => false,
        }
    }

    /// Handles a key.
    pub fn key(&mut self, key: KeyEvent) -> DialogOutcome {
        match self {
            Self::Approval(dialog) => dialog.key(key),
            Self::Question(dialog) => dialog.key(key),
            Self::Pending(dialog) => dialog.key(key),
        }
    }
}

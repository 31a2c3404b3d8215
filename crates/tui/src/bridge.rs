//! Where the chat's background meets its screen: the approver the permission policy asks
//! and the `api.ui` context custom tools ask both send their question to the UI's loop with
//! a channel for the answer, and wait for it; the loop opens a dialog.

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use toolhost_core::permission::{ApprovalAnswer, ApprovalRequest, Approver};
use toolhost_script::{UiContext, UiRequest};

use super::UiEvent;

/// Asks approvals in a dialog.
pub struct DialogApprover(pub mpsc::UnboundedSender<UiEvent>);

#[async_trait::async_trait]
impl Approver for DialogApprover {
    async fn approve(&self, request: &ApprovalRequest) -> ApprovalAnswer {
        let (reply, answer) = oneshot::channel();
        if self
            .0
            .send(UiEvent::Approval(request.clone(), reply))
            .is_err()
        {
            return closed();
        }
        answer.await.unwrap_or_else(|_| closed())
    }
}

fn closed() -> ApprovalAnswer {
    ApprovalAnswer::Deny {
        message: "The user could not be asked (the chat closed).".to_owned(),
    }
}

/// `api.ui` for custom tools: notices in the transcript, questions in dialogs.
pub struct DialogUi(pub mpsc::UnboundedSender<UiEvent>);

#[async_trait::async_trait]
impl UiContext for DialogUi {
    fn notify(&self, message: &str, level: &str) {
        let _ = self
            .0
            .send(UiEvent::Notify(message.to_owned(), level.to_owned()));
    }

    async fn request(&self, request: UiRequest) -> Value {
        let dismissed = match request {
            UiRequest::Confirm { .. } => Value::Bool(false),
            UiRequest::Select { .. } | UiRequest::Input { .. } => Value::Null,
        };
        let (reply, answer) = oneshot::channel();
        if self.0.send(UiEvent::Question(request, reply)).is_err() {
            return dismissed;
        }
        answer.await.unwrap_or(dismissed)
    }
}

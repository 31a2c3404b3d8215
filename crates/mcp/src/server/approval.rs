//! Approvals over MCP: when the permission policy asks (R17, R37), [`McpApprover`] asks the
//! user of the call's client through `elicitation/create` when that client supports form
//! elicitation; otherwise a fallback approver decides (for `toolhost serve`, the
//! non-interactive one: `--yes` approves, otherwise the call is refused with a message that
//! says how to allow it).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::{ElicitationMode, Peer, RoleServer};
use toolhost_core::async_trait;
use toolhost_core::permission::{ApprovalAnswer, ApprovalRequest, Approver};

/// How long a confirmation waits for the user before the call is refused.
pub const APPROVAL_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// The longest rendering of a call's arguments shown in a confirmation, in characters.
pub const MAX_APPROVAL_ARGUMENTS_CHARS: usize = 2_000;

/// The MCP sessions whose client can ask its user, by session id (the
/// [`toolhost_core::SessionInfo::session_id`] the server gives each call). Cheap to clone;
/// the server and the approver share one.
#[derive(Clone, Default)]
pub struct ClientPrompts {
    peers: Arc<Mutex<HashMap<String, Peer<RoleServer>>>>,
}

impl std::fmt::Debug for ClientPrompts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sessions: Vec<String> = self.lock().keys().cloned().collect();
        f.debug_struct("ClientPrompts")
            .field("sessions", &sessions)
            .finish()
    }
}

impl ClientPrompts {
    /// An empty set: no session can ask yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Remembers the client of `session_id` if it supports form elicitation.
    pub(crate) fn attach(&self, session_id: &str, peer: &Peer<RoleServer>) {
        if peer
            .supported_elicitation_modes()
            .contains(&ElicitationMode::Form)
        {
            self.lock().insert(session_id.to_owned(), peer.clone());
        }
    }

    /// Forgets the client of `session_id` (its session ended).
    pub(crate) fn detach(&self, session_id: &str) {
        self.lock().remove(session_id);
    }

    /// Whether the session's client can ask its user.
    pub fn can_ask(&self, session_id: &str) -> bool {
        self.lock().contains_key(session_id)
    }

    /// Asks the user of the call's client whether the call may run; `None` when the call
    /// belongs to no session whose client can ask (or the client failed to answer), so the
    /// fallback approver decides.
    pub async fn ask(&self, request: &ApprovalRequest) -> Option<ApprovalAnswer> {
        let session_id = request.session.session_id.as_deref()?;
        let peer = self.lock().get(session_id).cloned()?;
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: confirmation_message(request),
            requested_schema: ElicitationSchema::new(Default::default()),
        };
        let tool = &request.tool;
        match peer
            .create_elicitation_with_timeout(params, Some(APPROVAL_TIMEOUT))
            .await
        {
            Ok(answer) => Some(match answer.action {
                ElicitationAction::Accept => ApprovalAnswer::AllowOnce,
                ElicitationAction::Decline => ApprovalAnswer::Deny {
                    message: format!(
                        "The user declined to run '{tool}'. Do not retry it; ask the user what \
                         they would like to do instead."
                    ),
                },
                // Cancel, or an action newer than this server: anything but Accept refuses.
                _ => ApprovalAnswer::Deny {
                    message: format!(
                        "The user dismissed the confirmation for '{tool}' without allowing it. \
                         Ask the user before trying again."
                    ),
                },
            }),
            Err(error) => {
                // Over the stateless protocol (2026-07-28) a server cannot send requests, and
                // a client may fail to answer; neither is the user's "no".
                tracing::warn!(tool = %tool, "could not ask the client for confirmation: {error}");
                None
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Peer<RoleServer>>> {
        // Every write is one insert or remove: a poisoned map is still consistent.
        self.peers.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// What the user reads in the client's confirmation dialog.
fn confirmation_message(request: &ApprovalRequest) -> String {
    let mut arguments = serde_json::to_string_pretty(&request.args).unwrap_or_default();
    if arguments.chars().count() > MAX_APPROVAL_ARGUMENTS_CHARS {
        arguments = arguments
            .chars()
            .take(MAX_APPROVAL_ARGUMENTS_CHARS)
            .collect::<String>()
            + "\n…";
    }
    let mut message = format!(
        "Allow toolhost to run {}? {}\n\nArguments:\n{arguments}",
        request.tool, request.reason
    );
    for warning in &request.warnings {
        message.push_str("\n\nWarning: ");
        message.push_str(warning);
    }
    message.push_str("\n\nAccept to run it once; decline to refuse.");
    message
}

/// The permission policy's approver for an MCP server: asks the user of the call's client
/// through elicitation when it can, and lets `fallback` answer otherwise.
pub struct McpApprover {
    prompts: ClientPrompts,
    fallback: Arc<dyn Approver>,
}

impl McpApprover {
    /// Asks through `prompts`; `fallback` answers for sessions whose client cannot ask
    /// (e.g. [`toolhost_core::permission::NonInteractiveApprover::refusing`]).
    pub fn new(prompts: ClientPrompts, fallback: Arc<dyn Approver>) -> Self {
        Self { prompts, fallback }
    }
}

impl std::fmt::Debug for McpApprover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpApprover")
            .field("prompts", &self.prompts)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl Approver for McpApprover {
    async fn approve(&self, request: &ApprovalRequest) -> ApprovalAnswer {
        match self.prompts.ask(request).await {
            Some(answer) => answer,
            None => self.fallback.approve(request).await,
        }
    }
}

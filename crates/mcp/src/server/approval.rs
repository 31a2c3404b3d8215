//! Approvals over MCP: a call that needs the user's confirmation (R17) asks them through the
//! client's `elicitation/create` when the client supports form elicitation; otherwise a
//! non-interactive policy decides.
//!
//! The seam is [`ClientPrompts::ask`]: it takes the pipeline's [`CallRequest`] and answers
//! with an [`Authorization`], or `None` when the call's session has no client that can ask.
//! [`ElicitationAuthorizer`] puts it in front of any [`Authorizer`]; the permission policy
//! (`--mode`, `--allow`, `--deny`) can instead call it as its approver when a rule says "ask".

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::{ElicitationMode, Peer, RoleServer};
use toolhost_core::{
    Authorization, Authorizer, CallRequest, PermissionSubject, Sensitivity, async_trait,
};

/// How long a confirmation waits for the user before the call is refused.
pub const APPROVAL_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// The longest rendering of a call's arguments shown in a confirmation, in characters.
pub const MAX_APPROVAL_ARGUMENTS_CHARS: usize = 2_000;

/// The MCP sessions whose client can ask its user, by session id (the
/// [`toolhost_core::SessionInfo::session_id`] the server gives each call). Cheap to clone;
/// the server and the authorizer share one.
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
    /// caller's non-interactive policy decides.
    pub async fn ask(&self, request: &CallRequest<'_>) -> Option<Authorization> {
        let session_id = request.session.session_id.as_deref()?;
        let peer = self.lock().get(session_id).cloned()?;
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: confirmation_message(request),
            requested_schema: ElicitationSchema::new(Default::default()),
        };
        let tool = &request.spec.name;
        match peer
            .create_elicitation_with_timeout(params, Some(APPROVAL_TIMEOUT))
            .await
        {
            Ok(answer) => Some(match answer.action {
                ElicitationAction::Accept => Authorization::Allow,
                ElicitationAction::Decline => Authorization::Deny {
                    reason: format!(
                        "The user declined to run '{tool}'. Do not retry it; ask the user what \
                         they would like to do instead."
                    ),
                },
                // Cancel, or an action newer than this server: anything but Accept refuses.
                _ => Authorization::Deny {
                    reason: format!(
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
fn confirmation_message(request: &CallRequest<'_>) -> String {
    let spec = request.spec;
    let mut arguments = serde_json::to_string_pretty(request.args).unwrap_or_default();
    if arguments.chars().count() > MAX_APPROVAL_ARGUMENTS_CHARS {
        arguments = arguments
            .chars()
            .take(MAX_APPROVAL_ARGUMENTS_CHARS)
            .collect::<String>()
            + "\n…";
    }
    let mut message = format!(
        "Allow toolhost to run {} ({})?\n\nArguments:\n{arguments}",
        spec.label, spec.name
    );
    if let PermissionSubject::Shell(shell) = request.subject {
        for warning in &shell.warnings {
            message.push_str("\n\nWarning: ");
            message.push_str(warning);
        }
        for path in &shell.outside_workspace {
            message.push_str("\n\nOutside the workspace: ");
            message.push_str(path);
        }
    }
    message.push_str("\n\nAccept to run it once; decline to refuse.");
    message
}

/// Whether a call needs the user's confirmation (R17): every tool that is not in the safe set.
pub fn needs_confirmation(request: &CallRequest<'_>) -> bool {
    request.spec.sensitivity != Sensitivity::Safe
}

/// An [`Authorizer`] for an MCP server: calls that need confirmation ask the user through the
/// client when it can, and the `unattended` policy decides every other call.
pub struct ElicitationAuthorizer {
    prompts: ClientPrompts,
    unattended: Arc<dyn Authorizer>,
}

impl ElicitationAuthorizer {
    /// Asks through `prompts`; `unattended` decides safe calls and calls no client can ask
    /// about (e.g. [`RefuseUnconfirmed`], or [`toolhost_core::AllowAll`] for `--yes`).
    pub fn new(prompts: ClientPrompts, unattended: Arc<dyn Authorizer>) -> Self {
        Self {
            prompts,
            unattended,
        }
    }
}

impl std::fmt::Debug for ElicitationAuthorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ElicitationAuthorizer")
            .field("prompts", &self.prompts)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl Authorizer for ElicitationAuthorizer {
    async fn authorize(&self, request: CallRequest<'_>) -> Authorization {
        if needs_confirmation(&request)
            && let Some(answer) = self.prompts.ask(&request).await
        {
            return answer;
        }
        self.unattended.authorize(request).await
    }

    fn wants_subject(&self) -> bool {
        // The confirmation shows shell warnings and paths outside the workspace.
        true
    }
}

/// The non-interactive policy when nobody can be asked: safe calls run, every call that needs
/// confirmation is refused with a reason that tells the model how the user can allow it.
#[derive(Clone, Copy, Debug, Default)]
pub struct RefuseUnconfirmed;

#[async_trait]
impl Authorizer for RefuseUnconfirmed {
    async fn authorize(&self, request: CallRequest<'_>) -> Authorization {
        if !needs_confirmation(&request) {
            return Authorization::Allow;
        }
        Authorization::Deny {
            reason: format!(
                "'{}' needs the user's confirmation, and this MCP client cannot ask for it (it \
                 declared no elicitation support, or uses the stateless 2026-07-28 protocol, over \
                 which the server cannot ask). Do not retry: tell the user that they can allow \
                 such calls by restarting the server as `toolhost serve --yes`, or by using an \
                 MCP client that supports elicitation.",
                request.spec.name
            ),
        }
    }

    fn wants_subject(&self) -> bool {
        false
    }
}

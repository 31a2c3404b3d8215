//! Approvals through the editor: a call that needs confirmation becomes a
//! `session/request_permission` with four options. "Always" writes the rule the approval
//! proposes to the workspace's `.toolhost/config.local.toml`, as the full-screen chat's
//! "allow always" does (`allow` for allow always, `deny` for reject always) and holds for the
//! rest of the session at once. No call runs without an answer: an editor that cannot be
//! asked, or answers `cancelled`, refuses the call.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    ToolCallId, ToolCallUpdate, ToolCallUpdateFields,
};
use toolhost_config::local_rules::{local_config, remember};
use toolhost_core::permission::{
    ApprovalAnswer, ApprovalRequest, Approver, PermissionRule, RuleList,
};

use crate::updates::UpdateTranslator;

/// The options' ids, as the editor answers with them.
pub const ALLOW_ONCE: &str = "allow_once";
/// See [`ALLOW_ONCE`].
pub const ALLOW_ALWAYS: &str = "allow_always";
/// See [`ALLOW_ONCE`].
pub const REJECT_ONCE: &str = "reject_once";
/// See [`ALLOW_ONCE`].
pub const REJECT_ALWAYS: &str = "reject_always";

/// What the model reads when the user refused a call.
const REFUSED: &str =
    "The user refused this call. Do not retry it; ask the user what to do instead.";

/// Asks the editor of one session.
pub struct EditorApprover {
    connection: ConnectionTo<Client>,
    /// Known once the session is open (the approver is made before, with the permissions).
    session_id: OnceLock<String>,
    workspace: PathBuf,
    /// Calls the editor was told of (so the question needs no title of its own).
    translator: OnceLock<Arc<UpdateTranslator>>,
    /// "Reject always" answers of this session: refused without asking again.
    rejected: Mutex<Vec<PermissionRule>>,
}

impl EditorApprover {
    /// An approver for a session in `workspace`, asking over `connection`.
    pub fn new(connection: ConnectionTo<Client>, workspace: PathBuf) -> Self {
        Self {
            connection,
            session_id: OnceLock::new(),
            workspace,
            translator: OnceLock::new(),
            rejected: Mutex::new(Vec::new()),
        }
    }

    /// The session is open: its id, and the translator that announces its calls.
    pub fn opened(&self, session_id: &str, translator: Arc<UpdateTranslator>) {
        let _ = self.session_id.set(session_id.to_owned());
        let _ = self.translator.set(translator);
    }

    fn options() -> Vec<PermissionOption> {
        vec![
            PermissionOption::new(ALLOW_ONCE, "Allow once", PermissionOptionKind::AllowOnce),
            PermissionOption::new(
                ALLOW_ALWAYS,
                "Allow always",
                PermissionOptionKind::AllowAlways,
            ),
            PermissionOption::new(REJECT_ONCE, "Reject", PermissionOptionKind::RejectOnce),
            PermissionOption::new(
                REJECT_ALWAYS,
                "Reject always",
                PermissionOptionKind::RejectAlways,
            ),
        ]
    }

    /// The rules an "always" answer writes down: those the approval proposes, else the
    /// tool's name (as "allow for this session" remembers them).
    fn rules_of(request: &ApprovalRequest) -> Vec<PermissionRule> {
        if request.suggested_rules.is_empty() {
            PermissionRule::parse(&request.tool).into_iter().collect()
        } else {
            request.suggested_rules.clone()
        }
    }

    /// Writes `rules` to the `list` of the workspace's local configuration; a file that cannot
    /// be written leaves the answer for this session only, and says so in the log.
    fn write_down(&self, list: RuleList, rules: &[PermissionRule]) {
        let path = local_config(&self.workspace);
        match remember(&path, list, rules) {
            Ok(_) => tracing::info!(
                "{} always: {} (added to {})",
                list.as_str(),
                rules
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
                path.display()
            ),
            Err(error) => tracing::warn!("for this session only: {error}"),
        }
    }

    fn question(&self, request: &ApprovalRequest) -> ToolCallUpdate {
        let announced = self
            .translator
            .get()
            .is_some_and(|translator| translator.is_running(&request.call_id));
        let mut fields = ToolCallUpdateFields::new();
        if !announced {
            // A call the editor has not seen (a sub-agent's): it needs a title of its own.
            fields = fields
                .title(format!("{}: {}", request.tool, request.reason))
                .raw_input(request.args.clone());
        }
        ToolCallUpdate::new(ToolCallId::new(request.call_id.clone()), fields)
    }
}

#[async_trait::async_trait]
impl Approver for EditorApprover {
    async fn approve(&self, request: &ApprovalRequest) -> ApprovalAnswer {
        let rules = Self::rules_of(request);
        let refused_before = {
            let rejected = self.rejected.lock().unwrap_or_else(PoisonError::into_inner);
            rules.iter().any(|rule| rejected.contains(rule))
        };
        if refused_before {
            return ApprovalAnswer::Deny {
                message: REFUSED.to_owned(),
            };
        }
        let Some(session_id) = self.session_id.get() else {
            return ApprovalAnswer::Deny {
                message: "The user could not be asked (the session is not open yet).".to_owned(),
            };
        };
        let asked = self
            .connection
            .send_request(RequestPermissionRequest::new(
                session_id.clone(),
                self.question(request),
                Self::options(),
            ))
            .block_task()
            .await;
        let chosen = match asked {
            Ok(response) => match response.outcome {
                RequestPermissionOutcome::Selected(selected) => selected.option_id.0.to_string(),
                _ => {
                    return ApprovalAnswer::Deny {
                        message: "The user cancelled the turn before answering.".to_owned(),
                    };
                }
            },
            Err(error) => {
                return ApprovalAnswer::Deny {
                    message: format!("The user could not be asked (the editor answered: {error})."),
                };
            }
        };
        match chosen.as_str() {
            ALLOW_ONCE => ApprovalAnswer::AllowOnce,
            ALLOW_ALWAYS => {
                self.write_down(RuleList::Allow, &rules);
                ApprovalAnswer::AllowForSession
            }
            REJECT_ALWAYS => {
                self.write_down(RuleList::Deny, &rules);
                self.rejected
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .extend(rules);
                ApprovalAnswer::Deny {
                    message: REFUSED.to_owned(),
                }
            }
            _ => ApprovalAnswer::Deny {
                message: REFUSED.to_owned(),
            },
        }
    }
}

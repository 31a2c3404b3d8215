//! Where a child is kept: a new child session of its caller's (when the caller's session is
//! in the store), or the stored session it goes on with (`SessionsSend` to an idle session).

use std::sync::Arc;

use toolhost_core::ToolError;
use toolhost_core::conversation::Message;

use super::SubAgents;
use super::child::ChildSpec;
use crate::session_record::RecordedSession;

fn refuse(message: impl Into<String>) -> ToolError {
    ToolError::new(message.into())
}

impl SubAgents {
    /// The child's session: a new child of the caller's (when that one is kept), or the
    /// stored session `spec.resume` names; with the conversation so far.
    #[allow(clippy::type_complexity)]
    pub(super) fn keep_session(
        &self,
        spec: &ChildSpec,
        agent: &str,
        context: toolhost_session::TurnContext,
    ) -> Result<(Option<Arc<RecordedSession>>, Vec<Message>), ToolError> {
        let context_of = &self.hub.context;
        let path =
            toolhost_session::views::store_path(&context_of.config, context_of.home.as_deref())
                .ok();
        let unkept = || {
            if spec.needs_store {
                Err(refuse(
                    "the session tools need the session store, and this run keeps no session \
                     (--no-session?)",
                ))
            } else {
                Ok((None, Vec::new()))
            }
        };
        let Some(path) = path.filter(|path| path.exists()) else {
            return unkept();
        };
        if let Some(id) = &spec.resume {
            let (session, messages) =
                RecordedSession::reopen(&path, id, context).map_err(|error| match error {
                    toolhost_session::StoreError::SessionRunning { .. } => {
                        refuse(error.to_string())
                    }
                    error => refuse(format!("session {id}: {error}")),
                })?;
            return Ok((Some(Arc::new(session)), messages));
        }
        let parent = spec.caller_session.as_deref().and_then(|id| {
            toolhost_session::SessionStore::open(&path)
                .ok()?
                .get(id)
                .ok()
                .filter(|session| session.id.as_str() == id)
                .map(|session| session.id)
        });
        let Some(parent) = parent else {
            return unkept();
        };
        let title = spec
            .title
            .clone()
            .unwrap_or_else(|| format!("{agent}: {}", spec.prompt));
        let session = RecordedSession::create_child(
            &path,
            &context_of.workspace,
            Some(&parent),
            &spec.call_id,
            &title,
            context,
        )
        .map_err(|error| {
            refuse(format!(
                "the sub-agent's session could not be created: {error}"
            ))
        })?;
        Ok((Some(Arc::new(session)), Vec::new()))
    }
}

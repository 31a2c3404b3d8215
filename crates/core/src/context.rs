//! What a running tool can see and do besides its arguments.

use std::fmt;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::content::ToolUpdate;
use crate::pipeline::authorize::Authorizer;
use crate::session::SessionInfo;
use crate::subject::{ExplicitAllow, McpServerSubject, PathFilter, PermissionSubject, SubjectPath};

/// Receives a tool's partial results while it runs (R2's `on_update`).
pub type UpdateSink = Arc<dyn Fn(ToolUpdate) + Send + Sync>;

/// How one call is run: its update sink, cancellation, abort handle and session.
///
/// `Default` gives a call nobody listens to and nobody can cancel, which is what
/// [`crate::ToolRegistry::execute`] uses.
#[derive(Clone, Default)]
pub struct CallOptions {
    /// Receives partial results.
    pub on_update: Option<UpdateSink>,
    /// Cancels this call; the tool must forward it to whatever it started.
    pub cancel: CancellationToken,
    /// Cancelled when a tool asks to abort the whole agent operation.
    pub abort: CancellationToken,
    /// The session the call belongs to.
    pub session: Arc<SessionInfo>,
}

impl fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallOptions")
            .field("on_update", &self.on_update.is_some())
            .field("cancel", &self.cancel)
            .field("abort", &self.abort)
            .field("session", &self.session)
            .finish()
    }
}

/// The context a tool receives with its arguments (R2).
#[derive(Clone)]
pub struct ToolContext {
    call_id: Arc<str>,
    on_update: Option<UpdateSink>,
    cancel: CancellationToken,
    abort: CancellationToken,
    session: Arc<SessionInfo>,
    path_filter: Option<Arc<dyn PathFilter>>,
    explicit_allow: Option<Arc<dyn ExplicitAllow>>,
    authorizer: Option<Arc<dyn Authorizer>>,
}

impl ToolContext {
    /// A context for call `call_id` run with `options`.
    pub fn new(call_id: impl Into<Arc<str>>, options: CallOptions) -> Self {
        Self {
            call_id: call_id.into(),
            on_update: options.on_update,
            cancel: options.cancel,
            abort: options.abort,
            session: options.session,
            path_filter: None,
            explicit_allow: None,
            authorizer: None,
        }
    }

    /// The same context with the paths the permission system refuses inside what the call
    /// names (the pipeline sets it from its [`crate::Authorizer::path_filter`]).
    #[must_use]
    pub fn with_path_filter(mut self, filter: Option<Arc<dyn PathFilter>>) -> Self {
        self.path_filter = filter;
        self
    }

    /// Whether the call may read or report `path`, found while it runs (a file in a folder it
    /// walks). Tools that walk or list must skip what this refuses.
    pub fn allows_path(&self, path: &SubjectPath) -> bool {
        self.path_filter
            .as_ref()
            .is_none_or(|filter| filter.allows(path))
    }

    /// Whether the call may read or report what the MCP server `server` holds, found while it
    /// runs (one server of all those a listing asks).
    pub fn allows_mcp_server(&self, server: &McpServerSubject) -> bool {
        self.path_filter
            .as_ref()
            .is_none_or(|filter| filter.allows_mcp_server(server))
    }

    /// The same context with the rules that allow subjects by name (the pipeline sets it from
    /// its [`crate::Authorizer::explicit_allow`]).
    #[must_use]
    pub fn with_explicit_allow(mut self, allow: Option<Arc<dyn ExplicitAllow>>) -> Self {
        self.explicit_allow = allow;
        self
    }

    /// Whether an allow rule names `subject` outright (`WebFetch(domain:localhost)`), which
    /// is what a tool asks before doing what it refuses by default. Without a permission
    /// system nothing is allowed by name.
    pub fn allows_explicitly(&self, subject: &PermissionSubject) -> bool {
        self.explicit_allow
            .as_ref()
            .is_some_and(|allow| allow.allows_explicitly(subject))
    }

    /// The same context with the authoriser that let this call through (the pipeline sets
    /// its own).
    #[must_use]
    pub fn with_authorizer(mut self, authorizer: Option<Arc<dyn Authorizer>>) -> Self {
        self.authorizer = authorizer;
        self
    }

    /// The authoriser that let this call through: the one a tool must ask about what it does
    /// on the caller's behalf besides its own call (a custom tool's `exec`, a Bash command's
    /// calls to the MCP bridge). A sub-agent's calls carry the sub-agent's, which may be
    /// stricter than the registry's the tool was built with. `None` outside a pipeline.
    pub fn authorizer(&self) -> Option<&Arc<dyn Authorizer>> {
        self.authorizer.as_ref()
    }

    /// Whether some paths may be refused, so that a walk can skip building subjects otherwise.
    pub fn filters_paths(&self) -> bool {
        self.path_filter
            .as_ref()
            .is_some_and(|filter| filter.filters_paths())
    }

    /// The id of this tool call.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// Streams a partial result to whoever listens (a UI, an MCP progress notification).
    pub fn on_update(&self, update: ToolUpdate) {
        if let Some(sink) = &self.on_update {
            sink(update);
        }
    }

    /// Whether anybody listens to updates, so a tool can skip building them.
    pub fn wants_updates(&self) -> bool {
        self.on_update.is_some()
    }

    /// The call's cancellation token. A tool must stop soon after it fires and forward it to
    /// every subprocess or request it started.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Whether the call has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Asks the running agent operation to stop after this call.
    pub fn abort(&self) {
        self.abort.cancel();
    }

    /// The session this call belongs to.
    pub fn session(&self) -> &SessionInfo {
        &self.session
    }
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("call_id", &self.call_id)
            .field("cancelled", &self.cancel.is_cancelled())
            .field("session", &self.session)
            .finish()
    }
}

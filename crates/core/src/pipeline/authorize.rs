//! The authorisation step: whether a validated call may run.

use std::sync::Arc;

use serde_json::Value;

use crate::session::SessionInfo;
use crate::spec::ToolSpec;
use crate::subject::{ExplicitAllow, PathFilter, PermissionSubject};

/// Works out what `Tool(specifier)` rules match for other arguments of the tool being called
/// (its [`crate::Tool::permission_subject`]); any `Fn(&Value) -> PermissionSubject` is one.
/// Not the tool itself, so that this step does not depend on the tool contract, which
/// depends on the call's context, which holds an authoriser.
pub trait SubjectOf: Send + Sync {
    /// The subject of a call of this tool with `args`.
    fn subject(&self, args: &Value) -> PermissionSubject;
}

impl<F> SubjectOf for F
where
    F: Fn(&Value) -> PermissionSubject + Send + Sync,
{
    fn subject(&self, args: &Value) -> PermissionSubject {
        self(args)
    }
}

/// A call about to run, as the authorisation step sees it.
#[derive(Clone, Copy)]
pub struct CallRequest<'a> {
    /// The id of the call.
    pub call_id: &'a str,
    /// The spec of the tool being called.
    pub spec: &'a ToolSpec,
    /// The coerced and validated arguments.
    pub args: &'a Value,
    /// The session the call belongs to.
    pub session: &'a SessionInfo,
    /// What the tool says `Tool(specifier)` rules should match.
    pub subject: &'a PermissionSubject,
    /// The subject of other arguments, so that an authoriser that rewrites the arguments can
    /// judge the new ones.
    pub subject_of: &'a dyn SubjectOf,
}

impl std::fmt::Debug for CallRequest<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallRequest")
            .field("call_id", &self.call_id)
            .field("tool", &self.spec.name)
            .field("args", &self.args)
            .field("session", &self.session)
            .field("subject", &self.subject)
            .finish_non_exhaustive()
    }
}

/// The decision on one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Authorization {
    /// The call may run.
    Allow,
    /// The call may run with changes (a PreToolUse hook's): other arguments, which the
    /// pipeline coerces and validates again before running the tool with them, and context
    /// appended to the result the model reads.
    AllowAmended(Amendment),
    /// The call is refused; the reason goes back to the model and should say how the user
    /// can allow it, when they can.
    Deny {
        /// Why, written for the model.
        reason: String,
    },
}

/// Decides whether calls may run: the permission system implements this.
#[async_trait::async_trait]
pub trait Authorizer: Send + Sync {
    /// Decides on one call. May wait for a person; the pipeline cancels the wait when the call
    /// is cancelled.
    async fn authorize(&self, request: CallRequest<'_>) -> Authorization;

    /// Whether [`CallRequest::subject`] is needed for a call of `spec`; when `false` the
    /// pipeline skips working it out (resolving paths, parsing a command) and passes
    /// [`PermissionSubject::None`].
    fn wants_subject(&self, _spec: &ToolSpec) -> bool {
        true
    }

    /// For a call it allowed: which paths found while the call runs (inside a folder it walks)
    /// the tool must skip. `None`: every path the call reaches is fine.
    fn path_filter(&self, _spec: &ToolSpec) -> Option<Arc<dyn PathFilter>> {
        None
    }

    /// For a call it allowed: the allow rules that name subjects of `spec` outright, which
    /// the tool consults before doing what it refuses by default. `None`: no rule does.
    fn explicit_allow(&self, _spec: &ToolSpec) -> Option<Arc<dyn ExplicitAllow>> {
        None
    }

    /// The same decisions for calls where nobody can be asked (those reaching the MCP bridge
    /// from inside a Bash command): a call that would ask is refused instead. `None`: this
    /// authoriser never asks anyone, so it serves as it is.
    fn without_asking(&self) -> Option<Arc<dyn Authorizer>> {
        None
    }
}

/// Whether `a` and `b` are the same authoriser (one allocation), as a tool tells whose
/// permissions a call carries ([`crate::ToolContext::authorizer`]). Compares the data
/// pointers only: the vtable of one type may differ between codegen units.
pub fn same_authorizer(a: &Arc<dyn Authorizer>, b: &Arc<dyn Authorizer>) -> bool {
    std::ptr::addr_eq(Arc::as_ptr(a), Arc::as_ptr(b))
}

/// Allows every call: the registry's default until a permission policy is installed.
#[derive(Clone, Copy, Debug, Default)]
pub struct AllowAll;

#[async_trait::async_trait]
impl Authorizer for AllowAll {
    async fn authorize(&self, _request: CallRequest<'_>) -> Authorization {
        Authorization::Allow
    }

    fn wants_subject(&self, _spec: &ToolSpec) -> bool {
        false
    }
}

/// What an authoriser changed about a call it allows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Amendment {
    /// Arguments to run the tool with instead of the model's.
    pub args: Option<Value>,
    /// Text appended to the result, for the model.
    pub context: Option<String>,
}

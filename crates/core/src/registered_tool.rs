//! One registered tool with what is computed once for it. The registry holds these and the
//! pipeline runs them; neither imports the other for it.

use std::sync::{Arc, OnceLock};

use serde_json::Value;

use crate::pipeline::authorize::SubjectOf;
use crate::pipeline::validate::ArgumentValidator;
use crate::spec::ToolSpec;
use crate::subject::PermissionSubject;
use crate::tool::Tool;

/// A tool with what is computed once for it: its spec and its compiled validator.
///
/// A spec from elsewhere (an MCP server, a JavaScript module) is read and its schema compiled
/// at registration, so that a broken one is refused there. The spec of a tool whose schema is
/// derived from a Rust type ([`Tool::schema_is_trusted`]) is derived on first use instead
/// (a listing, a call, a filter that reads it), once: schema generation was a fifth of
/// `serve`'s start-up, for tools a session may never list or call.
pub(crate) struct RegisteredTool {
    pub(crate) spec: OnceLock<ToolSpec>,
    pub(crate) validator: ArgumentValidator,
    pub(crate) tool: Arc<dyn Tool>,
}

impl RegisteredTool {
    /// The tool's spec, read from the tool the first time it is needed.
    pub(crate) fn spec(&self) -> &ToolSpec {
        self.spec.get_or_init(|| self.tool.spec())
    }
}

impl SubjectOf for RegisteredTool {
    fn subject(&self, args: &Value) -> PermissionSubject {
        self.tool.permission_subject(args)
    }
}

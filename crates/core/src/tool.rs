//! The tool contract: what the registry runs (R2), in its dynamic and its typed form.

use std::future::Future;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::content::ToolOutput;
use crate::context::ToolContext;
use crate::error::ToolError;
use crate::session::{SessionEvent, SessionInfo};
use crate::spec::{ToolSpec, schema_for_params};
use crate::subject::PermissionSubject;

/// A tool the registry can run: the dynamic form, taking raw JSON arguments.
///
/// Tools written in Rust usually implement [`TypedTool`] instead, which derives the schema
/// and parses the arguments; tools whose schema is only known at run time (MCP, JavaScript)
/// implement this trait directly.
#[async_trait::async_trait]
pub trait Tool: Send + Sync + 'static {
    /// The tool's spec. Read once by a registry: when the tool is registered, or, for a tool
    /// whose schema is trusted ([`Self::schema_is_trusted`]), the first time the registry needs
    /// it (a listing, a call, a filter on specs).
    fn spec(&self) -> ToolSpec;

    /// The tool's name, as [`Self::spec`] gives it. Override it where the spec is costly to
    /// make and the name is not ([`TypedTool`]'s schema is derived on every `spec`).
    fn name(&self) -> String {
        self.spec().name
    }

    /// Runs the tool on arguments that were already coerced and validated against
    /// `spec().parameters`. Must honour `ctx.cancellation()`.
    async fn execute(&self, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError>;

    /// What `Tool(specifier)` permission rules match this call against; called with the
    /// coerced, validated arguments before authorisation.
    fn permission_subject(&self, _args: &Value) -> PermissionSubject {
        PermissionSubject::None
    }

    /// Whether `spec().parameters` was written by this program — derived from a Rust type (as
    /// [`TypedTool`]'s always is) or a literal in its code — so that it compiles: the registry
    /// then reads the spec when it first needs it and compiles the schema on the first call,
    /// instead of both at registration, and start-up derives no schema and builds no validator
    /// for tools that are never listed or called. `false` (the default) for schemas from
    /// elsewhere (MCP servers, JavaScript modules), which are checked when registered.
    fn schema_is_trusted(&self) -> bool {
        false
    }

    /// Hears a session lifecycle event (R4). Errors are logged and never stop the session.
    async fn on_session(
        &self,
        _event: &SessionEvent,
        _session: &SessionInfo,
    ) -> Result<(), ToolError> {
        Ok(())
    }
}

/// A tool whose parameters are a Rust type: the schema and the parsing have one source.
pub trait TypedTool: Send + Sync + 'static {
    /// The parameters; their JSON Schema comes from [`JsonSchema`], their parsing from serde.
    type Params: DeserializeOwned + JsonSchema + Send;

    /// Name, label, description, annotations and sensitivity. The `parameters` field is
    /// replaced with the schema of [`Self::Params`].
    fn describe(&self) -> ToolSpec;

    /// The name [`Self::describe`] gives. Override it where the description is costly to make
    /// (it lists what is read from disk) and the name is not: registering a tool asks for its
    /// name only.
    fn tool_name(&self) -> String {
        self.describe().name
    }

    /// Runs the tool. Must honour `ctx.cancellation()`.
    fn run(
        &self,
        params: Self::Params,
        ctx: ToolContext,
    ) -> impl Future<Output = Result<ToolOutput, ToolError>> + Send;

    /// What `Tool(specifier)` permission rules match this call against (see
    /// [`Tool::permission_subject`]).
    fn permission_subject(&self, _args: &Value) -> PermissionSubject {
        PermissionSubject::None
    }

    /// Hears a session lifecycle event (R4).
    fn on_session(
        &self,
        _event: &SessionEvent,
        _session: &SessionInfo,
    ) -> impl Future<Output = Result<(), ToolError>> + Send {
        async { Ok(()) }
    }
}

#[async_trait::async_trait]
impl<T: TypedTool> Tool for T {
    fn spec(&self) -> ToolSpec {
        self.describe()
            .with_parameters(schema_for_params::<T::Params>())
    }

    fn name(&self) -> String {
        self.tool_name()
    }

    async fn execute(&self, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let params: T::Params = serde_json::from_value(args)
            .map_err(|error| ToolError::new(format!("Invalid arguments: {error}")))?;
        self.run(params, ctx).await
    }

    fn permission_subject(&self, args: &Value) -> PermissionSubject {
        TypedTool::permission_subject(self, args)
    }

    fn schema_is_trusted(&self) -> bool {
        true
    }

    async fn on_session(
        &self,
        event: &SessionEvent,
        session: &SessionInfo,
    ) -> Result<(), ToolError> {
        TypedTool::on_session(self, event, session).await
    }
}

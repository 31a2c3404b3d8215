//! The tool contract, the registry and the one execution pipeline of toolhost.
//!
//! Everything that runs a tool — the agent loop, the MCP server, `toolhost call` — goes
//! through [`ToolRegistry::execute`] (or [`ToolRegistry::execute_with`]), which applies the
//! same steps to every call, in this order:
//!
//! 1. **lookup** — an unknown name becomes an error result listing the available tools and
//!    suggesting the closest name (R10);
//! 2. **coercion** — common model mistakes are repaired against the schema: `"5"` where a
//!    number is expected, JSON text where an object is expected, a lone value where an array is
//!    expected (R11);
//! 3. **validation** — full JSON Schema, with validators compiled once per tool; each error
//!    names the parameter and what was expected (R12);
//! 4. **authorisation** — an [`Authorizer`] may refuse the call, or allow it with rewritten
//!    arguments (validated again) and context for the model; [`permission::PermissionPolicy`]
//!    is the permission system's authoriser (modes, rules, hooks, approvals, audit);
//! 5. **execution** — a tool that fails, panics or is cancelled becomes an error result (R3);
//! 6. **result handlers** — [`ResultHandler`]s may rewrite content, details and the error
//!    flag (R6);
//! 7. **truncation** — text over `max_chars` keeps its head and tail on line boundaries, with
//!    a marker that says how much was cut (R14, R39);
//! 8. **hint** — every error result ends with [`ERROR_HINT`] (R15).
//!
//! # Defining a tool
//!
//! Built-in tools declare their parameters once, as a `serde` + `schemars` struct; the JSON
//! Schema the model sees and the parsing of its arguments come from the same type:
//!
//! ```
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use toolhost_core::{ToolContext, ToolError, ToolOutput, ToolRegistry, ToolSpec, TypedTool};
//!
//! /// Parameters of the `Greet` tool.
//! #[derive(Deserialize, JsonSchema)]
//! struct GreetParams {
//!     /// Who to greet.
//!     name: String,
//!     /// How many times.
//!     times: Option<u32>,
//! }
//!
//! struct Greet;
//!
//! impl TypedTool for Greet {
//!     type Params = GreetParams;
//!
//!     fn describe(&self) -> ToolSpec {
//!         ToolSpec::new("Greet", "Greets someone by name.").with_label("Greet")
//!     }
//!
//!     async fn run(&self, params: GreetParams, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
//!         let times = params.times.unwrap_or(1) as usize;
//!         Ok(ToolOutput::text(format!("Hello, {}!\n", params.name).repeat(times)))
//!     }
//! }
//!
//! # tokio_test_block_on(async {
//! let registry = ToolRegistry::new();
//! registry.register(Greet).unwrap();
//! // "2" is coerced to 2 before validation.
//! let result = registry.execute("call-1", "Greet", serde_json::json!({"name": "Ada", "times": "2"})).await;
//! assert!(!result.is_error);
//! assert_eq!(result.text(), "Hello, Ada!\nHello, Ada!\n");
//! # });
//! # fn tokio_test_block_on<F: std::future::Future>(f: F) -> F::Output {
//! #     tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f)
//! # }
//! ```

mod content;
mod context;
pub mod conversation;
pub mod deferral;
mod definitions;
mod error;
mod family;
mod origin;
pub mod permission;
mod pipeline;
mod registered_tool;
mod registry;
mod session;
mod spec;
mod subject;
mod tool;

pub use content::{ContentBlock, ToolCallResult, ToolOutput, ToolUpdate, tool_reference_text};
pub use context::{CallOptions, ToolContext, UpdateSink};
pub use definitions::DefinitionFormat;
pub use error::{RegistryError, ToolError};
pub use family::PermissionFamily;
pub use origin::ToolOrigin;
pub use pipeline::authorize::{
    AllowAll, Amendment, Authorization, Authorizer, CallRequest, SubjectOf, same_authorizer,
};
pub use pipeline::coerce::coerce_arguments;
pub use pipeline::hint::ERROR_HINT;
pub use pipeline::result_handler::ResultHandler;
pub use pipeline::truncate::{DEFAULT_MAX_CHARS, TRUNCATION_TAG, truncate_head_tail};
pub use registry::{ToolRegistry, ToolRegistryBuilder};
pub use session::{SessionEvent, SessionInfo, SessionListenerFailure, SessionState};
pub use spec::{ForwardedDefinition, Sensitivity, ToolAnnotations, ToolSpec, schema_for_params};
pub use subject::{
    ExplicitAllow, McpServerSubject, PathFilter, PermissionSubject, ShellSubject, SubjectPath,
};
pub use tool::{Tool, TypedTool};

/// The README's examples compile and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeExamples;

/// Re-exported so that tool authors use the same versions as the registry.
pub use async_trait::async_trait;
pub use tokio_util::sync::CancellationToken;

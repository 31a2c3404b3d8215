//! The tool registry (R7, R8): the set of tools a model may call, and the door to the pipeline.

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, OnceLock, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use futures::FutureExt as _;
use indexmap::IndexMap;
use serde_json::Value;
use tokio::sync::watch;

use crate::content::ToolCallResult;
use crate::context::CallOptions;
use crate::definitions::DefinitionFormat;
use crate::error::RegistryError;
use crate::pipeline::authorize::{AllowAll, Authorizer};
use crate::pipeline::result_handler::ResultHandler;
use crate::pipeline::truncate::DEFAULT_MAX_CHARS;
use crate::pipeline::validate::ArgumentValidator;
use crate::pipeline::{Pipeline, unknown_tool_message};
use crate::registered_tool::RegisteredTool;
use crate::session::SessionInfo;
use crate::session::{SessionEvent, SessionListenerFailure};
use crate::spec::ToolSpec;
use crate::tool::Tool;

/// The longest tool name function-calling APIs accept.
pub const MAX_TOOL_NAME_LEN: usize = 64;

/// The registry: tools by name, in registration order, and the pipeline every call goes
/// through. `Send + Sync`: share it in an `Arc` and run many calls at once.
pub struct ToolRegistry {
    tools: RwLock<IndexMap<String, Arc<RegisteredTool>>>,
    pipeline: Arc<Pipeline>,
    changes: watch::Sender<u64>,
}

impl Default for ToolRegistry {
    fn default() -> Self {
        Self::new()
    }
}

impl ToolRegistry {
    /// An empty registry with the default pipeline: 50 KB results, every call allowed.
    pub fn new() -> Self {
        Self::builder().build()
    }

    /// A builder for a registry with its own pipeline settings.
    pub fn builder() -> ToolRegistryBuilder {
        ToolRegistryBuilder::default()
    }

    /// Registers a tool. Refused when the name exists (R8), is not a valid function name, or
    /// the parameters schema does not compile.
    pub fn register(&self, tool: impl Tool) -> Result<(), RegistryError> {
        self.register_arc(Arc::new(tool))
    }

    /// Registers a shared tool; see [`Self::register`].
    pub fn register_arc(&self, tool: Arc<dyn Tool>) -> Result<(), RegistryError> {
        let (name, entry) = if tool.schema_is_trusted() {
            let name = tool.name();
            let entry = RegisteredTool {
                spec: OnceLock::new(),
                validator: ArgumentValidator::deferred(),
                tool,
            };
            (name, entry)
        } else {
            let spec = tool.spec();
            let validator = ArgumentValidator::compile(&spec.parameters).map_err(|reason| {
                RegistryError::InvalidSchema {
                    name: spec.name.clone(),
                    reason,
                }
            })?;
            let name = spec.name.clone();
            let entry = RegisteredTool {
                spec: OnceLock::from(spec),
                validator,
                tool,
            };
            (name, entry)
        };
        check_name(&name)?;
        let mut tools = self.write();
        if tools.contains_key(&name) {
            return Err(RegistryError::Duplicate(name));
        }
        tools.insert(name, Arc::new(entry));
        drop(tools);
        self.changes.send_modify(|version| *version += 1);
        Ok(())
    }

    /// Registers every tool that can be; returns the refusals (R8: earlier tools win).
    #[must_use = "refused tools are only reported through the returned errors"]
    pub fn register_all(
        &self,
        tools: impl IntoIterator<Item = Arc<dyn Tool>>,
    ) -> Vec<RegistryError> {
        tools
            .into_iter()
            .filter_map(|tool| self.register_arc(tool).err())
            .collect()
    }

    /// Removes a tool; `false` when there was none of that name.
    pub fn unregister(&self, name: &str) -> bool {
        let removed = self.write().shift_remove(name).is_some();
        if removed {
            self.changes.send_modify(|version| *version += 1);
        }
        removed
    }

    /// The tool of that name.
    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        self.read().get(name).map(|entry| Arc::clone(&entry.tool))
    }

    /// The spec the tool of that name was registered with.
    pub fn spec(&self, name: &str) -> Option<ToolSpec> {
        self.read().get(name).map(|entry| entry.spec().clone())
    }

    /// Whether a tool of that name is registered.
    pub fn has(&self, name: &str) -> bool {
        self.read().contains_key(name)
    }

    /// Why a call of `name` cannot even be looked up (R10), or `None` when a tool of that
    /// name is registered: "Unknown tool 'Raed'. Did you mean 'Read'? Available tools: …".
    /// For a front end that answers an unknown name otherwise than with an error result (an
    /// MCP server's JSON-RPC error).
    pub fn unknown_tool(&self, name: &str) -> Option<String> {
        let tools = self.read();
        (!tools.contains_key(name))
            .then(|| unknown_tool_message(name, tools.keys().map(String::as_str)))
    }

    /// Every tool, in registration order.
    pub fn all(&self) -> Vec<Arc<dyn Tool>> {
        self.read()
            .values()
            .map(|entry| Arc::clone(&entry.tool))
            .collect()
    }

    /// Every spec, in registration order.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.read()
            .values()
            .map(|entry| entry.spec().clone())
            .collect()
    }

    /// Whether the spec of some registered tool satisfies `predicate` (without copying the
    /// specs, as [`Self::specs`] does).
    pub fn any_spec(&self, mut predicate: impl FnMut(&ToolSpec) -> bool) -> bool {
        self.read().values().any(|entry| predicate(entry.spec()))
    }

    /// Every name, in registration order.
    pub fn names(&self) -> Vec<String> {
        self.read().keys().cloned().collect()
    }

    /// How many tools are registered.
    pub fn len(&self) -> usize {
        self.read().len()
    }

    /// Whether no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.read().is_empty()
    }

    /// Definitions in OpenAI function-calling format.
    pub fn definitions(&self) -> Vec<Value> {
        self.definitions_as(DefinitionFormat::OpenAi)
    }

    /// Definitions in the given format.
    pub fn definitions_as(&self, format: DefinitionFormat) -> Vec<Value> {
        self.read()
            .values()
            .map(|entry| format.render(entry.spec()))
            .collect()
    }

    /// A new registry with only the named tools, sharing this one's tools and pipeline (R16).
    /// Names that are not registered are ignored.
    pub fn filtered<I, S>(&self, allowed: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let tools = self.read();
        let kept = allowed
            .into_iter()
            .filter_map(|name| tools.get_key_value(name.as_ref()))
            .map(|(name, entry)| (name.clone(), Arc::clone(entry)));
        let mut selected: IndexMap<String, Arc<RegisteredTool>> = kept.collect();
        // Keep this registry's order, whatever order the allowed names came in.
        selected.sort_by_cached_key(|name, _| tools.get_index_of(name));
        self.derived(selected)
    }

    /// A new registry with the tools whose spec satisfies `keep`, e.g. read-only tools for
    /// plan mode (R16).
    pub fn filter(&self, keep: impl Fn(&ToolSpec) -> bool) -> Self {
        self.derived(self.entries_where(|entry| keep(entry.spec())))
    }

    /// A new registry with every tool of this one, sharing its tools and pipeline: what
    /// `filter(|_| true)` gives, without deriving any spec that was not needed yet.
    pub fn share_all(&self) -> Self {
        self.derived(self.entries_where(|_| true))
    }

    /// A receiver whose value changes whenever a tool is registered or removed (for MCP's
    /// `notifications/tools/list_changed`).
    pub fn subscribe_changes(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// How many times a tool was registered or removed: equal values, the same tool set.
    pub fn version(&self) -> u64 {
        *self.changes.borrow()
    }

    /// Runs one call through the whole pipeline, with no update listener and no cancellation.
    pub async fn execute(
        &self,
        tool_call_id: &str,
        tool_name: &str,
        args: Value,
    ) -> ToolCallResult {
        self.execute_with(tool_call_id, tool_name, args, CallOptions::default())
            .await
    }

    /// Runs one call through the whole pipeline with an update sink, cancellation and session.
    pub async fn execute_with(
        &self,
        tool_call_id: &str,
        tool_name: &str,
        args: Value,
        options: CallOptions,
    ) -> ToolCallResult {
        let entry = self.read().get(tool_name).map(Arc::clone);
        match entry {
            Some(entry) => {
                self.pipeline
                    .run(&entry, tool_call_id, tool_name, args, options)
                    .await
            }
            None => {
                let message = {
                    let tools = self.read();
                    unknown_tool_message(tool_name, tools.keys().map(String::as_str))
                };
                self.pipeline.reject(tool_call_id, tool_name, message)
            }
        }
    }

    /// The error result for a call that cannot even be looked up: the model's arguments were
    /// not JSON, say. Finished like every other result (truncated, with [`crate::ERROR_HINT`]),
    /// so a caller never formats an error of its own.
    pub fn reject_call(
        &self,
        tool_call_id: &str,
        tool_name: &str,
        message: String,
    ) -> ToolCallResult {
        self.pipeline.reject(tool_call_id, tool_name, message)
    }

    /// Tells every tool of a session event (R4). A listener that fails or panics is logged
    /// as a warning and reported in the returned list; the others still hear the event.
    pub async fn dispatch_session_event(
        &self,
        event: &SessionEvent,
        session: &SessionInfo,
    ) -> Vec<SessionListenerFailure> {
        let entries = self.entries_where(|_| true);
        let mut failures = Vec::new();
        for (name, entry) in entries {
            let outcome = AssertUnwindSafe(entry.tool.on_session(event, session))
                .catch_unwind()
                .await;
            let message = match outcome {
                Ok(Ok(())) => continue,
                Ok(Err(error)) => error.message,
                Err(_) => "the listener panicked".to_owned(),
            };
            tracing::warn!(
                tool = %name,
                event = event.name(),
                "session listener failed: {message}"
            );
            failures.push(SessionListenerFailure {
                tool: name,
                message,
            });
        }
        failures
    }

    /// The entries that `keep` accepts, shared, in registration order (the lock is released
    /// on return).
    fn entries_where(
        &self,
        keep: impl Fn(&RegisteredTool) -> bool,
    ) -> IndexMap<String, Arc<RegisteredTool>> {
        self.read()
            .iter()
            .filter(|(_, entry)| keep(entry))
            .map(|(name, entry)| (name.clone(), Arc::clone(entry)))
            .collect()
    }

    fn derived(&self, tools: IndexMap<String, Arc<RegisteredTool>>) -> Self {
        Self {
            tools: RwLock::new(tools),
            pipeline: Arc::clone(&self.pipeline),
            changes: watch::Sender::new(0),
        }
    }

    // A panic while holding the lock cannot leave the map half-updated (every write is one
    // insert or remove), so a poisoned lock is still consistent.
    fn read(&self) -> RwLockReadGuard<'_, IndexMap<String, Arc<RegisteredTool>>> {
        self.tools.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, IndexMap<String, Arc<RegisteredTool>>> {
        self.tools.write().unwrap_or_else(PoisonError::into_inner)
    }
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRegistry")
            .field("tools", &self.names())
            .field("max_chars", &self.pipeline.max_chars)
            .finish()
    }
}

/// Builds a [`ToolRegistry`] with its pipeline settings.
pub struct ToolRegistryBuilder {
    max_chars: usize,
    authorizer: Arc<dyn Authorizer>,
    result_handlers: Vec<Arc<dyn ResultHandler>>,
}

impl Default for ToolRegistryBuilder {
    fn default() -> Self {
        Self {
            max_chars: DEFAULT_MAX_CHARS,
            authorizer: Arc::new(AllowAll),
            result_handlers: Vec::new(),
        }
    }
}

impl ToolRegistryBuilder {
    /// Results whose text is longer than this are truncated (default [`DEFAULT_MAX_CHARS`]).
    #[must_use]
    pub fn max_chars(mut self, max_chars: usize) -> Self {
        self.max_chars = max_chars;
        self
    }

    /// The authorisation step (default: [`AllowAll`]).
    #[must_use]
    pub fn authorizer(mut self, authorizer: Arc<dyn Authorizer>) -> Self {
        self.authorizer = authorizer;
        self
    }

    /// Adds a result handler; handlers run in the order they are added (R6).
    #[must_use]
    pub fn result_handler(mut self, handler: Arc<dyn ResultHandler>) -> Self {
        self.result_handlers.push(handler);
        self
    }

    /// The registry, empty.
    pub fn build(self) -> ToolRegistry {
        ToolRegistry {
            tools: RwLock::new(IndexMap::new()),
            pipeline: Arc::new(Pipeline {
                max_chars: self.max_chars,
                authorizer: self.authorizer,
                result_handlers: self.result_handlers,
            }),
            changes: watch::Sender::new(0),
        }
    }
}

fn check_name(name: &str) -> Result<(), RegistryError> {
    let reason = if name.is_empty() {
        "it is empty"
    } else if name.len() > MAX_TOOL_NAME_LEN {
        "it is longer than 64 characters"
    } else if !name
        .bytes()
        .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-')
    {
        "it contains a character other than letters, digits, '_' and '-'"
    } else {
        return Ok(());
    };
    Err(RegistryError::InvalidName {
        name: name.to_owned(),
        reason,
    })
}

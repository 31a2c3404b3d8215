//! The MCP server: any [`ToolRegistry`] served to MCP clients.
//!
//! [`McpServer`] holds what every connection shares (the registry, the client prompts);
//! [`McpServer::session`] makes the handler of one connection, an [`McpSession`], which is
//! what rmcp drives. Every `tools/call` goes through [`ToolRegistry::execute_with`], the one
//! pipeline.
//!
//! With [`McpServer::with_deferred_tools`], a large tool set is listed the way the agent loop
//! offers it (see [`toolhost_core::deferral`]): the tools past the budget are left out of
//! `tools/list` and named in `tool_search`'s description; a client's `tool_search` call loads
//! tools for that client's session alone, which is told with `tools/list_changed`. A deferred
//! tool can still be called by name at any time.

pub mod approval;
pub mod catalog;
pub mod convert;
mod deferral;
pub mod hang_up;
pub mod http;
pub mod progress;
mod socket_stdio;
mod typed_calls;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult,
    GetPromptRequestParams, GetPromptResponse, Implementation, InitializeRequestParams,
    InitializeResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt as _};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use toolhost_core::deferral::{DeferralPolicy, LoadedTools, SessionLoads};
use toolhost_core::{CallOptions, SessionInfo, ToolRegistry};

use crate::error::ServeError;
use approval::ClientPrompts;
use catalog::ServedCatalog;
use convert::{call_result_from, tool_from_spec};
use deferral::DeferralPlanner;
use progress::ProgressForwarder;
use typed_calls::typed_call_transport;

/// The name the server gives itself in `initialize` and `server/discover`.
pub const SERVER_NAME: &str = "toolhost";

/// What every connection of one server shares.
#[derive(Clone, Debug)]
pub struct McpServer {
    registry: Arc<ToolRegistry>,
    prompts: ClientPrompts,
    instructions: Option<String>,
    sessions: Arc<AtomicU64>,
    /// What is deferred and what each session loaded, when tools are deferred.
    deferred: Option<Arc<DeferralPlanner>>,
    /// The prompts, resources and completions offered besides the tools.
    catalog: Option<Arc<dyn ServedCatalog>>,
    /// Called when a client has completed its handshake (`notifications/initialized`).
    on_initialized: Option<InitializedHook>,
}

/// What [`McpServer::with_on_initialized`] calls.
#[derive(Clone)]
struct InitializedHook(Arc<dyn Fn() + Send + Sync>);

impl std::fmt::Debug for InitializedHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InitializedHook")
    }
}

impl McpServer {
    /// A server for `registry`. Confirmations go nowhere until [`Self::with_prompts`] shares
    /// the [`ClientPrompts`] that the registry's approver asks through.
    pub fn new(registry: Arc<ToolRegistry>) -> Self {
        Self {
            registry,
            prompts: ClientPrompts::new(),
            instructions: None,
            sessions: Arc::new(AtomicU64::new(0)),
            deferred: None,
            catalog: None,
            on_initialized: None,
        }
    }

    /// The same server, calling `hook` each time a client completes its handshake (a gateway
    /// starts its own servers then, after its client's first answer).
    #[must_use]
    pub fn with_on_initialized(mut self, hook: Arc<dyn Fn() + Send + Sync>) -> Self {
        self.on_initialized = Some(InitializedHook(hook));
        self
    }

    /// The same server, offering `catalog`'s prompts, resources and completions (and
    /// declaring the three capabilities, with `listChanged`).
    #[must_use]
    pub fn with_catalog(mut self, catalog: Arc<dyn ServedCatalog>) -> Self {
        self.catalog = Some(catalog);
        self
    }

    /// The same server, deferring what `policy` defers of the registry's tools: they are
    /// left out of `tools/list` until the session loads them with `tool_search`, which this
    /// registers while anything is deferred. Nothing changes while everything fits the
    /// budget. Tools that join the registry later (a server that starts late) are planned
    /// with the rest when a client next lists or calls tools.
    ///
    /// # Errors
    /// The registry refused `tool_search` (a tool of that name exists).
    pub fn with_deferred_tools(
        mut self,
        policy: &DeferralPolicy,
    ) -> Result<Self, toolhost_core::RegistryError> {
        let planner = DeferralPlanner::new(policy.clone(), Arc::clone(&self.registry))?;
        self.deferred = Some(Arc::new(planner));
        Ok(self)
    }

    /// The same server, registering clients that support elicitation in `prompts`.
    #[must_use]
    pub fn with_prompts(mut self, prompts: ClientPrompts) -> Self {
        self.prompts = prompts;
        self
    }

    /// The same server, with `instructions` for the model in the `initialize` result.
    #[must_use]
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// The registry served.
    pub fn registry(&self) -> &Arc<ToolRegistry> {
        &self.registry
    }

    /// The handler of one new connection (one stdio client, one HTTP session).
    pub fn session(&self) -> McpSession {
        let number = self.sessions.fetch_add(1, Ordering::Relaxed) + 1;
        let id = format!("mcp-{number}");
        McpSession {
            server: self.clone(),
            state: Arc::new(SessionState {
                session: Arc::new(SessionInfo {
                    session_id: Some(id.clone()),
                    model: None,
                    ..SessionInfo::default()
                }),
                loaded: self.deferred.as_ref().map(|planner| {
                    let loads = planner.loads();
                    (Arc::clone(loads), loads.session(&id))
                }),
                id,
                prompts: self.prompts.clone(),
                closed: CancellationToken::new(),
            }),
        }
    }

    /// Serves one client over standard input and output until it disconnects. Nothing else
    /// may write to stdout meanwhile: logs go to stderr.
    ///
    /// When both streams are pipes (how MCP clients start a server), they are read and written
    /// on the runtime's reactor, through descriptors of their own opened non-blocking
    /// (`rmcp::transport::stdio_pipes`). Tokio's `Stdin`/`Stdout` would hand every read and
    /// every write to a blocking-pool thread: ~8 futex calls and two thread wake-ups per
    /// message. When both are sockets (how Node-based clients start a server) they are read and
    /// written on the reactor too (`socket_stdio`). Anything else (a terminal, a file) falls back
    /// to those handles. Either way, `tools/call` requests are parsed by [`typed_call_transport`]
    /// rather than by rmcp's generic message parser.
    pub async fn serve_stdio(&self) -> Result<(), ServeError> {
        let running = match socket_stdio::socket_stdio() {
            Some((read, write)) => {
                let transport = typed_call_transport(read, write);
                self.session().serve(transport).await
            }
            None => {
                let (read, write) = rmcp::transport::stdio_pipes();
                let transport = typed_call_transport(read, write);
                self.session().serve(transport).await
            }
        }
        .map_err(|error| ServeError::Handshake(error.to_string()))?;
        running
            .waiting()
            .await
            .map_err(|error| ServeError::Transport(error.to_string()))?;
        Ok(())
    }
}

/// What lives exactly as long as one connection; dropping it forgets the client's prompt
/// and stops its list-change watcher.
#[derive(Debug)]
struct SessionState {
    id: String,
    session: Arc<SessionInfo>,
    prompts: ClientPrompts,
    closed: CancellationToken,
    /// The server's loads, and this session's, when tools are deferred.
    loaded: Option<(Arc<SessionLoads>, Arc<LoadedTools>)>,
}

impl Drop for SessionState {
    fn drop(&mut self) {
        self.prompts.detach(&self.id);
        self.closed.cancel();
        if let Some((loads, _)) = &self.loaded {
            loads.forget(&self.id);
        }
    }
}

/// The rmcp handler of one connection.
#[derive(Clone, Debug)]
pub struct McpSession {
    server: McpServer,
    state: Arc<SessionState>,
}

impl McpSession {
    /// The session id that calls of this connection carry in their [`SessionInfo`].
    pub fn id(&self) -> &str {
        &self.state.id
    }

    /// The catalog, or the "method not found" a server without one answers for `M`.
    fn catalog<M: rmcp::model::ConstString>(&self) -> Result<&dyn ServedCatalog, ErrorData> {
        self.server
            .catalog
            .as_deref()
            .ok_or_else(ErrorData::method_not_found::<M>)
    }

    /// Sends `notifications/prompts/list_changed` and `notifications/resources/list_changed`
    /// whenever the catalog says it changed, until the connection closes.
    fn watch_catalog(&self, peer: rmcp::Peer<RoleServer>) {
        let Some(mut changes) = self
            .server
            .catalog
            .as_ref()
            .and_then(|catalog| catalog.subscribe_changes())
        else {
            return;
        };
        changes.mark_unchanged();
        let closed = self.state.closed.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = closed.cancelled() => return,
                    changed = changes.changed() => if changed.is_err() { return },
                }
                let sent = match peer.notify_prompt_list_changed().await {
                    Ok(()) => peer.notify_resource_list_changed().await,
                    Err(error) => Err(error),
                };
                if let Err(error) = sent {
                    tracing::debug!("prompts/resources list_changed not delivered: {error}");
                    return;
                }
            }
        });
    }

    /// Sends `notifications/tools/list_changed` whenever the registry changes, or the session
    /// loads deferred tools, until the connection closes.
    fn watch_tool_list(&self, peer: rmcp::Peer<RoleServer>) {
        let mut changes = self.server.registry.subscribe_changes();
        changes.mark_unchanged();
        let mut loads = self
            .state
            .loaded
            .as_ref()
            .map(|(_, loaded)| loaded.subscribe_changes());
        let closed = self.state.closed.clone();
        tokio::spawn(async move {
            loop {
                let loaded = async {
                    match &mut loads {
                        Some(loads) => loads.changed().await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    () = closed.cancelled() => return,
                    changed = changes.changed() => {
                        if changed.is_err() {
                            return;
                        }
                    }
                    changed = loaded => {
                        if changed.is_err() {
                            return;
                        }
                    }
                }
                if let Err(error) = peer.notify_tool_list_changed().await {
                    tracing::debug!("tools/list_changed not delivered: {error}");
                    return;
                }
            }
        });
    }
}

impl ServerHandler for McpSession {
    fn get_info(&self) -> ServerConfig {
        let capabilities = if self.server.catalog.is_some() {
            ServerCapabilities::builder()
                .enable_completions()
                .enable_prompts()
                .enable_prompts_list_changed()
                .enable_resources()
                .enable_resources_list_changed()
                .enable_tools()
                .enable_tool_list_changed()
                .build()
        } else {
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build()
        };
        let mut info = ServerConfig::new(capabilities);
        info.server_info =
            Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION")).with_title("toolhost");
        info.instructions.clone_from(&self.server.instructions);
        info
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        self.state.prompts.attach(&self.state.id, &context.peer);
        self.negotiate_initialize(&request)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        tracing::info!(session = %self.state.id, "client initialized");
        if let Some(InitializedHook(hook)) = &self.server.on_initialized {
            hook();
        }
        self.watch_catalog(context.peer.clone());
        self.watch_tool_list(context.peer);
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(catalog::prompts_page(
            self.catalog::<rmcp::model::ListPromptsRequestMethod>()?,
        ))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let catalog = self.catalog::<rmcp::model::GetPromptRequestMethod>()?;
        let options = CallOptions {
            cancel: context.ct.clone(),
            session: Arc::clone(&self.state.session),
            ..CallOptions::default()
        };
        catalog::get_prompt(catalog, &request.name, request.arguments, options)
            .await
            .map(Into::into)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let catalog = self.catalog::<rmcp::model::ListResourcesRequestMethod>()?;
        catalog::resources_page(catalog, request).await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let catalog = self.catalog::<rmcp::model::ListResourceTemplatesRequestMethod>()?;
        Ok(catalog::templates_page(catalog))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let catalog = self.catalog::<rmcp::model::ReadResourceRequestMethod>()?;
        catalog.read_resource(&request.uri).await.map(Into::into)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let catalog = self.catalog::<rmcp::model::CompleteRequestMethod>()?;
        catalog::complete(catalog, request).await
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        if let Some(planner) = &self.server.deferred {
            planner.refresh();
        }
        let mut specs = self.server.registry.specs();
        if let Some((_, loaded)) = &self.state.loaded {
            specs = loaded.offered_of(specs);
        }
        let tools = specs.iter().map(tool_from_spec).collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        self.server
            .registry
            .spec(name)
            .map(|spec| tool_from_spec(&spec))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // A tool_search call searches what is deferred now, servers that joined included.
        if let Some(planner) = &self.server.deferred {
            planner.refresh();
        }
        // MCP names an unknown tool a protocol error (-32602), not a tool result.
        if let Some(message) = self.server.registry.unknown_tool(&request.name) {
            return Err(ErrorData::invalid_params(message, None));
        }
        let progress = context
            .meta
            .get_progress_token()
            .map(|token| ProgressForwarder::start(context.peer.clone(), token));
        let options = CallOptions {
            on_update: progress.as_ref().map(ProgressForwarder::sink),
            // rmcp cancels this token on `notifications/cancelled` and when an HTTP client
            // hangs up; tools forward it to the process helper, which kills the whole tree.
            cancel: context.ct.clone(),
            abort: CancellationToken::new(),
            session: Arc::clone(&self.state.session),
        };
        let call_id = format!("{}:{}", self.state.id, context.id);
        let arguments = request
            .arguments
            .map_or_else(|| Value::Object(serde_json::Map::new()), Value::Object);
        let result = self
            .server
            .registry
            .execute_with(&call_id, &request.name, arguments, options)
            .await;
        if let Some(progress) = progress {
            progress.finish().await;
        }
        Ok(call_result_from(result).into())
    }
}

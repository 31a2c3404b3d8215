//! What pi extensions ask of the session, done: entries and the name stored in the session
//! record, messages queued for the next turn, `ctx.abort()` cancelling the run, and tools
//! registered after loading added to the registry.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use super::{CompactRequest, ExtensionStore};
use crate::{ExtensionActionKind, Extensions, InputOutcome, ScriptHost};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolhost_core::{Tool as _, ToolRegistry};

/// What becomes of the user's input once the extensions saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Prompted {
    /// Send this to the model.
    Send(String),
    /// Nothing to send: an `input` handler dealt with it, or it was a command that sent no
    /// message.
    Done,
    /// It was an extension's command, and the command failed.
    Failed(String),
}

/// A session's extensions and what they asked for.
pub struct ExtensionSession {
    extensions: Arc<Extensions>,
    host: Arc<ScriptHost>,
    registries: Mutex<Vec<Arc<ToolRegistry>>>,
    recorded: Mutex<Option<Arc<dyn ExtensionStore>>>,
    cancel: Mutex<Option<CancellationToken>>,
    queued: Mutex<Vec<String>>,
    started: AtomicBool,
    /// The names of the tools registered after loading, in order: the loop offers them from
    /// the next turn.
    added: Mutex<Vec<String>>,
    /// `pi.setActiveTools(names)`: the tools to offer from the next turn (`None`: all).
    active: Mutex<Option<Vec<String>>>,
    /// `ctx.compact()`: compact before the next request.
    compact: Mutex<Option<CompactRequest>>,
    /// `pi.events` messages waiting for the other extensions: who emitted, channel, data.
    bus: Mutex<Vec<(PathBuf, String, Value)>>,
}

/// The most `pi.events` messages passed between extensions after one event: handlers that
/// answer each other forever are cut off there.
const MAX_BUS_DELIVERIES: usize = 256;

impl std::fmt::Debug for ExtensionSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtensionSession")
            .field("extensions", &self.extensions)
            .finish_non_exhaustive()
    }
}

impl ExtensionSession {
    /// The extensions loaded on `host`.
    pub fn new(extensions: Arc<Extensions>, host: Arc<ScriptHost>) -> Self {
        Self {
            extensions,
            host,
            registries: Mutex::default(),
            recorded: Mutex::default(),
            cancel: Mutex::default(),
            queued: Mutex::default(),
            started: AtomicBool::new(false),
            added: Mutex::default(),
            active: Mutex::default(),
            bus: Mutex::default(),
            compact: Mutex::default(),
        }
    }

    /// The extensions.
    pub fn extensions(&self) -> &Arc<Extensions> {
        &self.extensions
    }

    /// Tools registered later join `registry` too (the one the loop offers).
    pub fn add_registry(&self, registry: Arc<ToolRegistry>) {
        lock(&self.registries).push(registry);
    }

    /// Where entries and the name are stored, and `ctx.sessionManager` reads, from now on.
    pub fn set_recorded(&self, recorded: Option<Arc<dyn ExtensionStore>>) {
        self.host.set_session_store(recorded.clone());
        *lock(&self.recorded) = recorded;
    }

    /// What `ctx.abort()` cancels, and what aborts `ctx.signal`: the run in progress.
    pub fn set_cancel(&self, cancel: CancellationToken) {
        self.host.set_run_cancel(cancel.clone());
        *lock(&self.cancel) = Some(cancel);
    }

    /// The session's entries as pi's session manager gives them (none when no store keeps
    /// the session, or it could not be read).
    pub(crate) fn stored_entries(&self, scope: super::EntryScope) -> Vec<Value> {
        lock(&self.recorded)
            .as_ref()
            .and_then(|recorded| recorded.entries(scope).ok())
            .unwrap_or_default()
    }

    /// The run is over: `ctx.signal` is `undefined` until [`Self::set_cancel`] starts the next.
    pub fn end_run(&self) {
        self.host.end_run();
    }

    /// The tools extensions registered after loading (from a handler or a command), by name,
    /// in the order they joined the registries.
    pub fn tools_added_after_load(&self) -> Vec<String> {
        lock(&self.added).clone()
    }

    /// The tools the last `pi.setActiveTools(names)` chose, as the extension named them
    /// (toolhost's names, or pi's for the built-ins: `read`, `bash`, …); `None` when no
    /// extension chose.
    pub fn active_tools(&self) -> Option<Vec<String>> {
        lock(&self.active).clone()
    }

    /// The compaction an extension asked for (`ctx.compact(…)`) since the last take.
    pub fn take_compact_request(&self) -> Option<CompactRequest> {
        lock(&self.compact).take()
    }

    /// Messages extensions sent (`sendUserMessage`, `sendMessage`) since the last take.
    pub fn take_queued(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.queued))
    }

    /// Tells the extensions the session started: its id, model and tools (its entries they
    /// read from the store), then `session_start` (pi's `reason`: `startup`, or `resume` for a resumed session).
    pub async fn start(&self, session_id: &str, model: &str, tools: &ToolRegistry, resumed: bool) {
        self.started.store(true, Ordering::Relaxed);
        let tools: Vec<Value> = tools
            .specs()
            .iter()
            .map(|spec| json!({ "name": spec.name, "description": spec.description }))
            .collect();
        self.extensions
            .set_session(&json!({
                "id": session_id,
                "model": { "id": model, "name": model },
                "tools": tools,
            }))
            .await;
        let reason = if resumed { "resume" } else { "startup" };
        self.notify("session_start", &json!({ "reason": reason }))
            .await;
    }

    /// [`Self::start`], unless it ran already.
    pub async fn start_once(
        &self,
        session_id: &str,
        model: &str,
        tools: &ToolRegistry,
        resumed: bool,
    ) {
        if !self.started.load(Ordering::Relaxed) {
            self.start(session_id, model, tools, resumed).await;
        }
    }

    /// Tells the extensions `event` and does what they asked meanwhile. After
    /// `session_shutdown`, their `fs.watch` watchers stop.
    pub async fn notify(&self, event: &str, payload: &Value) {
        if self.extensions.listens_to(event) {
            self.extensions.notify(event, payload).await;
        }
        self.apply_and_deliver().await;
        if event == "session_shutdown" {
            self.host.stop_watches();
        }
    }

    /// [`Self::apply`], then the `pi.events` messages to the other extensions (and what their
    /// handlers asked in turn).
    pub async fn apply_and_deliver(&self) {
        self.apply();
        for _ in 0..MAX_BUS_DELIVERIES {
            let next = {
                let mut bus = lock(&self.bus);
                (!bus.is_empty()).then(|| bus.remove(0))
            };
            let Some((from, channel, data)) = next else {
                return;
            };
            self.extensions.deliver_bus(&from, &channel, &data).await;
            self.apply();
        }
        let dropped = std::mem::take(&mut *lock(&self.bus)).len();
        tracing::warn!(
            "{dropped} pi.events messages were dropped: the extensions' handlers kept emitting to each other"
        );
    }

    /// Runs `/name args` when an extension registered the command: `None` when none did;
    /// else the messages it sent (what the turn should say, when it says anything).
    pub async fn run_command(&self, line: &str) -> Option<Result<Vec<String>, String>> {
        let line = line.trim_start().strip_prefix('/')?;
        let (name, args) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let ran = self.extensions.run_command(name, args.trim()).await?;
        self.apply_and_deliver().await;
        Some(ran.map(|()| self.take_queued()))
    }

    /// The user's input after the `input` handlers and the extensions' commands: a `/name`
    /// line an extension registered runs its handler, and what the handler sends
    /// (`pi.sendUserMessage`) is the message.
    pub async fn prompt(&self, text: &str, source: &str) -> Prompted {
        let text = if self.extensions.listens_to("input") {
            let outcome = self.extensions.input(text, source).await;
            self.apply_and_deliver().await;
            match outcome {
                InputOutcome::Handled => return Prompted::Done,
                InputOutcome::Transform(text) => text,
                InputOutcome::Continue => text.to_owned(),
            }
        } else {
            text.to_owned()
        };
        match self.run_command(&text).await {
            None => Prompted::Send(text),
            Some(Err(error)) => Prompted::Failed(error),
            Some(Ok(messages)) if messages.is_empty() => Prompted::Done,
            Some(Ok(messages)) => Prompted::Send(messages.join("\n\n")),
        }
    }

    /// Does what the extensions asked since the last time.
    pub fn apply(&self) {
        let new_tools = self.extensions.take_new_tools();
        if !new_tools.is_empty() {
            let mut joined = false;
            for registry in lock(&self.registries).iter() {
                for tool in &new_tools {
                    // pi lets an extension register a tool again (at `session_start`, say):
                    // the new definition replaces its own earlier one, never another's.
                    let spec = tool.spec();
                    if registry
                        .spec(&spec.name)
                        .is_some_and(|earlier| earlier.origin == spec.origin)
                    {
                        registry.unregister(&spec.name);
                    }
                    match registry.register_arc(Arc::clone(tool) as _) {
                        Ok(()) => joined = true,
                        Err(error) => {
                            tracing::warn!("a tool an extension registered is refused: {error}");
                        }
                    }
                }
            }
            if joined {
                let mut added = lock(&self.added);
                for tool in &new_tools {
                    let name = tool.spec().name;
                    if !added.contains(&name) {
                        added.push(name);
                    }
                }
            }
        }
        for action in self.host.take_extension_actions() {
            let module = action.module.display().to_string();
            match action.kind {
                ExtensionActionKind::SetSessionName { name } => {
                    if let Some(recorded) = lock(&self.recorded).as_ref()
                        && let Err(error) = recorded.set_title(&name)
                    {
                        tracing::warn!(extension = %module, "the session name was not stored: {error}");
                    }
                }
                ExtensionActionKind::SendUserMessage { content, .. } => {
                    lock(&self.queued).push(ExtensionActionKind::text_of(&content));
                }
                ExtensionActionKind::SendMessage { message, .. } => {
                    let text = ExtensionActionKind::text_of(
                        message.get("content").unwrap_or(&Value::Null),
                    );
                    if !text.is_empty() {
                        lock(&self.queued).push(text);
                    }
                }
                ExtensionActionKind::Abort => {
                    if let Some(cancel) = lock(&self.cancel).as_ref() {
                        cancel.cancel();
                    }
                }
                ExtensionActionKind::SetActiveTools { names } => {
                    tracing::debug!(extension = %module, "setActiveTools({})", names.join(", "));
                    *lock(&self.active) = Some(names);
                }
                ExtensionActionKind::BusEmit { channel, data } => {
                    lock(&self.bus).push((action.module.clone(), channel, data));
                }
                ExtensionActionKind::Compact {
                    instructions,
                    request,
                } => {
                    *lock(&self.compact) = Some(CompactRequest {
                        instructions,
                        answer_to: request.map(|request| (action.module.clone(), request)),
                    });
                }
                ExtensionActionKind::Shutdown | ExtensionActionKind::Reload => {
                    tracing::info!(extension = %module, "{:?} is not available to extensions in toolhost", action.kind);
                }
            }
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

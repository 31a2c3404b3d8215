//! The host API a factory receives (R32) — `cwd`, `exec`, `ui` + `hasUI`, `logger`, `typebox`,
//! `pi`, `pushPendingAction` — and the [`ScriptHost`] that provides it.
//!
//! The JavaScript half lives in `js/api.js`; this half binds the Rust services it calls into a
//! hidden global of each engine. Every asynchronous binding resolves with JSON text
//! (`{"ok": …}` or `{"error": …}`), so that failures cross the boundary as values.

pub mod actions;
mod blocking;
mod callers;
mod child_process;
pub mod exec;
pub mod fs;
mod fs_calls;
mod pending;
mod system;
pub mod ui;
mod watch;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use rquickjs::function::Async;
use rquickjs::{Ctx, Function, Object};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolhost_exec::SandboxPolicy;

use crate::in_session::{EntryScope, ExtensionStore};
use crate::limits::ScriptLimits;
use actions::{ExtensionAction, ExtensionActionKind};
pub use callers::Callers;
pub(crate) use callers::{CallGuard, CallsInFlight};
use exec::{DenyListOnly, ExecGate};
use fs::{FileGate, FileSystemOnly, NoFileSystem, ScriptFileSystem};
pub use pending::PendingAction;
use ui::{UiContext, headless_answer, parse_request};
pub(crate) use watch::{Snapshot, WATCH_POLL_INTERVAL, changes};

/// The default timeout of `exec` when the tool gives none (as Bash's).
pub const DEFAULT_EXEC_TIMEOUT: Duration = Duration::from_secs(120);

/// What custom tools run against: the working folder, the limits, and the services behind the
/// host API. Shared by every tool it loads; build it with [`ScriptHost::builder`].
pub struct ScriptHost {
    cwd: PathBuf,
    home: Option<PathBuf>,
    limits: ScriptLimits,
    version: String,
    exec_gate: Arc<dyn ExecGate>,
    exec_sandbox: SandboxPolicy,
    exec_timeout: Duration,
    file_system: Arc<dyn ScriptFileSystem>,
    file_gate: Arc<dyn FileGate>,
    ui: RwLock<Option<Arc<dyn UiContext>>>,
    pending: Mutex<Vec<PendingAction>>,
    actions: Mutex<Vec<ExtensionAction>>,
    tool_names: RwLock<Vec<String>>,
    next_exec: AtomicU32,
    next_pending: AtomicU32,
    exec_cancels: Mutex<HashMap<u32, CancellationToken>>,
    in_flight: Arc<CallsInFlight>,
    session_store: RwLock<Option<Arc<dyn ExtensionStore>>>,
    run: Mutex<RunInProgress>,
    watches: watch::Watches,
}

impl std::fmt::Debug for ScriptHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptHost")
            .field("cwd", &self.cwd)
            .field("home", &self.home)
            .field("limits", &self.limits)
            .field("has_ui", &self.has_ui())
            .finish_non_exhaustive()
    }
}

impl ScriptHost {
    /// A builder for a host working in `cwd`.
    pub fn builder(cwd: impl Into<PathBuf>) -> ScriptHostBuilder {
        ScriptHostBuilder {
            cwd: cwd.into(),
            home: std::env::var_os("HOME").map(PathBuf::from),
            limits: ScriptLimits::default(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            exec_gate: Arc::new(DenyListOnly),
            exec_sandbox: None,
            exec_timeout: DEFAULT_EXEC_TIMEOUT,
            file_system: Arc::new(NoFileSystem),
            file_gate: Arc::new(FileSystemOnly),
        }
    }

    /// The working folder (`api.cwd`); relative configured paths resolve from it.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// The home folder `~` expands to.
    pub fn home(&self) -> Option<&Path> {
        self.home.as_deref()
    }

    /// The limits every tool runs under.
    pub fn limits(&self) -> &ScriptLimits {
        &self.limits
    }

    /// Gives tools a real UI: from now on `api.hasUI` is true and `api.ui` reaches it.
    pub fn set_ui_context(&self, ui: Arc<dyn UiContext>) {
        *self.ui.write().unwrap_or_else(PoisonError::into_inner) = Some(ui);
    }

    /// Takes the UI away again (`api.ui` becomes a no-op).
    pub fn clear_ui_context(&self) {
        *self.ui.write().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// Whether a UI is set.
    pub fn has_ui(&self) -> bool {
        self.ui_context().is_some()
    }

    fn ui_context(&self) -> Option<Arc<dyn UiContext>> {
        self.ui
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The actions tools registered with `pushPendingAction` since the last call, oldest first.
    pub fn take_pending_actions(&self) -> Vec<PendingAction> {
        std::mem::take(&mut *self.pending.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// What extensions asked of the session since the last take, oldest first.
    pub fn take_extension_actions(&self) -> Vec<ExtensionAction> {
        std::mem::take(&mut *self.actions.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Sets the tool names `api.pi.toolNames` shows to factories loaded from now on.
    pub fn set_tool_names(&self, names: Vec<String>) {
        *self
            .tool_names
            .write()
            .unwrap_or_else(PoisonError::into_inner) = names;
    }

    /// What a factory learns of the host: `api.cwd`, `api.pi.version`, `api.pi.toolNames`.
    pub(crate) fn factory_info(&self) -> Value {
        json!({
            "cwd": self.cwd.to_string_lossy(),
            "version": self.version,
            "toolNames": *self.tool_names.read().unwrap_or_else(PoisonError::into_inner),
        })
    }

    /// Where extensions' entries are stored and `ctx.sessionManager` reads from now on (none:
    /// they live in the extension's engine only).
    pub fn set_session_store(&self, store: Option<Arc<dyn ExtensionStore>>) {
        *self
            .session_store
            .write()
            .unwrap_or_else(PoisonError::into_inner) = store;
    }

    fn session_store(&self) -> Option<Arc<dyn ExtensionStore>> {
        self.session_store
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// A run starts, cancelled through `cancel`: extensions' handlers get a new `ctx.signal`,
    /// which aborts with it.
    pub fn set_run_cancel(&self, cancel: CancellationToken) {
        let mut run = self.run.lock().unwrap_or_else(PoisonError::into_inner);
        run.number = run.number.wrapping_add(1);
        run.cancel = Some(cancel);
    }

    /// The run is over: `ctx.signal` is `undefined` until the next.
    pub fn end_run(&self) {
        self.run
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .cancel = None;
    }

    /// The run in progress, if any: its number and what cancels it.
    pub(crate) fn run_in_progress(&self) -> Option<(u32, CancellationToken)> {
        let run = self.run.lock().unwrap_or_else(PoisonError::into_inner);
        run.cancel.clone().map(|cancel| (run.number, cancel))
    }

    fn exec_cancel(&self, id: u32) -> CancellationToken {
        self.exec_cancels
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(id)
            .or_default()
            .clone()
    }

    /// Records a call of a tool of `module` run for `ctx`'s caller, until the guard drops.
    pub(crate) fn enter_call(
        &self,
        module: &Arc<Path>,
        ctx: &toolhost_core::ToolContext,
    ) -> Option<CallGuard> {
        self.in_flight.enter(module, ctx.authorizer())
    }

    fn exec_done(&self, id: u32) {
        self.exec_cancels
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&id);
    }
}

/// The run extensions' `ctx.signal` belongs to: numbered, so that each engine knows a new one.
#[derive(Debug, Default)]
struct RunInProgress {
    number: u32,
    cancel: Option<CancellationToken>,
}

/// Builds a [`ScriptHost`]; every service has a safe default.
pub struct ScriptHostBuilder {
    cwd: PathBuf,
    home: Option<PathBuf>,
    limits: ScriptLimits,
    version: String,
    exec_gate: Arc<dyn ExecGate>,
    exec_sandbox: Option<SandboxPolicy>,
    exec_timeout: Duration,
    file_system: Arc<dyn ScriptFileSystem>,
    file_gate: Arc<dyn FileGate>,
}

impl ScriptHostBuilder {
    /// The home folder `~` expands to (default `$HOME`).
    #[must_use]
    pub fn home(mut self, home: Option<PathBuf>) -> Self {
        self.home = home;
        self
    }

    /// The time and memory limits.
    #[must_use]
    pub fn limits(mut self, limits: ScriptLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The version `api.pi.version` reports (default: this crate's).
    #[must_use]
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }

    /// Who authorises `exec` after the deny list (default [`DenyListOnly`]).
    #[must_use]
    pub fn exec_gate(mut self, gate: Arc<dyn ExecGate>) -> Self {
        self.exec_gate = gate;
        self
    }

    /// The OS sandbox of `exec` (default: write only to `cwd` and the temp folder).
    #[must_use]
    pub fn exec_sandbox(mut self, sandbox: SandboxPolicy) -> Self {
        self.exec_sandbox = Some(sandbox);
        self
    }

    /// `exec`'s timeout when a tool gives none (default [`DEFAULT_EXEC_TIMEOUT`]).
    #[must_use]
    pub fn exec_timeout(mut self, timeout: Duration) -> Self {
        self.exec_timeout = timeout;
        self
    }

    /// The file system behind `node:fs` (default: none, every call refused).
    #[must_use]
    pub fn file_system(mut self, file_system: Arc<dyn ScriptFileSystem>) -> Self {
        self.file_system = file_system;
        self
    }

    /// Who authorises each `node:fs` call before the file system sees it (default
    /// [`FileSystemOnly`]).
    #[must_use]
    pub fn file_gate(mut self, gate: Arc<dyn FileGate>) -> Self {
        self.file_gate = gate;
        self
    }

    /// The host.
    pub fn build(self) -> Arc<ScriptHost> {
        let exec_sandbox = self
            .exec_sandbox
            .unwrap_or_else(|| SandboxPolicy::workspace_write(&self.cwd));
        Arc::new(ScriptHost {
            cwd: self.cwd,
            home: self.home,
            limits: self.limits,
            version: self.version,
            exec_gate: self.exec_gate,
            exec_sandbox,
            exec_timeout: self.exec_timeout,
            file_system: self.file_system,
            file_gate: self.file_gate,
            ui: RwLock::new(None),
            pending: Mutex::new(Vec::new()),
            actions: Mutex::new(Vec::new()),
            tool_names: RwLock::new(Vec::new()),
            next_exec: AtomicU32::new(1),
            next_pending: AtomicU32::new(1),
            exec_cancels: Mutex::new(HashMap::new()),
            in_flight: Arc::default(),
            session_store: RwLock::new(None),
            run: Mutex::default(),
            watches: watch::Watches::default(),
        })
    }
}

/// Binds the host's services into `globalThis.__toolhost_host` of an engine running `module`.
pub(crate) fn install<'js>(
    ctx: &Ctx<'js>,
    host: &Arc<ScriptHost>,
    module: &Arc<Path>,
) -> rquickjs::Result<()> {
    let bindings = Object::new(ctx.clone())?;

    let file = Arc::clone(module);
    bindings.set(
        "log",
        Function::new(ctx.clone(), move |level: String, message: String| {
            log(&file, &level, &message);
        })?,
    )?;
    bindings.set(
        "sleep",
        Function::new(
            ctx.clone(),
            Async(|ms: f64| async move {
                let ms = if ms.is_finite() { ms.max(0.0) } else { 0.0 };
                tokio::time::sleep(Duration::from_secs_f64(ms / 1000.0)).await;
            }),
        )?,
    )?;
    let cwd = host.cwd.to_string_lossy().into_owned();
    bindings.set("cwd", Function::new(ctx.clone(), move || cwd.clone())?)?;

    let h = Arc::clone(host);
    bindings.set("hasUI", Function::new(ctx.clone(), move || h.has_ui())?)?;
    let h = Arc::clone(host);
    bindings.set(
        "uiNotify",
        Function::new(ctx.clone(), move |message: String, level: String| {
            if let Some(ui) = h.ui_context() {
                ui.notify(&message, &level);
            }
        })?,
    )?;
    let h = Arc::clone(host);
    bindings.set(
        "uiRequest",
        Function::new(
            ctx.clone(),
            Async(move |kind: String, payload: String| {
                let host = Arc::clone(&h);
                async move {
                    let payload: Value = serde_json::from_str(&payload).unwrap_or(Value::Null);
                    let Some(request) = parse_request(&kind, &payload) else {
                        return json!({ "error": format!("unknown ui request '{kind}'") })
                            .to_string();
                    };
                    let answer = match host.ui_context() {
                        Some(ui) => ui.request(request).await,
                        None => headless_answer(&request),
                    };
                    json!({ "ok": answer }).to_string()
                }
            }),
        )?,
    )?;

    let h = Arc::clone(host);
    let file = Arc::clone(module);
    bindings.set(
        "pushPendingAction",
        Function::new(ctx.clone(), move |action: String| {
            let id = h.next_pending.fetch_add(1, Ordering::Relaxed);
            let action = PendingAction::from_json(id, &file, &action);
            h.pending
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(action);
            id
        })?,
    )?;

    let h = Arc::clone(host);
    let file = Arc::clone(module);
    bindings.set(
        "extensionAction",
        Function::new(ctx.clone(), move |kind: String, payload: String| {
            match ExtensionActionKind::parse(&kind, &payload) {
                Some(kind) => h
                    .actions
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(ExtensionAction {
                        module: file.to_path_buf(),
                        kind,
                    }),
                None => {
                    tracing::warn!(module = %file.display(), "unknown extension action '{kind}'")
                }
            }
        })?,
    )?;

    let h = Arc::clone(host);
    let file = Arc::clone(module);
    bindings.set(
        "appendEntry",
        Function::new(ctx.clone(), move |custom_type: String, data: String| {
            let Some(store) = h.session_store() else {
                return false;
            };
            let data: Value = serde_json::from_str(&data).unwrap_or(Value::Null);
            if let Err(error) = store.record_custom(&custom_type, &data) {
                tracing::warn!(module = %file.display(), "its entry was not stored: {error}");
            }
            true
        })?,
    )?;
    let h = Arc::clone(host);
    let file = Arc::clone(module);
    bindings.set(
        "sessionEntries",
        Function::new(ctx.clone(), move |scope: String| {
            let store = h.session_store()?;
            let scope = if scope == "all" {
                EntryScope::All
            } else {
                EntryScope::Branch
            };
            match store.entries(scope) {
                Ok(entries) => Some(Value::Array(entries).to_string()),
                Err(error) => {
                    tracing::warn!(module = %file.display(), "the session's entries could not be read: {error}");
                    Some("[]".to_owned())
                }
            }
        })?,
    )?;

    child_process::install(ctx, &bindings, host, module)?;
    fs_calls::install(ctx, &bindings, host, module)?;
    system::install(ctx, &bindings, host)?;
    ctx.globals().set("__toolhost_host", bindings)
}

fn log(module: &Path, level: &str, message: &str) {
    let module = module.display();
    match level {
        "error" => tracing::error!(target: "toolhost_script::tool", %module, "{message}"),
        "warn" => tracing::warn!(target: "toolhost_script::tool", %module, "{message}"),
        "debug" => tracing::debug!(target: "toolhost_script::tool", %module, "{message}"),
        "trace" => tracing::trace!(target: "toolhost_script::tool", %module, "{message}"),
        _ => tracing::info!(target: "toolhost_script::tool", %module, "{message}"),
    }
}

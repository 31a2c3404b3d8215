//! pi extensions: modules whose default export is `function (pi) { … }` and which register
//! tools, commands and event handlers through pi's `ExtensionAPI` (the JavaScript half is
//! `js/extension.js`). Their tools are [`ScriptTool`]s like any custom tool's; what is theirs
//! alone — handlers and commands — lives here: [`Extension`] is one module, [`Extensions`] all
//! of a session's, in load order, which is the order their handlers run in.

mod dispatch;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;

use crate::engine::{CommandInfo as EngineCommand, Engine, Registered};
use crate::tool::ScriptTool;

pub use dispatch::{InputOutcome, ToolCallVerdict, ToolResultChange, pi_tool_name};

/// A command an extension registered (`pi.registerCommand(name, {description, handler})`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtensionCommand {
    /// Its name, without the slash.
    pub name: String,
    /// What it does.
    pub description: String,
    /// The module that registered it.
    pub module: PathBuf,
}

/// One loaded pi extension: its engine, the events it listens to and its commands.
pub struct Extension {
    engine: Arc<Engine>,
    path: PathBuf,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    events: Vec<String>,
    commands: Vec<EngineCommand>,
}

impl std::fmt::Debug for Extension {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Extension")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl Extension {
    pub(crate) fn new(
        engine: Arc<Engine>,
        path: PathBuf,
        events: Vec<String>,
        commands: Vec<EngineCommand>,
    ) -> Self {
        Self {
            engine,
            path,
            state: Mutex::new(State { events, commands }),
        }
    }

    /// The path it was found at.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether it has a handler for `event`.
    pub fn listens_to(&self, event: &str) -> bool {
        self.state().events.iter().any(|name| name == event)
    }

    /// Its commands, in the order registered.
    pub fn commands(&self) -> Vec<ExtensionCommand> {
        self.state()
            .commands
            .iter()
            .map(|command| ExtensionCommand {
                name: command.name.clone(),
                description: command.description.clone(),
                module: self.engine.module().to_path_buf(),
            })
            .collect()
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes in what a handler or command registered: the new tools, ready to register.
    fn absorb(&self, registered: Registered) -> Vec<Arc<ScriptTool>> {
        let mut state = self.state();
        state.events = registered.events;
        for command in registered.commands {
            state.commands.retain(|known| known.name != command.name);
            state.commands.push(command);
        }
        drop(state);
        registered
            .tools
            .into_iter()
            .map(|descriptor| Arc::new(ScriptTool::new(Arc::clone(&self.engine), descriptor)))
            .collect()
    }

    /// Runs its handlers of `event` with `payload`: their combined answer (`null` when they
    /// only listen), and the tools they registered. A handler that throws is logged; the
    /// others still run.
    pub async fn emit(&self, event: &str, payload: &Value) -> (Value, Vec<Arc<ScriptTool>>) {
        if !self.listens_to(event) {
            return (Value::Null, Vec::new());
        }
        self.emit_to_engine(event, payload).await
    }

    /// [`Self::emit`], whether or not it listens (for the internal events that answer what
    /// it asked, wherever it asked from).
    async fn emit_to_engine(&self, event: &str, payload: &Value) -> (Value, Vec<Arc<ScriptTool>>) {
        let limit = self.engine.host().limits().call_time_limit;
        // In a task of its own, as tool calls run: a caller that stops waiting (the run was
        // cancelled) leaves the handlers to settle, hearing it through `ctx.signal`.
        let engine = Arc::clone(&self.engine);
        let (name, payload) = (event.to_owned(), payload.clone());
        let emitted = tokio::spawn(async move { engine.emit(&name, &payload, limit).await })
            .await
            .unwrap_or_else(|error| Err(format!("the engine crashed: {error}")));
        match emitted {
            Ok(emitted) => {
                for error in &emitted.errors {
                    tracing::warn!(extension = %self.path.display(), "{error}");
                }
                let tools = self.absorb(emitted.registered);
                (emitted.result, tools)
            }
            Err(error) => {
                tracing::warn!(extension = %self.path.display(), "the {event} handlers failed: {error}");
                (Value::Null, Vec::new())
            }
        }
    }

    /// Runs the handler of its command `/name` with `args`; the tools it registered.
    pub async fn run_command(
        &self,
        name: &str,
        args: &str,
    ) -> Result<Vec<Arc<ScriptTool>>, String> {
        let limit = self.engine.host().limits().call_time_limit;
        let registered = self.engine.run_command(name, args, limit).await?;
        Ok(self.absorb(registered))
    }

    /// Tells it what its session is now: any of `{id, name, entries, model, usage, tools,
    /// systemPrompt}` (pi's shapes: `entries` are `{type: "custom", customType, data, …}`).
    pub async fn set_session(&self, update: &Value) {
        if let Err(error) = self.engine.set_session(update).await {
            tracing::warn!(extension = %self.path.display(), "the session state could not be passed: {error}");
        }
    }
}

/// The internal event that carries `pi.events` between extensions (see `js/extension.js`).
const BUS_EVENT: &str = "toolhost:bus";

/// The internal event that answers a `ctx.compact()` whose caller passed `onComplete` or
/// `onError` (see `js/extension.js`).
const COMPACTED_EVENT: &str = "toolhost:compacted";

/// Every extension of a session, in load order; tools registered after loading wait in
/// [`Extensions::take_new_tools`] for the program to register them.
#[derive(Debug, Default)]
pub struct Extensions {
    loaded: Vec<Arc<Extension>>,
    new_tools: Mutex<Vec<Arc<ScriptTool>>>,
}

impl Extensions {
    /// These extensions, in the order their handlers run.
    pub fn new(loaded: Vec<Arc<Extension>>) -> Self {
        Self {
            loaded,
            new_tools: Mutex::default(),
        }
    }

    /// The extensions.
    pub fn all(&self) -> &[Arc<Extension>] {
        &self.loaded
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.loaded.is_empty()
    }

    /// Whether some extension listens to `event` (cheap: no engine is entered).
    pub fn listens_to(&self, event: &str) -> bool {
        self.loaded
            .iter()
            .any(|extension| extension.listens_to(event))
    }

    /// Every extension's commands, in load order (a later one of the same name is shadowed).
    pub fn commands(&self) -> Vec<ExtensionCommand> {
        let mut commands: Vec<ExtensionCommand> = Vec::new();
        for command in self
            .loaded
            .iter()
            .flat_map(|extension| extension.commands())
        {
            if !commands.iter().any(|known| known.name == command.name) {
                commands.push(command);
            }
        }
        commands
    }

    /// Tools registered by handlers or commands since the last take.
    pub fn take_new_tools(&self) -> Vec<Arc<ScriptTool>> {
        std::mem::take(
            &mut *self
                .new_tools
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }

    fn keep_new_tools(&self, tools: Vec<Arc<ScriptTool>>) {
        if !tools.is_empty() {
            self.new_tools
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .extend(tools);
        }
    }

    /// Tells every extension listening to `event` (a notification: answers are ignored).
    pub async fn notify(&self, event: &str, payload: &Value) {
        for extension in &self.loaded {
            let (_, tools) = extension.emit(event, payload).await;
            self.keep_new_tools(tools);
        }
    }

    /// Delivers what the extension `from` emitted on `pi.events` to the `pi.events` handlers
    /// of the others (its own heard it when it was emitted).
    pub async fn deliver_bus(&self, from: &Path, channel: &str, data: &Value) {
        let payload = serde_json::json!({ "channel": channel, "data": data });
        for extension in self
            .loaded
            .iter()
            .filter(|extension| extension.engine.module() != from)
        {
            let (_, tools) = extension.emit(BUS_EVENT, &payload).await;
            self.keep_new_tools(tools);
        }
    }

    /// Answers the `ctx.compact()` numbered `request` of the extension `module`: its
    /// `onComplete` gets `Ok`'s result (pi's `CompactionResult`), its `onError` an error with
    /// `Err`'s message.
    pub async fn answer_compact(
        &self,
        module: &Path,
        request: u64,
        outcome: Result<Value, String>,
    ) {
        let payload = match outcome {
            Ok(result) => serde_json::json!({ "requestId": request, "result": result }),
            Err(error) => serde_json::json!({ "requestId": request, "error": error }),
        };
        for extension in self
            .loaded
            .iter()
            .filter(|extension| extension.engine.module() == module)
        {
            let (_, tools) = extension.emit_to_engine(COMPACTED_EVENT, &payload).await;
            self.keep_new_tools(tools);
        }
    }

    /// Tells every extension what the session is now (see [`Extension::set_session`]).
    pub async fn set_session(&self, update: &Value) {
        for extension in &self.loaded {
            extension.set_session(update).await;
        }
    }

    /// Runs the command `/name` with `args` if an extension registered it: `None` when none
    /// did, else whether it ran.
    pub async fn run_command(&self, name: &str, args: &str) -> Option<Result<(), String>> {
        let extension = self
            .loaded
            .iter()
            .find(|extension| extension.commands().iter().any(|c| c.name == name))?;
        Some(match extension.run_command(name, args).await {
            Ok(tools) => {
                self.keep_new_tools(tools);
                Ok(())
            }
            Err(error) => Err(format!(
                "the command /{name} of {} failed: {error}",
                extension.path().display()
            )),
        })
    }
}

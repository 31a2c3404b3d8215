//! The embedded engine: one QuickJS runtime and context per tool module, each with its own
//! memory limit and interrupt handler, driven on the host's tokio runtime.
//!
//! # Threading
//!
//! QuickJS is single-threaded; rquickjs's `parallel` feature puts each runtime behind an async
//! lock so that its handles are `Send + Sync`. Every entry into JavaScript goes through
//! `AsyncContext::async_with`, which takes that lock for one poll at a time: calls to tools of
//! the same module interleave at their `await` points, and calls to different modules run in
//! parallel on different threads. A call is run in a task of its own (see `tool.rs`), so that
//! a caller dropping its future never drops JavaScript values without the lock; the call
//! finishes by itself, bounded by its cancellation token and its time limit.
//!
//! # Limits
//!
//! - time: synchronous JavaScript past the deadline of a call in flight is interrupted by the
//!   runtime's interrupt handler ([`clock::CallClock`]); awaited work is raced against a timer
//!   inside the call. After a time-out or a cancellation the tool's signal is aborted and it
//!   gets `abort_grace` to settle.
//! - memory: the runtime's allocator refuses to grow past `memory_limit`; JavaScript sees a
//!   catchable out-of-memory error, the call becomes an error result, the host carries on.

mod call;
mod clock;
mod errors;
mod events;
mod watch;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};

use rquickjs::{AsyncContext, AsyncRuntime, Function, Module, Object, Promise};
use serde::Deserialize;
use serde_json::Value;

use crate::host_api::{self, ScriptHost};
use crate::module_loader::{API_MODULE, ToolLoader, ToolResolver, install_commonjs};
use crate::source_maps::SourceMaps;
use clock::CallClock;
use errors::Describer;

pub(crate) use call::CallEnd;
pub(crate) use events::{CommandInfo, Registered};

const PRELUDE: &str = include_str!("../js/prelude.js");

/// Which optional hooks a tool defines.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Hooks {
    pub on_session: bool,
    pub render_call: bool,
    pub render_result: bool,
}

/// A tool as its module's factory described it.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct ToolDescriptor {
    pub index: u32,
    pub name: String,
    pub label: String,
    pub description: String,
    pub parameters: Value,
    pub hooks: Hooks,
    /// pi's `promptSnippet`: the tool's line in the system prompt's list of tools.
    #[serde(default, rename = "promptSnippet")]
    pub prompt_snippet: Option<String>,
    /// pi's `promptGuidelines`: bullets for the system prompt while the tool is offered.
    #[serde(default, rename = "promptGuidelines")]
    pub prompt_guidelines: Vec<String>,
}

/// What a module's default export gave: tools it returned or registered, and, for a pi
/// extension, its commands and the events it listens to.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct Loaded {
    pub tools: Vec<ToolDescriptor>,
    #[serde(default)]
    pub commands: Vec<CommandInfo>,
    #[serde(default)]
    pub events: Vec<String>,
    /// Whether the export returned something (a factory) rather than nothing (an extension).
    #[serde(default)]
    pub returned: bool,
    /// The pi calls it made that toolhost accepts and ignores (`pi.registerShortcut`, …).
    #[serde(default)]
    pub ignored: Vec<String>,
    /// Whether the factory returned `null`: it declined to offer tools here.
    #[serde(default)]
    pub declined: bool,
}

impl Loaded {
    /// Whether the module is a pi extension: it listens to events or has commands.
    pub(crate) fn is_extension(&self) -> bool {
        !self.events.is_empty() || !self.commands.is_empty()
    }
}

/// One module's engine: its runtime, context and clock.
pub(crate) struct Engine {
    context: AsyncContext,
    clock: Arc<CallClock>,
    host: Arc<ScriptHost>,
    module: Arc<Path>,
    root: PathBuf,
    describer: Describer,
    /// The engine itself, for what outlives a call (an `fs.watch` poll) without keeping it.
    this: Weak<Engine>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("module", &self.module)
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// Starts an engine for the module at `entry` (canonical), whose relative imports stay
    /// inside `root`, evaluates it and runs its factory.
    pub(crate) async fn load(
        host: Arc<ScriptHost>,
        entry: PathBuf,
        root: PathBuf,
    ) -> Result<(Arc<Self>, Loaded), String> {
        let runtime =
            AsyncRuntime::new().map_err(|error| format!("cannot start the engine: {error}"))?;
        runtime.set_memory_limit(host.limits().memory_limit).await;
        let clock = CallClock::new();
        let interrupt_clock = Arc::clone(&clock);
        runtime
            .set_interrupt_handler(Some(Box::new(move || interrupt_clock.expired())))
            .await;
        let maps = SourceMaps::default();
        runtime
            .set_loader(
                ToolResolver::new(root.clone()),
                ToolLoader::new(root.clone(), maps.clone()),
            )
            .await;
        let context = AsyncContext::full(&runtime)
            .await
            .map_err(|error| format!("cannot start the engine: {error}"))?;
        let module: Arc<Path> = Arc::from(entry.as_path());
        let describer = Describer {
            maps,
            module: Arc::clone(&module),
        };
        let engine = Arc::new_cyclic(|this| Self {
            context,
            clock,
            host,
            module,
            root,
            describer,
            this: this.clone(),
        });
        let tools = engine.evaluate_module().await?;
        Ok((engine, tools))
    }

    async fn evaluate_module(&self) -> Result<Loaded, String> {
        let limit = self.host.limits().load_time_limit;
        let _deadline = self.clock.enter(limit);
        let host = Arc::clone(&self.host);
        let module = Arc::clone(&self.module);
        let info = self.host.factory_info().to_string();
        let entry = self.module.to_string_lossy().into_owned();
        let entry_text = entry.clone();
        let root = self.root.clone();
        let describer = self.describer.clone();
        let this = self.this.clone();
        let json = self
            .context
            .async_with(async move |ctx| {
                if let Err(error) = host_api::install(&ctx, &host, &module)
                    .and_then(|()| watch::install(&ctx, this))
                    .and_then(|()| install_commonjs(&ctx, &root))
                    .and_then(|()| ctx.eval::<(), _>(PRELUDE))
                {
                    return Err(describer.error(&ctx, error));
                }
                let load = async {
                    Module::import(&ctx, API_MODULE)?
                        .into_future::<Object>()
                        .await?;
                    let namespace = Module::import(&ctx, entry)?.into_future::<Object>().await?;
                    let api: Object = ctx.globals().get("__toolhost_api")?;
                    let load_tools: Function = api.get("loadTools")?;
                    load_tools
                        .call::<_, Promise>((namespace, info, entry_text))?
                        .into_future::<String>()
                        .await
                };
                let outcome = tokio::select! {
                    outcome = load => Some(outcome),
                    () = tokio::time::sleep(limit) => None,
                };
                match outcome {
                    Some(Ok(json)) => Ok(json),
                    Some(Err(error)) => Err(describer.error(&ctx, error)),
                    None => Err(String::new()),
                }
            })
            .await;
        let json = json.map_err(|message| {
            if message.is_empty() || self.clock.expired() {
                format!(
                    "loading took longer than {} s (an endless loop or a promise that never \
                     settles in the module or its factory?)",
                    limit.as_secs_f64()
                )
            } else {
                message
            }
        })?;
        let loaded: call::Envelope<Loaded> = serde_json::from_str(&json)
            .map_err(|error| format!("the factory's result could not be read: {error}"))?;
        if let Some(error) = loaded.failure(&self.describer) {
            return Err(error);
        }
        match loaded.ok {
            Some(loaded) if loaded.tools.is_empty() && loaded.returned => {
                Err("the factory returned no tools (an empty array)".to_owned())
            }
            Some(loaded)
                if loaded.tools.is_empty()
                    && !loaded.is_extension()
                    && !loaded.ignored.is_empty() =>
            {
                Err(format!(
                    "nothing to load: all the extension registers is what toolhost ignores ({}), \
                     with no tool, command or event handler",
                    loaded.ignored.join(", ")
                ))
            }
            Some(loaded)
                if loaded.tools.is_empty() && !loaded.is_extension() && loaded.declined =>
            {
                Err(
                    "the factory returned null: it offers no tools here (plugins do this when \
                     something they need is missing, such as an API key in the environment, \
                     which custom tools do not see, or a program)"
                        .to_owned(),
                )
            }
            Some(loaded) if loaded.tools.is_empty() && !loaded.is_extension() => Err(
                "the module's default export returned no tools and registered nothing (no \
                 pi.registerTool, pi.registerCommand or pi.on)"
                    .to_owned(),
            ),
            Some(loaded) => Ok(loaded),
            None => Err("the factory returned nothing".to_owned()),
        }
    }

    /// The host it runs against.
    pub(crate) fn host(&self) -> &Arc<ScriptHost> {
        &self.host
    }

    /// The module file this engine runs.
    pub(crate) fn module(&self) -> &Path {
        &self.module
    }
}

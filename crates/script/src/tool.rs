//! [`ScriptTool`]: a JavaScript tool as a [`Tool`] of the registry. The pipeline validates and
//! coerces its arguments, authorises, truncates and appends hints exactly as for a built-in
//! (R36); this adapter only crosses into the engine.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use toolhost_core::{
    SessionEvent, SessionInfo, Tool, ToolContext, ToolError, ToolOrigin, ToolOutput, ToolSpec,
};

use crate::engine::{CallEnd, Engine, Hooks, ToolDescriptor};
use crate::render_tree::RenderTree;

/// Options a UI passes to `renderResult` (R5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RenderOptions {
    /// Whether the result is shown expanded.
    pub expanded: bool,
    /// Whether the result is a partial one (an update while the tool runs).
    pub is_partial: bool,
    /// The frame of the UI's spinner, while the tool runs.
    pub spinner_frame: Option<u32>,
}

/// What a UI draws for a call or a result (R5).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rendering {
    /// The tool's own tree, to be drawn in a box.
    Custom(RenderTree),
    /// The default text rendering: the tool has no hook, or its hook failed.
    Default {
        /// The text to draw.
        text: String,
        /// Why the hook failed (threw, returned something that is not a tree, ran past its
        /// time limit); `None` when the tool has no hook. The UI logs it, once per tool.
        error: Option<String>,
    },
}

/// A tool defined by a JavaScript or TypeScript module.
pub struct ScriptTool {
    spec: ToolSpec,
    index: u32,
    hooks: Hooks,
    engine: Arc<Engine>,
    prompt_snippet: Option<String>,
    prompt_guidelines: Vec<String>,
}

impl std::fmt::Debug for ScriptTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptTool")
            .field("name", &self.spec.name)
            .field("source", &self.source())
            .finish_non_exhaustive()
    }
}

impl ScriptTool {
    pub(crate) fn new(engine: Arc<Engine>, descriptor: ToolDescriptor) -> Self {
        let spec = ToolSpec::new(descriptor.name, descriptor.description)
            .with_label(descriptor.label)
            .with_parameters(descriptor.parameters)
            .with_origin(ToolOrigin::custom(engine.module().display().to_string()));
        Self {
            spec,
            index: descriptor.index,
            hooks: descriptor.hooks,
            engine,
            prompt_snippet: descriptor.prompt_snippet,
            prompt_guidelines: descriptor.prompt_guidelines,
        }
    }

    /// pi's `promptSnippet`: the tool's line in the system prompt's list of tools.
    pub fn prompt_snippet(&self) -> Option<&str> {
        self.prompt_snippet.as_deref()
    }

    /// pi's `promptGuidelines`: bullets the system prompt carries while the tool is offered.
    pub fn prompt_guidelines(&self) -> &[String] {
        &self.prompt_guidelines
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// The module file that defines the tool.
    pub fn source(&self) -> &Path {
        self.engine.module()
    }

    /// Whether the tool has a `renderCall` or `renderResult` hook (a UI draws it in a box).
    pub fn has_render_hooks(&self) -> bool {
        self.hooks.render_call || self.hooks.render_result
    }

    /// Whether `module` is the file this tool's engine runs (the engine a pending action of
    /// that module lives in).
    pub fn runs_module(&self, module: &Path) -> bool {
        self.engine.module() == module
    }

    /// Applies (`apply`) or discards the pending action `id` registered by a tool of this
    /// tool's module; what the action's hook returned.
    pub async fn resolve_pending_action(
        &self,
        id: u32,
        apply: bool,
    ) -> Result<Option<String>, String> {
        self.engine.resolve(id, apply).await
    }

    /// The call as the tool draws it (`renderCall(args, theme)`), or the default rendering
    /// when it has no hook or the hook fails (with the error, for the UI to log).
    pub async fn render_call(&self, args: &Value, theme: &Value) -> Rendering {
        let fallback = |error| Rendering::Default {
            text: format!("{} {}", self.spec.name, args),
            error,
        };
        if !self.hooks.render_call {
            return fallback(None);
        }
        match self
            .engine
            .render(self.index, "renderCall", json!([args, theme]))
            .await
        {
            Ok(tree) => Rendering::Custom(tree),
            Err(message) => fallback(Some(format!("renderCall failed: {message}"))),
        }
    }

    /// A result as the tool draws it (`renderResult(result, options, theme, args)`), or the
    /// default rendering (its text) when it has no hook or the hook fails (with the error).
    pub async fn render_result(
        &self,
        result: &ToolOutput,
        options: RenderOptions,
        theme: &Value,
        args: &Value,
    ) -> Rendering {
        let fallback = |error| Rendering::Default {
            text: result.joined_text(),
            error,
        };
        if !self.hooks.render_result {
            return fallback(None);
        }
        let result_json = json!({
            "content": result.content,
            "details": result.details,
            "isError": result.is_error,
        });
        let options_json = json!({
            "expanded": options.expanded,
            "isPartial": options.is_partial,
            "spinnerFrame": options.spinner_frame,
        });
        let hook_args = json!([result_json, options_json, theme, args]);
        match self
            .engine
            .render(self.index, "renderResult", hook_args)
            .await
        {
            Ok(tree) => Rendering::Custom(tree),
            Err(message) => fallback(Some(format!("renderResult failed: {message}"))),
        }
    }
}

#[async_trait::async_trait]
impl Tool for ScriptTool {
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    async fn execute(&self, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        // The call runs in its own task: when the pipeline drops this future (cancellation),
        // the guard cancels the call, whose task aborts the tool's signal and ends by itself.
        let cancel = ctx.cancellation().child_token();
        let _guard = cancel.clone().drop_guard();
        let engine = Arc::clone(&self.engine);
        let index = self.index;
        let task = tokio::spawn(async move { engine.execute(index, args, ctx, cancel).await });
        let end = task.await.map_err(|error| {
            ToolError::new(format!("Custom tool '{}' crashed: {error}", self.spec.name))
        })?;
        match end {
            CallEnd::Settled(Ok(result)) => Ok(ToolOutput {
                content: result.content,
                details: result.details,
                is_error: result.is_error,
            }),
            CallEnd::Settled(Err(message)) => Err(ToolError::new(message)),
            CallEnd::TimedOut(limit) => Err(ToolError::new(format!(
                "Custom tool '{}' was stopped after {} s, its time limit (an endless loop, or \
                 work that never finishes?). Try smaller input, or ask the user to raise the limit.",
                self.spec.name,
                limit.as_secs_f64()
            ))),
            CallEnd::Cancelled(last_word) => Err(ToolError::new(match last_word {
                Some(text) if !text.is_empty() => {
                    format!("Custom tool '{}' was cancelled: {text}", self.spec.name)
                }
                _ => format!("Custom tool '{}' was cancelled.", self.spec.name),
            })),
        }
    }

    async fn on_session(
        &self,
        event: &SessionEvent,
        session: &SessionInfo,
    ) -> Result<(), ToolError> {
        if !self.hooks.on_session {
            return Ok(());
        }
        self.engine
            .on_session(self.index, event, session)
            .await
            .map_err(|message| ToolError::new(format!("onSession failed: {message}")))
    }
}

/// A loaded tool and the module it came from.
#[derive(Clone, Debug)]
pub struct LoadedTool {
    /// The tool, ready to register (`Arc<ScriptTool>` coerces to `Arc<dyn Tool>`).
    pub tool: Arc<ScriptTool>,
    /// The path it was found at, before symlinks were resolved.
    pub path: PathBuf,
}

/// What one module gave: its tools, and its pi extension when it registered handlers or
/// commands.
#[derive(Clone, Debug, Default)]
pub(crate) struct ModuleParts {
    pub tools: Vec<Arc<ScriptTool>>,
    pub extension: Option<Arc<crate::Extension>>,
}

/// Loads every tool of the module `entry` (canonical), confining its imports to `root`.
pub(crate) async fn load_module(
    host: Arc<crate::ScriptHost>,
    entry: PathBuf,
    root: PathBuf,
) -> Result<ModuleParts, String> {
    // Loading runs in its own task for the same reason calls do: nothing drops a half-run
    // engine future.
    let task = tokio::spawn(async move {
        let (engine, loaded) = Engine::load(host, entry.clone(), root).await?;
        let extension = loaded.is_extension().then(|| {
            Arc::new(crate::Extension::new(
                Arc::clone(&engine),
                entry,
                loaded.events,
                loaded.commands,
            ))
        });
        Ok(ModuleParts {
            tools: loaded
                .tools
                .into_iter()
                .map(|descriptor| Arc::new(ScriptTool::new(Arc::clone(&engine), descriptor)))
                .collect(),
            extension,
        })
    });
    task.await
        .map_err(|error| format!("the engine crashed while loading: {error}"))?
}

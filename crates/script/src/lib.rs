//! Custom tools for toolhost, written in JavaScript or TypeScript and run in an embedded
//! engine (QuickJS through rquickjs; TypeScript stripped with oxc). No Node.js is needed.
//!
//! A custom tool is a module whose default export (or export named `factory`) is a factory
//! `(api) => tool | tool[] | Promise<…>` (R31). The factory receives the host API (R32):
//! `cwd`, `exec`, `ui` + `hasUI`, `logger`, `typebox`, `pi` and `pushPendingAction`.
//!
//! ```ts
//! import { Type } from "@sinclair/typebox";
//!
//! export default (api) => ({
//!   name: "hello",
//!   label: "Hello",
//!   description: "Greets someone",
//!   parameters: Type.Object({ name: Type.String({ description: "Who to greet" }) }),
//!   async execute(toolCallId, params, onUpdate, ctx, signal) {
//!     return { content: [{ type: "text", text: `Hello, ${params.name}!` }] };
//!   },
//! });
//! ```
//!
//! The embedding program builds a [`ScriptHost`] (working folder, limits, and the services
//! behind `exec` and `node:fs`), then calls [`discover_and_load_custom_tools`] or
//! [`load_custom_tools`] and registers the [`ScriptTool`]s it gets: they go through the same
//! pipeline as built-ins (coercion, validation, permissions, truncation, hints). [`CustomTools`]
//! keeps a loaded set and reloads it when files change.
//!
//! Each module runs in an engine of its own with a memory limit; each call has a time limit
//! that interrupts endless loops ([`ScriptLimits`]). A tool that throws, rejects, runs out of
//! time or memory becomes an error result; the host carries on.

mod discovery;
mod engine;
mod error;
mod extension;
pub mod host_api;
pub mod in_session;
mod limits;
mod module_loader;
pub mod pi_messages;
mod pi_packages;
mod pi_sources;
mod reload;
mod render_tree;
mod source_maps;
mod tool;
mod transpile;

pub use discovery::{
    Discovery, ModuleSource, discover_and_load_custom_tools, find_modules, load_custom_tools,
    provider_folders, resolve_configured_path,
};
pub use error::{LoadError, NameClash};
pub use extension::{
    Extension, ExtensionCommand, Extensions, InputOutcome, ToolCallVerdict, ToolResultChange,
    pi_tool_name,
};
pub use host_api::actions::{ExtensionAction, ExtensionActionKind};
pub use host_api::exec::{DenyListOnly, ExecGate, ExecRequest};
pub use host_api::fs::{
    DirEntry, EntryKind, FileAccess, FileGate, FileRequest, FileStat, FileSystemOnly, FsError,
    NoFileSystem, ScriptFileSystem,
};
pub use host_api::ui::{UiContext, UiRequest};
pub use host_api::{Callers, PendingAction, ScriptHost, ScriptHostBuilder};
pub use in_session::{
    CompactRequest, CompactVerdict, CompactionDone, EntryScope, ExtensionGate, ExtensionResults,
    ExtensionSession, ExtensionSlot, ExtensionStore, Prompted,
};
pub use limits::{
    DEFAULT_ABORT_GRACE, DEFAULT_CALL_TIME_LIMIT, DEFAULT_HOOK_TIME_LIMIT, DEFAULT_LOAD_TIME_LIMIT,
    DEFAULT_MEMORY_LIMIT, ScriptLimits,
};
pub use reload::{CustomTools, ReloadReport, ToolWatcher, WATCH_DEBOUNCE};
pub use render_tree::{RenderBlock, RenderLine, RenderSpan, RenderTree};
pub use tool::{LoadedTool, RenderOptions, Rendering, ScriptTool};
pub use transpile::{Transpiled, transpile_typescript};

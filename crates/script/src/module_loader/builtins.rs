//! The built-in modules a tool may import or `require`: Node's built-ins that a tool needs
//! (confined to the host's file system, `exec` and permission rules), TypeBox, a zod subset, and
//! the pi host packages under each of their published names.
//!
//! Every built-in is written in CommonJS form (`module.exports = …`) so that `require()` can
//! give it synchronously; an `import` of one gets an ES module facade over the same exports
//! (see [`super::facade`]).

/// The built-in modules: canonical name and CommonJS source.
const SOURCES: &[(&str, &str)] = &[
    ("@sinclair/typebox", include_str!("../js/typebox.js")),
    ("toolhost:text", include_str!("../js/styled_text.js")),
    ("toolhost:extension", include_str!("../js/extension.js")),
    ("toolhost:pi-tools", include_str!("../js/pi_tools.js")),
    ("toolhost:intl", include_str!("../js/intl.js")),
    ("toolhost:pi-edit", include_str!("../js/pi_edit.js")),
    ("zod", include_str!("../js/zod.js")),
    ("node:path", include_str!("../js/path.js")),
    ("node:fs", include_str!("../js/fs.js")),
    (
        "node:fs/promises",
        "module.exports = require(\"node:fs\").promises;",
    ),
    ("node:os", include_str!("../js/os.js")),
    ("node:url", include_str!("../js/url.js")),
    ("node:crypto", include_str!("../js/crypto.js")),
    ("node:util", include_str!("../js/util.js")),
    ("node:events", include_str!("../js/events.js")),
    ("node:buffer", include_str!("../js/buffer.js")),
    ("node:process", include_str!("../js/process.js")),
    ("node:child_process", include_str!("../js/child_process.js")),
    ("node:timers", include_str!("../js/timers.js")),
    (
        "node:timers/promises",
        include_str!("../js/timers_promises.js"),
    ),
    ("node:assert", include_str!("../js/assert.js")),
    ("node:readline", include_str!("../js/readline.js")),
    (
        "node:perf_hooks",
        "module.exports = { performance: globalThis.performance, PerformanceObserver: class { observe() {} disconnect() {} } };",
    ),
    (
        "node:string_decoder",
        include_str!("../js/string_decoder.js"),
    ),
    ("node:async_hooks", include_str!("../js/async_hooks.js")),
    ("node:module", include_str!("../js/module.js")),
    ("@mariozechner/pi-tui", include_str!("../js/pi_tui.js")),
    ("@mariozechner/pi-ai", include_str!("../js/pi_ai.js")),
    (
        "@mariozechner/pi-coding-agent",
        include_str!("../js/pi_coding_agent.js"),
    ),
];

/// Scopes under which the pi packages are published (pi, oh-my-pi, and pi's new home).
const PI_SCOPES: &[&str] = &["@mariozechner/", "@oh-my-pi/", "@earendil-works/"];

/// Other spellings of a built-in.
const ALIASES: &[(&str, &str)] = &[
    ("typebox", "@sinclair/typebox"),
    ("zod/v4", "zod"),
    ("toolhost:zod", "zod"),
    ("zod/v3", "zod"),
    ("node:path/posix", "node:path"),
    ("node:sys", "node:util"),
    ("node:assert/strict", "node:assert"),
];

/// Node's own modules, for telling "not provided here" from "not installed".
const NODE_MODULES: &[&str] = &[
    "assert",
    "async_hooks",
    "buffer",
    "child_process",
    "cluster",
    "console",
    "constants",
    "crypto",
    "dgram",
    "diagnostics_channel",
    "dns",
    "domain",
    "events",
    "fs",
    "http",
    "http2",
    "https",
    "inspector",
    "module",
    "net",
    "os",
    "path",
    "perf_hooks",
    "process",
    "punycode",
    "querystring",
    "readline",
    "repl",
    "sqlite",
    "stream",
    "string_decoder",
    "sys",
    "test",
    "timers",
    "tls",
    "trace_events",
    "tty",
    "url",
    "util",
    "v8",
    "vm",
    "wasi",
    "worker_threads",
    "zlib",
];

/// The canonical name of the built-in `specifier` names, if it names one.
pub(crate) fn canonical(specifier: &str) -> Option<&'static str> {
    if let Some((name, _)) = SOURCES.iter().find(|(name, _)| *name == specifier) {
        return Some(name);
    }
    if let Some((_, target)) = ALIASES.iter().find(|(alias, _)| *alias == specifier) {
        return Some(target);
    }
    if let Some(package) = PI_SCOPES
        .iter()
        .find_map(|scope| specifier.strip_prefix(scope))
    {
        // A subpath (`pi-ai/compat`, `pi-coding-agent/extensions`) is the package itself: the
        // built-in carries every export a tool may reach through one.
        let package = package.split('/').next().unwrap_or(package);
        let wanted = format!("@mariozechner/{package}");
        return SOURCES
            .iter()
            .find(|(name, _)| *name == wanted)
            .map(|(name, _)| *name);
    }
    // TypeBox's subpaths (`typebox/value`, `@sinclair/typebox/compiler`) are the one built-in.
    if let Some((package, _)) = specifier
        .split_once('/')
        .filter(|(package, _)| *package == "typebox")
        .or_else(|| {
            specifier
                .strip_prefix("@sinclair/typebox/")
                .map(|subpath| ("@sinclair/typebox", subpath))
        })
    {
        return canonical(package);
    }
    if !specifier.starts_with("node:") && is_node_module(specifier) {
        return canonical(&format!("node:{specifier}"));
    }
    None
}

/// The CommonJS source of a canonical built-in.
pub(crate) fn source(canonical: &str) -> Option<&'static str> {
    SOURCES
        .iter()
        .find(|(name, _)| *name == canonical)
        .map(|(_, source)| *source)
}

/// Whether `specifier` names one of Node's own modules (`net`, `node:http`, `stream/web`).
pub(crate) fn is_node_module(specifier: &str) -> bool {
    let name = specifier.strip_prefix("node:").unwrap_or(specifier);
    let top = name.split('/').next().unwrap_or(name);
    specifier.starts_with("node:") || NODE_MODULES.contains(&top)
}

/// Whether a package of this name, when a tool's own `node_modules` has it, wins over the
/// built-in (the built-in zod is a fallback; the host packages and Node's are always ours).
pub(crate) fn installed_package_wins(canonical: &str) -> bool {
    canonical == "zod"
}

/// The Node modules a tool can use, for error messages.
pub(crate) fn provided_node_modules() -> String {
    SOURCES
        .iter()
        .filter_map(|(name, _)| name.strip_prefix("node:"))
        .collect::<Vec<_>>()
        .join(", ")
}

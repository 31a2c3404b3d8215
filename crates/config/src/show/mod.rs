//! `toolhost config show`: the merged configuration as TOML, with where each value came from.

use std::fmt::Write as _;

use toolhost_core::permission::{PermissionRule, RuleList};

use super::{Config, HookCommand};
use definitions::{agents, mcp_servers, providers};

mod definitions;

const DEFAULT: &str = "built-in default";

pub(super) fn render(config: &Config) -> String {
    let mut out = String::new();
    let files = if config.files.is_empty() {
        "none".to_owned()
    } else {
        config
            .files
            .iter()
            .map(|path| path.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(out, "# files read, in order: {files}");
    // A top-level key: above the first table, or TOML would read it as the table's.
    line(
        &mut out,
        &format!(
            "mcp_oauth_store = {}",
            quote(config.mcp_oauth_store.as_str())
        ),
        config.source_of("mcp_oauth_store"),
    );

    out.push_str("\n[limits]\n");
    match config.limits.max_result_chars {
        Some(chars) => line(
            &mut out,
            &format!("max_result_chars = {chars}"),
            config.source_of("limits.max_result_chars"),
        ),
        None => line(
            &mut out,
            &format!("max_result_chars = {}", toolhost_core::DEFAULT_MAX_CHARS),
            None,
        ),
    }

    tools(&mut out, config);
    shell(&mut out, config);
    custom_tools(&mut out, config);
    plugins_and_todo(&mut out, config);
    skills(&mut out, config);
    web(&mut out, config);
    mcp_servers(&mut out, config);
    agents(&mut out, config);
    providers(&mut out, config);

    out.push_str("\n[sessions]\n");
    match &config.sessions.path {
        Some(path) => line(
            &mut out,
            &format!("path = {}", quote(&path.display().to_string())),
            config.source_of("sessions.path"),
        ),
        None => out.push_str(&format!(
            "# path = \"~/.toolhost/sessions.db\"       # {DEFAULT} ({} overrides it)\n",
            crate::SESSIONS_DB_ENV
        )),
    }

    out.push_str("\n[subagents]\n");
    line(
        &mut out,
        &format!("max_depth = {}", config.subagents.max_depth),
        config.source_of("subagents.max_depth"),
    );
    line(
        &mut out,
        &format!("max_concurrent = {}", config.subagents.max_concurrent),
        config.source_of("subagents.max_concurrent"),
    );

    out.push_str("\n[permissions]\n");
    let permissions = &config.permissions;
    line(
        &mut out,
        &format!("mode = {}", quote(permissions.mode.as_str())),
        config.source_of("permissions.mode"),
    );
    for list in [RuleList::Allow, RuleList::Ask, RuleList::Deny] {
        rules(&mut out, list, permissions.rules.list(list));
    }
    if let Some(path) = &permissions.audit_log {
        line(
            &mut out,
            &format!("audit_log = {}", quote(&path.display().to_string())),
            config.source_of("permissions.audit_log"),
        );
    }

    for (event, hooks) in [
        ("PreToolUse", &config.hooks.pre_tool_use),
        ("PostToolUse", &config.hooks.post_tool_use),
        ("PreCompact", &config.hooks.pre_compact),
    ] {
        for hook in hooks {
            hook_table(&mut out, event, hook);
        }
    }
    out
}

fn shell(out: &mut String, config: &Config) {
    use crate::shell::{BASH_OUTPUT_CAP, DEFAULT_BASH_TIMEOUT, MAX_BASH_TIMEOUT};

    let shell = &config.shell;
    out.push_str("\n[shell]\n");
    let values = [
        (
            "exec_timeout",
            shell
                .exec_timeout
                .unwrap_or(DEFAULT_BASH_TIMEOUT)
                .as_secs()
                .to_string(),
        ),
        (
            "max_timeout",
            shell
                .max_timeout
                .unwrap_or(MAX_BASH_TIMEOUT)
                .as_secs()
                .to_string(),
        ),
        (
            "max_output_bytes",
            shell
                .max_output_bytes
                .unwrap_or(BASH_OUTPUT_CAP)
                .to_string(),
        ),
        ("sandbox", quote(shell.sandbox.unwrap_or_default().as_str())),
        ("network", shell.network.unwrap_or(true).to_string()),
        (
            "editor_terminal",
            shell.editor_terminal.unwrap_or(false).to_string(),
        ),
    ];
    for (key, value) in values {
        let source = config.source_of(&format!("shell.{key}")).map(str::to_owned);
        line(out, &format!("{key} = {value}"), source.as_deref());
    }
    let roots: Vec<String> = config
        .shell
        .writable_roots
        .iter()
        .map(|root| quote(&root.display().to_string()))
        .collect();
    let _ = writeln!(out, "writable_roots = [{}]", roots.join(", "));
}

fn custom_tools(out: &mut String, config: &Config) {
    let custom = &config.custom_tools;
    out.push_str("\n[custom_tools]\n");
    let paths: Vec<String> = custom.paths.iter().map(|path| quote(path)).collect();
    let _ = writeln!(out, "paths = [{}]", paths.join(", "));
    if !custom.replace_builtins.is_empty() {
        let names: Vec<String> = custom
            .replace_builtins
            .iter()
            .map(|name| quote(name))
            .collect();
        let _ = writeln!(out, "replace_builtins = [{}]", names.join(", "));
    }
    for (key, value) in [
        (
            "call_timeout",
            custom.call_timeout.map(|d| d.as_secs().to_string()),
        ),
        (
            "load_timeout",
            custom.load_timeout.map(|d| d.as_secs().to_string()),
        ),
        (
            "memory_limit_mb",
            custom.memory_limit_mb.map(|mb| mb.to_string()),
        ),
    ] {
        if let Some(value) = value {
            let source = config
                .source_of(&format!("custom_tools.{key}"))
                .map(str::to_owned);
            line(out, &format!("{key} = {value}"), source.as_deref());
        }
    }
}

/// `[plugins]` (each folder with where it was configured, then the plugins loaded) and
/// `[todo]`.
fn plugins_and_todo(out: &mut String, config: &Config) {
    out.push_str("\n[plugins]\n");
    if config.plugins.paths.is_empty() {
        out.push_str("paths = []\n");
    } else {
        out.push_str("paths = [\n");
        for path in &config.plugins.paths {
            line(
                out,
                &format!("  {},", quote(&path.path.display().to_string())),
                Some(&path.origin),
            );
        }
        out.push_str("]\n");
    }
    for plugin in &config.plugins.loaded {
        let _ = writeln!(
            out,
            "# loaded: {} ({}, {}){}",
            plugin.name,
            plugin.source,
            plugin.root.display(),
            if plugin.runs_anything() && !plugin.approved {
                " — its hooks and servers wait for `toolhost plugins approve`"
            } else {
                ""
            }
        );
    }
    out.push_str("\n[todo]\n");
    line(
        out,
        &format!("reminder_turns = {}", config.todo.reminder_turns()),
        config.source_of("todo.reminder_turns"),
    );
}

/// `[tools]`, shown only when something is set (the defaults depend on the model).
fn tools(out: &mut String, config: &Config) {
    let tools = &config.tools;
    if tools.defer_threshold.is_none() && tools.always_loaded.is_empty() {
        return;
    }
    out.push_str("\n[tools]\n");
    match tools.defer_threshold {
        Some(tokens) => line(
            out,
            &format!("defer_threshold = {tokens}"),
            config.source_of("tools.defer_threshold"),
        ),
        None => out.push_str("# defer_threshold: a tenth of the model's context window\n"),
    }
    let _ = writeln!(out, "always_loaded = {}", list(&tools.always_loaded));
}

/// `[skills]`, shown only when something is set (most configurations have no hub).
fn skills(out: &mut String, config: &Config) {
    let skills = &config.skills;
    if *skills == crate::SkillsConfig::default() {
        return;
    }
    out.push_str("\n[skills]\n");
    let hubs: Vec<String> = skills.hubs.iter().map(|hub| quote(hub)).collect();
    let _ = writeln!(out, "hubs = [{}]", hubs.join(", "));
    for (key, value) in [
        ("max_archive_bytes", skills.max_archive_bytes),
        ("max_unpacked_bytes", skills.max_unpacked_bytes),
        ("max_entries", skills.max_entries.map(|n| n as u64)),
    ] {
        if let Some(value) = value {
            let source = config
                .source_of(&format!("skills.{key}"))
                .map(str::to_owned);
            line(out, &format!("{key} = {value}"), source.as_deref());
        }
    }
}

/// `[web]` and `[web.search]`, every key with its value or default.
fn web(out: &mut String, config: &Config) {
    use crate::web::{CACHE_TTL, DEFAULT_FETCH_TIMEOUT, MAX_CONTENT_CHARS, MAX_RESPONSE_BYTES};

    let web = &config.web;
    out.push_str("\n[web]\n");
    for (key, value) in [
        (
            "timeout",
            web.timeout
                .unwrap_or(DEFAULT_FETCH_TIMEOUT)
                .as_secs()
                .to_string(),
        ),
        (
            "max_response_bytes",
            web.max_response_bytes
                .unwrap_or(MAX_RESPONSE_BYTES)
                .to_string(),
        ),
        (
            "max_content_chars",
            web.max_content_chars
                .unwrap_or(MAX_CONTENT_CHARS)
                .to_string(),
        ),
        ("cache", web.cache.unwrap_or(true).to_string()),
        (
            "cache_ttl",
            web.cache_ttl.unwrap_or(CACHE_TTL).as_secs().to_string(),
        ),
    ] {
        let source = config.source_of(&format!("web.{key}")).map(str::to_owned);
        line(out, &format!("{key} = {value}"), source.as_deref());
    }
    for (key, value) in [
        ("summary_model", &web.summary_model),
        ("summary_provider", &web.summary_provider),
    ] {
        if let Some(value) = value {
            let source = config.source_of(&format!("web.{key}")).map(str::to_owned);
            line(out, &format!("{key} = {}", quote(value)), source.as_deref());
        }
    }
    if !web.resolve.is_empty() {
        let entries: Vec<String> = web
            .resolve
            .iter()
            .map(|(host, addresses)| {
                let addresses: Vec<String> = addresses
                    .iter()
                    .map(|address| quote(&address.to_string()))
                    .collect();
                format!("{} = [{}]", quote(host), addresses.join(", "))
            })
            .collect();
        let _ = writeln!(out, "resolve = {{ {} }}", entries.join(", "));
    }
    if let Some(search) = &web.search {
        let _ = writeln!(out, "\n[web.search]  # {}", search.origin);
        let _ = writeln!(out, "provider = {}", quote(search.provider.name()));
        if let Some(url) = &search.url {
            let _ = writeln!(out, "url = {}", quote(url));
        }
        if let Some(variable) = &search.api_key_env {
            let _ = writeln!(out, "api_key_env = {}", quote(variable));
        }
    } else if web.native_search.is_some() {
        out.push_str("\n[web.search]\n");
    }
    if let Some(native) = web.native_search {
        line(
            out,
            &format!("native = {native}"),
            config.source_of("web.search.native"),
        );
    }
}

fn line(out: &mut String, text: &str, source: Option<&str>) {
    let _ = writeln!(out, "{text:<40} # {}", source.unwrap_or(DEFAULT));
}

fn rules(out: &mut String, list: RuleList, rules: &[PermissionRule]) {
    if rules.is_empty() {
        let _ = writeln!(out, "{} = []", list.as_str());
        return;
    }
    let _ = writeln!(out, "{} = [", list.as_str());
    for rule in rules {
        line(
            out,
            &format!("  {},", quote(rule.as_str())),
            Some(rule.origin().unwrap_or(DEFAULT)),
        );
    }
    out.push_str("]\n");
}

fn hook_table(out: &mut String, event: &str, hook: &HookCommand) {
    let _ = writeln!(out, "\n[[hooks.{event}]]  # {}", hook.origin);
    if let Some(matcher) = &hook.matcher {
        let _ = writeln!(out, "matcher = {}", quote(matcher));
    }
    let _ = writeln!(out, "command = {}", quote(&hook.command));
    let _ = writeln!(out, "timeout = {}", hook.timeout.as_secs());
}

fn list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|item| quote(item)).collect();
    format!("[{}]", quoted.join(", "))
}

/// A TOML basic string.
fn quote(text: &str) -> String {
    toml::Value::String(text.to_owned()).to_string()
}

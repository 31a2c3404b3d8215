//! The sections of `toolhost config show` that define things: MCP servers, agents and model
//! providers, each with where it came from.

use std::fmt::Write as _;

use crate::Config;
use crate::mcp_server::{McpServerConfig, McpTransport};

use super::{DEFAULT, line, list, quote};

pub(super) fn mcp_servers(out: &mut String, config: &Config) {
    for (name, server) in &config.mcp_servers {
        let _ = writeln!(out, "\n[mcp_servers.{}]  # {}", quote(name), server.origin);
        server_values(out, server);
    }
}

/// Each agent with where it came from, its direct servers after it.
pub(super) fn agents(out: &mut String, config: &Config) {
    for (name, agent) in config.agents.iter() {
        let _ = writeln!(
            out,
            "\n[agents.{}]  # {}",
            quote(name),
            agent.origin.as_deref().unwrap_or(DEFAULT)
        );
        if let Some(description) = &agent.description {
            let _ = writeln!(out, "description = {}", quote(description));
        }
        if let Some(selection) = &agent.allowed_tools {
            let rules: Vec<String> = selection
                .rules()
                .iter()
                .map(|rule| rule.as_str().to_owned())
                .collect();
            let _ = writeln!(out, "allowed_tools = {}", list(&rules));
        }
        if let Some(selection) = &agent.disallowed_tools {
            let rules: Vec<String> = selection
                .rules()
                .iter()
                .map(|rule| rule.as_str().to_owned())
                .collect();
            let _ = writeln!(out, "disallowed_tools = {}", list(&rules));
        }
        if let Some(ids) = &agent.mcp_servers {
            let _ = writeln!(out, "mcp_servers = {}", list(ids));
        }
        if let Some(model) = &agent.model {
            let _ = writeln!(out, "model = {}", quote(model));
        }
        if let Some(mode) = agent.permission_mode {
            let _ = writeln!(out, "permission_mode = {}", quote(mode.as_str()));
        }
        if let Some(turns) = agent.max_turns {
            let _ = writeln!(out, "max_turns = {turns}");
        }
        if !agent.skills.is_empty() {
            let _ = writeln!(out, "skills = {}", list(&agent.skills));
        }
        if agent.background {
            let _ = writeln!(out, "background = true");
        }
        if let Some(prompt) = &agent.prompt {
            let _ = writeln!(
                out,
                "# prompt: {} lines (toolhost agents show {name})",
                prompt.lines().count()
            );
        }
        for (id, server) in &agent.direct_mcp_servers {
            let _ = writeln!(
                out,
                "\n[agents.{}.direct_mcp_servers.{}]  # {}",
                quote(name),
                quote(id),
                server.origin
            );
            server_values(out, server);
        }
    }
}

/// `[agent]` and `[providers.NAME]` (the key itself never: only the variable that holds it).
pub(super) fn providers(out: &mut String, config: &Config) {
    let settings = &config.agent_settings;
    out.push_str("\n[agent]\n");
    if let Some(provider) = &settings.provider {
        line(
            out,
            &format!("provider = {}", quote(provider)),
            config.source_of("agent.provider"),
        );
    }
    if let Some(model) = &settings.model {
        line(
            out,
            &format!("model = {}", quote(model)),
            config.source_of("agent.model"),
        );
    }
    let (iterations, source) = match settings.max_iterations {
        Some(limit) => (limit, config.source_of("agent.max_iterations")),
        None => (crate::providers::DEFAULT_MAX_ITERATIONS, None),
    };
    line(out, &format!("max_iterations = {iterations}"), source);
    let (share, source) = match settings.compact_at {
        Some(share) => (share, config.source_of("agent.compact_at")),
        None => (crate::providers::DEFAULT_COMPACT_AT, None),
    };
    line(out, &format!("compact_at = {share}"), source);
    for (name, entry) in &config.providers {
        let _ = writeln!(out, "\n[providers.{}]  # {}", quote(name), entry.origin);
        let _ = writeln!(out, "api = {}", quote(entry.api.as_str()));
        let optional = [
            ("base_url", entry.base_url.as_deref()),
            ("api_key_env", entry.api_key_env.as_deref()),
            ("model", entry.model.as_deref()),
        ];
        for (key, value) in optional {
            if let Some(value) = value {
                let _ = writeln!(out, "{key} = {}", quote(value));
            }
        }
        if let Some(tokens) = entry.context_window {
            let _ = writeln!(out, "context_window = {tokens}");
        }
        if let Some(tokens) = entry.max_output_tokens {
            let _ = writeln!(out, "max_output_tokens = {tokens}");
        }
        let timeouts = [
            ("connect_timeout", entry.timeouts.connect),
            ("first_byte_timeout", entry.timeouts.first_byte),
            ("idle_timeout", entry.timeouts.idle),
            ("request_timeout", entry.timeouts.request),
        ];
        for (key, value) in timeouts {
            if let Some(value) = value {
                let _ = writeln!(out, "{key} = {}", value.as_secs());
            }
        }
        if let Some(retries) = entry.max_retries {
            let _ = writeln!(out, "max_retries = {retries}");
        }
        if let Some(cache) = entry.prompt_cache {
            let _ = writeln!(out, "prompt_cache = {cache}");
        }
        if let Some(native) = entry.native_tool_search {
            let _ = writeln!(out, "native_tool_search = {native}");
        }
        if let Some(temperature) = entry.temperature {
            let _ = writeln!(out, "temperature = {}", temperature.0);
        }
        if let Some(pricing) = &entry.pricing {
            let mut prices = vec![
                format!("input = {}", pricing.input),
                format!("output = {}", pricing.output),
            ];
            for (key, value) in [
                ("cached_input", pricing.cached_input),
                ("cache_write", pricing.cache_write),
            ] {
                if let Some(value) = value {
                    prices.push(format!("{key} = {value}"));
                }
            }
            let _ = writeln!(out, "pricing = {{ {} }}", prices.join(", "));
        }
        for (header, value) in &entry.headers {
            let _ = writeln!(out, "headers.{} = {}", quote(header), quote(value));
        }
    }
}

/// A server's values; those of `env` and `headers` are hidden (they often hold secrets).
fn server_values(out: &mut String, server: &McpServerConfig) {
    let hidden = |keys: Vec<&String>| {
        let shown: Vec<String> = keys
            .iter()
            .map(|k| format!("{} = \"…\"", quote(k)))
            .collect();
        format!("{{ {} }}", shown.join(", "))
    };
    let _ = writeln!(out, "type = {}", quote(server.transport.kind()));
    match &server.transport {
        McpTransport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let _ = writeln!(out, "command = {}", quote(command));
            let _ = writeln!(out, "args = {}", list(args));
            let _ = writeln!(out, "env = {}", hidden(env.keys().collect()));
            if let Some(cwd) = cwd {
                let _ = writeln!(out, "cwd = {}", quote(&cwd.display().to_string()));
            }
        }
        McpTransport::Http {
            url,
            headers,
            bearer_token_env,
        }
        | McpTransport::Sse {
            url,
            headers,
            bearer_token_env,
        } => {
            let _ = writeln!(out, "url = {}", quote(url));
            let _ = writeln!(out, "headers = {}", hidden(headers.keys().collect()));
            if let Some(variable) = bearer_token_env {
                let _ = writeln!(out, "bearer_token_env = {}", quote(variable));
            }
            if let Some(helper) = &server.headers_helper {
                let _ = writeln!(out, "headers_helper = {}", quote(helper));
            }
        }
        // Built-in providers are not configuration: nothing to show.
        McpTransport::InProcess => {}
    }
    let _ = writeln!(out, "enabled = {}", server.enabled);
    if let Some(enabled) = &server.enabled_tools {
        let _ = writeln!(out, "enabled_tools = {}", list(enabled));
    }
    let _ = writeln!(out, "disabled_tools = {}", list(&server.disabled_tools));
    let _ = writeln!(
        out,
        "startup_timeout = {}",
        server.startup_timeout.as_secs()
    );
    let _ = writeln!(out, "tool_timeout = {}", server.tool_timeout.as_secs());
    let _ = writeln!(out, "required = {}", server.required);
    if let Some(problem) = &server.problem {
        let _ = writeln!(out, "# problem: {problem}");
    }
}

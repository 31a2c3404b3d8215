//! Claude Code plugins: folders with `.claude-plugin/plugin.json` bundling slash commands,
//! agents, skills, hooks and MCP servers ([`manifest`]), found where [`records`] says
//! (`[plugins] paths`, toolhost's installs, Claude Code's installs). Each contributes:
//!
//! - its commands as `/PLUGIN:command` and its skills as `PLUGIN:skill` (the agent and
//!   `skills list` read [`LoadedPlugin::command_paths`] and [`LoadedPlugin::skill_folders`]);
//! - its agents as `PLUGIN:agent` (an agent of that name defined elsewhere wins);
//! - its hooks and MCP servers (`plugin_PLUGIN_SERVER`, as Claude Code names them), with
//!   `${CLAUDE_PLUGIN_ROOT}` standing for its folder, once the user has said yes to them
//!   ([`approvals`]): until then they are left out with a warning saying how to approve.
//!
//! A plugin that does not load is left out with one warning; the others load. Of two plugins
//! with one name, the first found wins (the configuration's, then toolhost's, then Claude
//! Code's).

pub mod approvals;
pub mod manifest;
pub mod records;

use std::path::Path;

use toolhost_config::claude_settings::{claude_hooks, line_of};
use toolhost_config::plugins::LoadedPlugin;
use toolhost_config::{Config, McpServerConfig, McpTransport, claude_mcp_json};

pub use approvals::Approvals;
pub use manifest::{PLUGIN_MANIFEST, Plugin};
pub use records::{PluginPlace, plugin_places};

/// The variable that stands for a plugin's folder in its hooks and servers.
const PLUGIN_ROOT_VARIABLE: &str = "CLAUDE_PLUGIN_ROOT";

/// Reads every plugin of [`plugin_places`] into `config`: its approved hooks and
/// servers, and a [`LoadedPlugin`] in `config.plugins.loaded` for its commands and skills.
pub fn load_plugins(config: &mut Config, workspace: &Path, home: Option<&Path>) {
    let (places, warnings) = plugin_places(config, workspace, home);
    for warning in warnings {
        config.warn(warning);
    }
    if places.is_empty() {
        return;
    }
    let approvals = match home.map(Approvals::read).transpose() {
        Ok(approvals) => approvals.unwrap_or_default(),
        Err(warning) => {
            config.warn(format!(
                "{warning}; no plugin's hooks or servers are approved"
            ));
            Approvals::default()
        }
    };
    for place in places {
        let plugin = match Plugin::load(&place.root) {
            Ok(plugin) => plugin,
            Err(problem) => {
                config.warn(format!(
                    "{problem}; the plugin (named in {}) is left out",
                    place.named_in
                ));
                continue;
            }
        };
        if let Some(kept) = config
            .plugins
            .loaded
            .iter()
            .find(|kept| kept.name == plugin.name)
        {
            if kept.root != plugin.root {
                config.warn(format!(
                    "{}: the plugin '{}' is also in {}, which wins; this one is left out",
                    plugin.root.display(),
                    plugin.name,
                    kept.root.display()
                ));
            }
            continue;
        }
        let loaded = contribute(config, &plugin, place.source, workspace, &approvals);
        config.plugins.loaded.push(loaded);
    }
}

/// Adds what `plugin` gives to `config` and says what it gave.
fn contribute(
    config: &mut Config,
    plugin: &Plugin,
    source: &str,
    workspace: &Path,
    approvals: &Approvals,
) -> LoadedPlugin {
    let mut loaded = LoadedPlugin {
        name: plugin.name.clone(),
        version: plugin.version.clone(),
        description: plugin.description.clone(),
        root: plugin.root.clone(),
        source: source.to_owned(),
        command_paths: plugin.command_paths.clone(),
        skill_folders: plugin.skill_folders.clone(),
        // Its agents, `PLUGIN:agent`, are read with the other agent files when first needed.
        agent_paths: plugin.agent_paths.clone(),
        ..LoadedPlugin::default()
    };
    let root = plugin.root.display().to_string();
    let mut hooks = Vec::new();
    for part in &plugin.hooks {
        let at = |needle: &str| format!("{}:{}", part.path.display(), line_of(&part.text, needle));
        let (found, problems) = claude_hooks(part.value.clone(), &at);
        for problem in problems {
            config.warn(problem);
        }
        for (event, mut hook) in found {
            hook.command = with_plugin_root(&hook.command, &root);
            loaded.hooks.push(format!(
                "{} {}: {}",
                event.as_str(),
                hook.matcher.as_deref().unwrap_or("*"),
                hook.command
            ));
            hooks.push((event, hook));
        }
    }
    let mut servers = Vec::new();
    let lookup = |name: &str| {
        if name == PLUGIN_ROOT_VARIABLE {
            Some(root.clone())
        } else {
            std::env::var(name).ok()
        }
    };
    for part in &plugin.mcp {
        match claude_mcp_json(&part.path, &part.text, workspace, &lookup) {
            Ok((found, problems)) => {
                for problem in problems {
                    config.warn(problem);
                }
                for mut server in found {
                    server.name = format!("plugin_{}_{}", plugin.name, server.name);
                    loaded.mcp_servers.push(describe_server(&server));
                    servers.push(server);
                }
            }
            Err((line, message)) => config.warn(format!(
                "{}: line {}: {message}; the plugin's servers in it are left out",
                part.path.display(),
                line.unwrap_or(1)
            )),
        }
    }
    loaded.approved =
        !loaded.runs_anything() || approvals.approves(&plugin.root, &loaded.what_runs());
    if !loaded.approved {
        config.warn(format!(
            "plugin '{}' ({}): its {} hook(s) and {} MCP server(s) do not run until you say \
             yes to them: toolhost plugins approve {}",
            plugin.name,
            root,
            loaded.hooks.len(),
            loaded.mcp_servers.len(),
            plugin.name
        ));
        return loaded;
    }
    for (event, hook) in hooks {
        config.add_hook(event, hook);
    }
    for server in servers {
        if config.mcp_servers.contains_key(&server.name) {
            continue;
        }
        config.mcp_servers.insert(server.name.clone(), server);
    }
    loaded
}

/// `command` with `${CLAUDE_PLUGIN_ROOT}` (and `$CLAUDE_PLUGIN_ROOT`) put as `root`.
fn with_plugin_root(command: &str, root: &str) -> String {
    command
        .replace(&format!("${{{PLUGIN_ROOT_VARIABLE}}}"), root)
        .replace(&format!("${PLUGIN_ROOT_VARIABLE}"), root)
}

/// One line for the server: its name and what it starts or reaches.
fn describe_server(server: &McpServerConfig) -> String {
    let what = match &server.transport {
        McpTransport::Stdio { command, args, .. } => std::iter::once(command.as_str())
            .chain(args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        McpTransport::Http { url, .. } | McpTransport::Sse { url, .. } => url.clone(),
        McpTransport::InProcess => "built in".to_owned(),
    };
    format!("{}: {what}", server.name)
}

//! `[plugins]`: Claude Code plugin folders named in the configuration, and what the catalogue
//! found of every plugin (`toolhost_catalog::plugins` reads them; the agent and the commands
//! take their command and skill folders from here).

use std::path::PathBuf;

/// `[plugins]` and the plugins loaded.
#[derive(Clone, Debug, Default)]
pub struct PluginsConfig {
    /// `paths`: plugin folders (each holding `.claude-plugin/plugin.json`), resolved (`~/`
    /// against `$HOME`, relative against the workspace). Lists concatenate across files.
    pub paths: Vec<PluginPath>,
    /// Every plugin that loaded, in precedence order (a plugin's name is taken once).
    pub loaded: Vec<LoadedPlugin>,
}

/// One `[plugins] paths` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PluginPath {
    /// The folder.
    pub path: PathBuf,
    /// Where it was configured (`path:line`).
    pub origin: String,
}

/// A plugin that loaded, and what it gave.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct LoadedPlugin {
    /// Its `name` in `plugin.json`: its commands are `/NAME:command`, its agents and skills
    /// `NAME:agent`, `NAME:skill`.
    pub name: String,
    /// `version`, when it says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// `description`, when it says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The plugin's folder (`${CLAUDE_PLUGIN_ROOT}`).
    pub root: PathBuf,
    /// How it was found: `toolhost` (installed with `toolhost plugins install`), `claude`
    /// (Claude Code's `installed_plugins.json`) or `config` (`[plugins] paths`).
    pub source: String,
    /// The folders (or single files) of its slash commands.
    pub command_paths: Vec<PathBuf>,
    /// The folders holding its skills (each a folder with `SKILL.md`).
    pub skill_folders: Vec<PathBuf>,
    /// The agents it defined, by their namespaced names: filled by whoever lists the plugin
    /// (agent files are read when first needed, see [`crate::Agents`]).
    pub agents: Vec<String>,
    /// The folders (or single files) of its agents.
    #[serde(skip)]
    pub agent_paths: Vec<PathBuf>,
    /// Its hooks, one line each (`PreToolUse Write|Edit: COMMAND`).
    pub hooks: Vec<String>,
    /// Its MCP servers, one line each (`plugin_NAME_SERVER: COMMAND ARGS…` or the URL).
    pub mcp_servers: Vec<String>,
    /// Whether the user said yes to its hooks and MCP servers (as they are now); until then
    /// neither runs.
    pub approved: bool,
}

impl LoadedPlugin {
    /// Whether it has something that runs on its own (hooks or MCP servers) and so needs
    /// the user's yes.
    pub fn runs_anything(&self) -> bool {
        !self.hooks.is_empty() || !self.mcp_servers.is_empty()
    }

    /// What the user approves: its hooks and servers, as shown. An approval is kept with this
    /// text and holds only while the plugin still runs exactly this.
    pub fn what_runs(&self) -> String {
        let mut text = String::new();
        for hook in &self.hooks {
            text.push_str("hook ");
            text.push_str(hook);
            text.push('\n');
        }
        for server in &self.mcp_servers {
            text.push_str("mcp server ");
            text.push_str(server);
            text.push('\n');
        }
        text
    }
}

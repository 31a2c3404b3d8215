//! Reading the agent files when they are first needed (see [`toolhost_config::Agents`]): what
//! the reading needs of the configuration is taken when the configuration is loaded, and the
//! files are opened only when an agent is asked for.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use toolhost_config::{AgentConfig, Config, McpServerConfig, check_agent_servers};

use crate::agent_files::{agent_folders, agent_from_file, markdown_files};
use crate::front_matter;

/// Everything reading the agent files needs, taken from a loaded configuration.
#[derive(Debug, Clone)]
pub struct AgentFileReading {
    /// The agent folders, in merge order (a later one wins).
    folders: Vec<PathBuf>,
    /// Each plugin's name and the folders (or files) of its agents.
    plugins: Vec<(String, Vec<PathBuf>)>,
    /// The agents `[agents.NAME]` tables define: they win over a file.
    tables: Vec<String>,
    /// The configured MCP servers, which an agent's `mcpServers` must name.
    servers: BTreeMap<String, McpServerConfig>,
    /// Claude Code's settings `env`, for an agent's own servers and hooks.
    settings_env: BTreeMap<String, String>,
}

impl AgentFileReading {
    /// What reading the agent files of `workspace` and `home`, and of the plugins `config`
    /// loaded, will need.
    pub fn new(config: &Config, workspace: &Path, home: Option<&Path>) -> Self {
        Self {
            folders: agent_folders(workspace, home),
            plugins: config
                .plugins
                .loaded
                .iter()
                .map(|plugin| (plugin.name.clone(), plugin.agent_paths.clone()))
                .collect(),
            tables: config.agents.tables().keys().cloned().collect(),
            servers: config.mcp_servers.clone(),
            settings_env: config.settings_env.clone(),
        }
    }

    /// Has `config`'s agent files read by this when an agent is first asked for; what they
    /// leave out is logged then.
    pub fn install(self, config: &mut Config) {
        config.agents.read_files_with(Box::new(move || {
            let (agents, warnings) = self.read();
            for warning in warnings {
                tracing::warn!("{warning}");
            }
            agents
        }));
    }

    /// Reads the agent files: the agents by name, and a warning for each file or field left
    /// out (naming the file, the line and what to change).
    pub fn read(&self) -> (BTreeMap<String, AgentConfig>, Vec<String>) {
        let mut agents = BTreeMap::new();
        let mut warnings = Vec::new();
        for folder in &self.folders {
            let mut files = Vec::new();
            markdown_files(folder, 0, &mut files);
            files.sort();
            for path in files {
                let Some(agent) = self.agent(&path, &mut warnings) else {
                    continue;
                };
                if self.tables.contains(&agent.name) {
                    warnings.push(format!(
                        "{}: the agent '{}' is also defined as [agents.{}] in the \
                         configuration, which wins",
                        path.display(),
                        agent.name,
                        agent.name
                    ));
                    continue;
                }
                agents.insert(agent.name.clone(), agent);
            }
        }
        for (plugin, paths) in &self.plugins {
            let mut files = Vec::new();
            for path in paths {
                if path.is_file() {
                    files.push(path.clone());
                } else {
                    markdown_files(path, 0, &mut files);
                }
            }
            files.sort();
            files.dedup();
            for path in files {
                let Some(mut agent) = self.agent(&path, &mut warnings) else {
                    continue;
                };
                agent.name = format!("{plugin}:{}", agent.name);
                agents.entry(agent.name.clone()).or_insert(agent);
            }
        }
        (agents, warnings)
    }

    /// The agent of the file `path`, its front matter only (the body, its prompt, is read when
    /// it runs); `None`, with a warning, when it does not load, and without one when the file
    /// is no agent (a collection's `README.md` has no front matter).
    fn agent(&self, path: &Path, warnings: &mut Vec<String>) -> Option<AgentConfig> {
        let text = match front_matter::read_head(path) {
            Ok(text) => text,
            Err(error) => {
                warnings.push(format!(
                    "{}: cannot read this agent file ({error}); the agent is left out",
                    path.display()
                ));
                return None;
            }
        };
        if !text.trim_start_matches('\u{feff}').starts_with("---") {
            return None;
        }
        let (mut agent, found) = match agent_from_file(path, &text) {
            Ok(loaded) => loaded,
            Err(error) => {
                warnings.push(format!("{error}; the agent is left out"));
                return None;
            }
        };
        warnings.extend(found);
        if let Err(error) = check_agent_servers(&agent, &self.servers) {
            warnings.push(format!("{error}; the agent is left out"));
            return None;
        }
        agent.body_file = Some(path.to_owned());
        toolhost_config::give_settings_env(&mut agent, &self.settings_env);
        Some(agent)
    }
}

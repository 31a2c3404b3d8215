//! Agent definitions in Markdown files with YAML front matter, as Claude Code writes its
//! sub-agents: `~/.claude/agents/*.md`, `~/.toolhost/agents/*.md`, `.claude/agents/*.md` and
//! `.toolhost/agents/*.md` (a later folder's definition replaces an earlier one of the same
//! name; an `[agents.NAME]` table of the TOML configuration wins over a file).
//!
//! ```text
//! ---
//! name: reviewer
//! description: Reviews a diff for bugs.
//! tools: Read, Grep, Glob
//! model: inherit
//! permissionMode: plan
//! maxTurns: 20
//! ---
//! You review code. Report bugs with file and line.
//! ```
//!
//! The body is the agent's system prompt. Every key is checked: a misspelt one is an error
//! naming the file and line, never ignored (`color`, which only Claude Code's UI uses, is
//! accepted and unused).

use std::path::{Path, PathBuf};

use serde::Deserialize;
use toolhost_core::permission::{PermissionMode, ToolSelection};

use toolhost_config::{AgentConfig, Config, ConfigError, whole_tool_rule};

use crate::front_matter::{self, StringOrList};

/// The front matter of an agent file (Claude Code's keys).
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
struct AgentFile {
    name: Option<String>,
    description: Option<String>,
    tools: Option<StringOrList>,
    disallowed_tools: Option<StringOrList>,
    model: Option<String>,
    permission_mode: Option<String>,
    max_turns: Option<usize>,
    mcp_servers: Option<StringOrList>,
    skills: Option<StringOrList>,
    background: Option<bool>,
    /// Claude Code's colour for the agent in its UI: accepted so its files load, unused.
    #[allow(dead_code)]
    color: Option<String>,
}

/// The folders agent files are read from, in merge order (a later one wins).
pub fn agent_folders(workspace: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let mut folders = Vec::new();
    if let Some(home) = home {
        folders.push(home.join(".claude").join("agents"));
        folders.push(home.join(".toolhost").join("agents"));
    }
    folders.push(workspace.join(".claude").join("agents"));
    folders.push(workspace.join(".toolhost").join("agents"));
    folders
}

/// Reads the agent files of every folder of [`agent_folders`] into `config`; a definition named
/// like an `[agents.NAME]` table is left out (with a warning), the table wins.
pub fn read_agent_files(
    config: &mut Config,
    workspace: &Path,
    home: Option<&Path>,
) -> Result<(), ConfigError> {
    let from_toml: Vec<String> = config.agents.keys().cloned().collect();
    for folder in agent_folders(workspace, home) {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
            .collect();
        files.sort();
        for path in files {
            let text = std::fs::read_to_string(&path).map_err(|source| ConfigError::Read {
                path: path.clone(),
                source,
            })?;
            let agent = agent_from_file(&path, &text)?;
            if from_toml.contains(&agent.name) {
                tracing::warn!(
                    "{}: the agent '{}' is also defined as [agents.{}] in the configuration, \
                         which wins",
                    path.display(),
                    agent.name,
                    agent.name
                );
                continue;
            }
            config.agents.insert(agent.name.clone(), agent);
        }
    }
    Ok(())
}

/// The definition in `text`, the content of the agent file `path`.
pub fn agent_from_file(path: &Path, text: &str) -> Result<AgentConfig, ConfigError> {
    let invalid = |line: usize, message: String| ConfigError::Invalid {
        path: path.to_owned(),
        line: Some(line),
        message,
    };
    let document = front_matter::parse_with_literal_keys::<AgentFile>(path, text, &["description"])
        .map_err(|error| invalid(error.line, error.message))?;
    let fields = document.fields;
    let line_of = |key: &str| key_line(text, key);
    let name = match fields.name {
        Some(name) => name.trim().to_owned(),
        None => path
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_default(),
    };
    if name.is_empty() || name.contains(char::is_whitespace) {
        return Err(invalid(
            line_of("name"),
            format!(
                "the agent's name '{name}' is empty or has spaces: write one word, such as code-reviewer"
            ),
        ));
    }
    let mut agent = AgentConfig::named(&name, format!("{}:1", path.display()));
    agent.description = fields.description;
    agent.model = fields.model.filter(|model| !model.trim().is_empty());
    agent.max_turns = fields.max_turns;
    agent.background = fields.background.unwrap_or(false);
    agent.skills = fields
        .skills
        .map(|skills| skills.entries())
        .unwrap_or_default();
    if let Some(mode) = fields.permission_mode {
        agent.permission_mode = Some(mode.parse::<PermissionMode>().map_err(|error| {
            invalid(
                line_of("permissionMode"),
                format!("permissionMode: {error}"),
            )
        })?);
    }
    for (key, list, target) in [
        ("tools", fields.tools, &mut agent.allowed_tools),
        (
            "disallowedTools",
            fields.disallowed_tools,
            &mut agent.disallowed_tools,
        ),
    ] {
        let Some(list) = list else { continue };
        let entries = list
            .entries()
            .iter()
            .map(|entry| whole_tool_rule(entry))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|message| invalid(line_of(key), format!("{key}: {message}")))?;
        *target = Some(
            ToolSelection::parse(entries)
                .map_err(|error| invalid(line_of(key), format!("{key}: {error}")))?,
        );
    }
    if let Some(servers) = fields.mcp_servers {
        let ids = servers.entries();
        let origin = format!("{}:{}", path.display(), line_of("mcpServers"));
        agent.set_server_origins(vec![origin; ids.len()]);
        agent.mcp_servers = Some(ids);
    }
    let body = document.body.trim();
    agent.prompt = (!body.is_empty()).then(|| body.to_owned());
    Ok(agent)
}

/// The line (1-based) of the front-matter key `key`, or 1 when it is not found.
fn key_line(text: &str, key: &str) -> usize {
    text.lines()
        .position(|line| {
            line.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with(':'))
        })
        .map_or(1, |index| index + 1)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_claude_code_agent_file_reads_as_it_is() {
        let agent = agent_from_file(
            Path::new("reviewer.md"),
            "---\nname: reviewer\ndescription: Reviews: diffs\ntools: Read, Grep\n\
             disallowedTools: [Bash]\nmodel: inherit\npermissionMode: plan\nmaxTurns: 7\n\
             color: blue\nskills: [pdf]\n---\nYou review code.\n",
        )
        .unwrap();
        assert_eq!(agent.name, "reviewer");
        assert_eq!(agent.description.as_deref(), Some("Reviews: diffs"));
        assert_eq!(agent.prompt.as_deref(), Some("You review code."));
        assert_eq!(agent.permission_mode, Some(PermissionMode::Plan));
        assert_eq!(agent.max_turns, Some(7));
        assert_eq!(agent.skills, ["pdf"]);
        assert_eq!(agent.allowed_tools.unwrap().rules().len(), 2);
        assert_eq!(agent.disallowed_tools.unwrap().rules().len(), 1);
    }

    #[test]
    fn a_misspelt_key_is_an_error_naming_the_file_and_line() {
        let error = agent_from_file(
            Path::new("a/x.md"),
            "---\nname: x\ndescription: d\npermisionMode: plan\n---\nbody\n",
        )
        .unwrap_err()
        .to_string();
        assert!(error.contains("a/x.md: line 4:"), "{error}");
        assert!(error.contains("unknown field `permisionMode`"), "{error}");
    }

    #[test]
    fn a_bad_mode_names_its_line() {
        let error = agent_from_file(
            Path::new("x.md"),
            "---\nname: x\npermissionMode: yolo\n---\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.contains("x.md: line 3: permissionMode: unknown permission mode 'yolo'"),
            "{error}"
        );
    }
}

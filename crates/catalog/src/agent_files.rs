//! Agent definitions in Markdown files with YAML front matter, as Claude Code writes its
//! sub-agents: `~/.claude/agents/`, `~/.toolhost/agents/`, `.claude/agents/` and
//! `.toolhost/agents/`, each read with its sub-folders, as collections install themselves (a
//! later folder's definition replaces an earlier one of the same name; an `[agents.NAME]`
//! table of the TOML configuration wins over a file). A Markdown file without front matter (a
//! collection's `README.md`) is not an agent.
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
//! The body is the agent's system prompt. Every key Claude Code documents is accepted: `effort`
//! becomes the sub-agent's reasoning effort, `hooks` hooks that run while it runs,
//! `isolation: worktree` a git worktree of its own, inline `mcpServers` servers started for it
//! alone; the ones toolhost has no use for (`color`, `memory`, `initialPrompt`) are read and
//! left unused, and any other key is ignored, with a warning when it looks like a misspelt
//! known key. Claude Code's tool names (`Task`, `LS`,
//! `MultiEdit`, …) are put as toolhost names them ([`toolhost_config::claude_tools`]).
//!
//! One bad file never stops toolhost: a file that does not load is left out with one warning
//! naming the file, the line and what to change, and the other agents load.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toolhost_config::claude_tools::toolhost_entry;
use toolhost_config::{AgentConfig, ConfigError, whole_tool_rule};
use toolhost_core::permission::{PermissionMode, ToolSelection};

use crate::agent_keys::{McpServers, claude_only_fields, mcp_server_entries};
use crate::front_matter::{self, StringOrList};

/// How deep sub-folders of an agents folder are looked into.
const MAX_AGENT_DEPTH: usize = 8;

/// Every front-matter key Claude Code documents for a sub-agent.
const KNOWN_KEYS: &[&str] = &[
    "name",
    "description",
    "tools",
    "disallowedTools",
    "model",
    "permissionMode",
    "maxTurns",
    "mcpServers",
    "skills",
    "background",
    "color",
    "effort",
    "isolation",
    "memory",
    "hooks",
    "initialPrompt",
];

/// The front matter of an agent file (Claude Code's keys).
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct AgentFile {
    name: Option<String>,
    description: Option<String>,
    tools: Option<StringOrList>,
    disallowed_tools: Option<StringOrList>,
    model: Option<String>,
    permission_mode: Option<String>,
    max_turns: Option<usize>,
    mcp_servers: Option<McpServers>,
    skills: Option<StringOrList>,
    background: Option<bool>,
    /// The other keys: Claude Code's that toolhost does not use, and unknown ones.
    #[serde(flatten)]
    other: BTreeMap<String, serde_yaml_ng::Value>,
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

/// The system prompt of `agent`: its `prompt`, or the body of its file read now (start-up
/// read only the file's front matter). `Err` names the file and what went wrong.
pub fn agent_prompt(agent: &AgentConfig) -> Result<Option<String>, String> {
    if agent.prompt.is_some() {
        return Ok(agent.prompt.clone());
    }
    let Some(path) = &agent.body_file else {
        return Ok(None);
    };
    let text = std::fs::read_to_string(path).map_err(|error| {
        format!(
            "cannot read the prompt of the agent '{}' from {}: {error}",
            agent.name,
            path.display()
        )
    })?;
    let document = front_matter::parse::<serde::de::IgnoredAny>(path, &text).map_err(|error| {
        format!(
            "cannot read the prompt of the agent '{}': {error}",
            agent.name
        )
    })?;
    let body = document.body.trim();
    Ok((!body.is_empty()).then(|| body.to_owned()))
}

/// The `.md` files below `folder`, hidden ones and folders left out.
pub(crate) fn markdown_files(folder: &Path, depth: usize, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let path = entry.path();
        match entry_kind(&entry) {
            EntryKind::Folder if depth < MAX_AGENT_DEPTH => {
                markdown_files(&path, depth + 1, files);
            }
            EntryKind::File if path.extension().is_some_and(|ext| ext == "md") => {
                files.push(path);
            }
            _ => {}
        }
    }
}

/// What a folder entry is, a link counting as what it points to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EntryKind {
    Folder,
    File,
    /// A pipe, a socket, a device or a broken link: never opened (reading a pipe would wait
    /// for ever).
    Other,
}

/// What `entry` is: the kind comes with the listing, so only a link costs a look at what it
/// points to.
pub(crate) fn entry_kind(entry: &std::fs::DirEntry) -> EntryKind {
    let (folder, file) = match entry.file_type() {
        Ok(kind) if !kind.is_symlink() => (kind.is_dir(), kind.is_file()),
        _ => match std::fs::metadata(entry.path()) {
            Ok(meta) => (meta.is_dir(), meta.is_file()),
            Err(_) => (false, false),
        },
    };
    if folder {
        EntryKind::Folder
    } else if file {
        EntryKind::File
    } else {
        EntryKind::Other
    }
}

/// The definition in `text`, the content of the agent file `path`, with the warnings about
/// what of it was left out (a misspelt key, a tool that means nothing here). `Err` when the
/// file cannot be an agent: its front matter does not parse, its name or mode is not valid, or
/// a `disallowedTools` entry cannot be read (leaving it out would offer what it forbids).
pub fn agent_from_file(path: &Path, text: &str) -> Result<(AgentConfig, Vec<String>), ConfigError> {
    let invalid = |line: usize, message: String| ConfigError::Invalid {
        path: path.to_owned(),
        line: Some(line),
        message,
    };
    let document = front_matter::parse_with_literal_keys::<AgentFile>(path, text, &["description"])
        .map_err(|error| invalid(error.line, error.message))?;
    let fields = document.fields;
    let line_of = |key: &str| key_line(text, key);
    let at = |key: &str| format!("{}: line {}:", path.display(), line_of(key));
    let mut warnings = Vec::new();
    for key in fields.other.keys() {
        if KNOWN_KEYS.contains(&key.as_str()) {
            continue;
        }
        if let Some(known) = near_miss(key) {
            warnings.push(format!(
                "{} unknown key '{key}' is ignored; did you mean '{known}'?",
                at(key)
            ));
        }
    }
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
        agent.permission_mode = Some(permission_mode(&mode).map_err(|error| {
            invalid(
                line_of("permissionMode"),
                format!("permissionMode: {error}"),
            )
        })?);
    }
    if let Some(list) = fields.tools {
        let entries = tool_entries(&list, |problem| {
            warnings.push(format!(
                "{} tools: {problem}; the agent is offered its other tools",
                at("tools")
            ));
        });
        agent.allowed_tools = Some(
            ToolSelection::parse(entries)
                .map_err(|error| invalid(line_of("tools"), format!("tools: {error}")))?,
        );
    }
    if let Some(list) = fields.disallowed_tools {
        let mut refused = None;
        let entries = tool_entries(&list, |problem| {
            // A tool that is not offered here cannot be called: forbidding it changes nothing.
            if !problem.contains("is not offered") {
                refused.get_or_insert(problem);
            }
        });
        if let Some(problem) = refused {
            return Err(invalid(
                line_of("disallowedTools"),
                format!("disallowedTools: {problem}"),
            ));
        }
        agent.disallowed_tools = Some(ToolSelection::parse(entries).map_err(|error| {
            invalid(
                line_of("disallowedTools"),
                format!("disallowedTools: {error}"),
            )
        })?);
    }
    if let Some(servers) = fields.mcp_servers {
        let origin = format!("{}:{}", path.display(), line_of("mcpServers"));
        let (ids, inline) = mcp_server_entries(servers, &origin, &mut warnings);
        agent.set_server_origins(vec![origin; ids.len()]);
        agent.mcp_servers = Some(ids);
        agent.direct_mcp_servers = inline;
    }
    claude_only_fields(&mut agent, &fields.other, &at, &mut warnings);
    let body = document.body.trim();
    agent.prompt = (!body.is_empty()).then(|| body.to_owned());
    Ok((agent, warnings))
}

/// A mode as Claude Code writes it: toolhost's four, and `dontAsk`, which refuses what is not
/// allowed instead of asking; here it asks (through the parent's approver), which is no less
/// strict.
fn permission_mode(mode: &str) -> Result<PermissionMode, String> {
    match mode.trim() {
        "dontAsk" => Ok(PermissionMode::Default),
        other => other
            .parse::<PermissionMode>()
            .map_err(|error| error.to_string()),
    }
}

/// The entries of a tool list as toolhost names them; `skipped` hears why each entry that
/// means nothing here was left out.
fn tool_entries(list: &StringOrList, mut skipped: impl FnMut(String)) -> Vec<String> {
    let mut entries = Vec::new();
    for entry in list.entries() {
        match toolhost_entry(&entry).and_then(|entry| whole_tool_rule(&entry)) {
            Ok(entry) if !entries.contains(&entry) => entries.push(entry),
            Ok(_) => {}
            Err(problem) => skipped(format!("'{entry}' is left out: {problem}")),
        }
    }
    entries
}

/// The known key `key` is probably a misspelling of (one or two edits away).
fn near_miss(key: &str) -> Option<&'static str> {
    KNOWN_KEYS
        .iter()
        .copied()
        .find(|known| (1..=2).contains(&strsim::levenshtein(key, known)))
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
        let (agent, warnings) = agent_from_file(
            Path::new("reviewer.md"),
            "---\nname: reviewer\ndescription: Reviews: diffs\ntools: Read, Grep\n\
             disallowedTools: [Bash]\nmodel: inherit\npermissionMode: plan\nmaxTurns: 7\n\
             color: blue\nskills: [pdf]\neffort: high\nisolation: worktree\nmemory: project\n\
             initialPrompt: Start\nhooks:\n  PreToolUse: []\n---\nYou review code.\n",
        )
        .unwrap();
        assert_eq!(warnings, Vec::<String>::new());
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
    fn start_up_reads_an_agent_files_head_and_its_prompt_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.md");
        std::fs::write(&path, "---\nname: a\n---\nYou help.\n").unwrap();
        assert_eq!(
            front_matter::read_head(&path).unwrap(),
            "---\nname: a\n---\n"
        );
        let mut agent = AgentConfig::named("a", "a.md:1".into());
        agent.body_file = Some(path);
        assert_eq!(agent_prompt(&agent).unwrap().as_deref(), Some("You help."));
    }

    #[test]
    fn a_misspelt_key_is_ignored_with_a_warning_naming_the_file_and_line() {
        let (agent, warnings) = agent_from_file(
            Path::new("a/x.md"),
            "---\nname: x\ndescription: d\npermisionMode: plan\nfavourite: tea\n---\nbody\n",
        )
        .unwrap();
        assert_eq!(agent.permission_mode, None);
        assert_eq!(
            warnings,
            [
                "a/x.md: line 4: unknown key 'permisionMode' is ignored; did you mean 'permissionMode'?"
            ]
        );
    }

    #[test]
    fn claude_tool_names_are_mapped_and_unknown_entries_left_out() {
        let (agent, warnings) = agent_from_file(
            Path::new("x.md"),
            "---\nname: x\ntools: Task, LS, MultiEdit, TodoWrite, NotebookEdit, catalog:search, Read\n---\n",
        )
        .unwrap();
        let selection = agent.allowed_tools.unwrap();
        let names: Vec<&str> = selection.rules().iter().map(|rule| rule.as_str()).collect();
        assert_eq!(
            names,
            ["spawn_agent", "ListDir", "MultiEdit", "TodoWrite", "Read"]
        );
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(
            warnings[0].contains("'NotebookEdit' is left out"),
            "{warnings:?}"
        );
        assert!(
            warnings[1].contains("'catalog:search' is left out"),
            "{warnings:?}"
        );
    }

    #[test]
    fn a_bad_mode_names_its_line_and_dont_ask_asks() {
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
        let (agent, _) = agent_from_file(
            Path::new("x.md"),
            "---\nname: x\npermissionMode: dontAsk\n---\n",
        )
        .unwrap();
        assert_eq!(agent.permission_mode, Some(PermissionMode::Default));
    }
}

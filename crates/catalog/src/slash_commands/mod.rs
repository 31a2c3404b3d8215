//! Slash commands (R28, R16): Markdown prompt templates, as Claude Code writes them, found in
//! `.toolhost/commands/`, `.claude/commands/`, `~/.toolhost/commands/` and
//! `~/.claude/commands/` (first wins, so the project's win over the user's). A file's path
//! below its folder names it: `frontend/component.md` is `/frontend:component`.
//!
//! Front matter: `description`, `argument-hint`, `allowed-tools`, `model` (and Claude Code's
//! `disable-model-invocation`, which keeps the command from the `slash_command` tool); the
//! body is the prompt, expanded by [`expand`] (the rules are in the README and in
//! [`expand::parse_template`]).
//!
//! Two ways in: the model calls the `slash_command` tool (`toolhost_agent`'s
//! `SlashCommandTool`); a front end
//! (`toolhost chat`) hands a line starting with `/` to [`SlashCommands::run_line`], which
//! returns a [`CommandTurn`]: the prompt to send, the tools that turn is offered
//! ([`CommandTurn::tools`], a filtered view of the registry) and the model to use.

mod expand;

use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};

use serde::Deserialize;
use toolhost_core::permission::ToolSelection;
use toolhost_core::{CallOptions, ToolRegistry};

use toolhost_config::Config;
use toolhost_config::claude_tools::toolhost_entry;

use crate::agent_files::{EntryKind, entry_kind};
use crate::front_matter::{self, FrontMatterError, StringOrList};

pub use expand::{ExpandError, Expansion, Piece, expand, parse_template, split_arguments};

/// How deep sub-folders of a commands folder are looked into.
const MAX_COMMAND_DEPTH: usize = 8;

/// What a command file's front matter may say; other keys are ignored.
#[derive(Debug, Default, Deserialize)]
struct CommandFields {
    description: Option<String>,
    #[serde(rename = "argument-hint")]
    argument_hint: Option<String>,
    #[serde(rename = "allowed-tools")]
    allowed_tools: Option<StringOrList>,
    model: Option<String>,
    #[serde(rename = "disable-model-invocation", default)]
    disable_model_invocation: bool,
}

/// One slash command.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SlashCommand {
    /// Its name without the `/`: `review`, `frontend:component`.
    pub name: String,
    /// `description`, or the body's first line.
    pub description: String,
    /// `argument-hint` (`[pr-number] [priority]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub argument_hint: Option<String>,
    /// `allowed-tools`, as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed_tools: Option<Vec<String>>,
    /// `model`: the model for the command's turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Whether only a user may run it (not the `slash_command` tool).
    pub user_only: bool,
    /// The file.
    pub path: PathBuf,
    /// The prompt template.
    #[serde(skip)]
    pub body: String,
}

/// Why a command could not be run.
#[derive(Debug, thiserror::Error)]
pub enum SlashCommandError {
    /// No command has that name.
    #[error("there is no slash command '/{name}'{}", if known.is_empty() { String::new() } else { format!("; the commands are: {}", known.iter().map(|n| format!("/{n}")).collect::<Vec<_>>().join(", ")) })]
    Unknown {
        /// The name asked for.
        name: String,
        /// The names there are.
        known: Vec<String>,
    },
    /// The command says only a user may run it.
    #[error("the slash command '/{0}' sets disable-model-invocation: only the user can run it")]
    UserOnly(String),
    /// `allowed-tools` holds an entry that is not a tool rule.
    #[error("{}: allowed-tools: {message}", path.display())]
    AllowedTools {
        /// The command's file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// Expanding the body failed (a bad quote, a refused `@file` or `` !`command` ``).
    #[error("/{name}: {source}")]
    Expand {
        /// The command.
        name: String,
        /// Why.
        source: ExpandError,
    },
}

/// What a front end sends for a `/name args` line.
#[derive(Debug, Clone)]
pub struct CommandTurn {
    /// The command run.
    pub command: String,
    /// The prompt to send, fully expanded.
    pub prompt: String,
    /// `allowed-tools`: the only tools the turn is offered; `None`: the usual ones.
    pub allowed_tools: Option<ToolSelection>,
    /// `model`: the model for the turn; `None`: the session's.
    pub model: Option<String>,
    /// What the expansion read and ran.
    pub expansion: Expansion,
}

impl CommandTurn {
    /// The tools the turn is offered: a filtered view of `registry` (R16) sharing its
    /// pipeline, or all of it when the command sets no `allowed-tools`. Entries with a
    /// specifier (`Bash(git add:*)`) keep their tool; the permission rules judge its calls.
    pub fn tools(&self, registry: &ToolRegistry) -> ToolRegistry {
        match &self.allowed_tools {
            Some(selection) => selection.apply(registry),
            None => registry.filter(|_| true),
        }
    }
}

/// The commands found, and what was skipped. The files are read the first time a command is
/// asked for, not when the commands are found: a user with hundreds of commands does not pay
/// for them in a process that never looks at one (`toolhost call`, `serve`'s `initialize`).
#[derive(Clone)]
pub struct SlashCommands {
    found: Arc<LazyLock<Found, FindCommands>>,
}

type FindCommands = Box<dyn FnOnce() -> Found + Send>;

/// What reading the command files gave.
#[derive(Debug, Default)]
struct Found {
    commands: Vec<SlashCommand>,
    warnings: Vec<FrontMatterError>,
}

impl Default for SlashCommands {
    fn default() -> Self {
        Self::lazily(Found::default)
    }
}

impl std::fmt::Debug for SlashCommands {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match LazyLock::get(&self.found) {
            Some(found) => found.fmt(f),
            None => f.write_str("SlashCommands(not read yet)"),
        }
    }
}

/// The folders commands are looked for in, in precedence order.
pub fn command_folders(workspace: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let mut folders = vec![
        workspace.join(".toolhost").join("commands"),
        workspace.join(".claude").join("commands"),
    ];
    if let Some(home) = home {
        folders.push(home.join(".toolhost").join("commands"));
        folders.push(home.join(".claude").join("commands"));
    }
    folders
}

impl SlashCommands {
    /// The commands of `workspace` and `home`, then those of every plugin `config` loaded
    /// (`/PLUGIN:command`).
    pub fn for_config(workspace: &Path, home: Option<&Path>, config: &Config) -> Self {
        let folders = command_folders(workspace, home);
        let plugins: Vec<(String, Vec<PathBuf>)> = config
            .plugins
            .loaded
            .iter()
            .map(|plugin| (plugin.name.clone(), plugin.command_paths.clone()))
            .collect();
        Self::lazily(move || {
            let mut found = Found::discover(&folders);
            for (plugin, paths) in &plugins {
                found.add_plugin(plugin, paths);
            }
            found
        })
    }

    /// The commands in `folders` (see [`command_folders`]); of two with one name the first
    /// wins.
    pub fn discover(folders: &[PathBuf]) -> Self {
        let folders = folders.to_vec();
        Self::lazily(move || Found::discover(&folders))
    }

    /// Commands that `find` reads when they are first asked for; what it skips is logged
    /// then.
    fn lazily(find: impl FnOnce() -> Found + Send + 'static) -> Self {
        let find: FindCommands = Box::new(move || {
            let found = find();
            for warning in &found.warnings {
                tracing::warn!("slash command skipped: {warning}");
            }
            found
        });
        Self {
            found: Arc::new(LazyLock::new(find)),
        }
    }

    /// The commands of `workspace` and `home`.
    pub fn for_workspace(workspace: &Path, home: Option<&Path>) -> Self {
        Self::discover(&command_folders(workspace, home))
    }

    /// Starts reading the command files on a thread of their own, so that whoever asks for
    /// a command next waits less (or not at all).
    pub fn prefetch(&self) {
        toolhost_config::prefetch::prefetch(&self.found, "command-files");
    }

    /// The commands, in precedence order.
    pub fn commands(&self) -> &[SlashCommand] {
        &self.found.commands
    }

    /// The command `name` (without the `/`).
    pub fn get(&self, name: &str) -> Option<&SlashCommand> {
        self.found.get(name)
    }

    /// The files skipped for bad front matter.
    pub fn warnings(&self) -> &[FrontMatterError] {
        &self.found.warnings
    }

    /// Runs `line` when it is a command (`/name args…`): `None` when it does not start with
    /// `/`. The `@file`s are read with Read and the `` !`command` ``s run with Bash, both
    /// through `registry`'s pipeline and permissions.
    pub async fn run_line(
        &self,
        line: &str,
        registry: &ToolRegistry,
        options: CallOptions,
    ) -> Option<Result<CommandTurn, SlashCommandError>> {
        let rest = line.trim_start().strip_prefix('/')?;
        let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        Some(self.run(name, args, registry, options, true).await)
    }

    /// Expands the command `name` with the raw argument string `args`; `by_user` is false for
    /// the model's `slash_command` calls, which `disable-model-invocation` refuses.
    pub async fn run(
        &self,
        name: &str,
        args: &str,
        registry: &ToolRegistry,
        options: CallOptions,
        by_user: bool,
    ) -> Result<CommandTurn, SlashCommandError> {
        let name = name.trim().trim_start_matches('/');
        let Some(command) = self.get(name) else {
            return Err(SlashCommandError::Unknown {
                name: name.to_owned(),
                known: self.commands().iter().map(|c| c.name.clone()).collect(),
            });
        };
        if command.user_only && !by_user {
            return Err(SlashCommandError::UserOnly(command.name.clone()));
        }
        let allowed_tools = command
            .allowed_tools
            .as_ref()
            .map(ToolSelection::parse)
            .transpose()
            .map_err(|error| SlashCommandError::AllowedTools {
                path: command.path.clone(),
                message: error.to_string(),
            })?;
        let expansion = expand::expand(&command.body, args, registry, options)
            .await
            .map_err(|source| SlashCommandError::Expand {
                name: command.name.clone(),
                source,
            })?;
        Ok(CommandTurn {
            command: command.name.clone(),
            prompt: expansion.prompt.clone(),
            allowed_tools,
            model: command.model.clone(),
            expansion,
        })
    }
}

impl Found {
    /// The commands in `folders`; of two with one name the first wins.
    fn discover(folders: &[PathBuf]) -> Self {
        let mut found = Self::default();
        for folder in folders {
            let mut files = Vec::new();
            markdown_files(folder, &mut Vec::new(), 0, &mut files);
            files.sort();
            for (name, path) in files {
                if found.get(&name).is_some() {
                    tracing::warn!(
                        "slash command /{name} in {} is shadowed by an earlier one",
                        path.display()
                    );
                    continue;
                }
                found.load(name, &path);
            }
        }
        found
    }

    /// The commands in a plugin's `paths` (folders, or single files), named
    /// `PLUGIN:command`; a name already taken keeps its command.
    fn add_plugin(&mut self, plugin: &str, paths: &[PathBuf]) {
        let mut files = Vec::new();
        for path in paths {
            if path.is_file() {
                let stem = path
                    .file_stem()
                    .map(|stem| stem.to_string_lossy().into_owned());
                files.push((
                    format!("{plugin}:{}", stem.unwrap_or_default()),
                    path.clone(),
                ));
            } else {
                markdown_files(path, &mut vec![plugin.to_owned()], 0, &mut files);
            }
        }
        files.sort();
        files.dedup();
        for (name, path) in files {
            if self.get(&name).is_none() {
                self.load(name, &path);
            }
        }
    }

    fn load(&mut self, name: String, path: &Path) {
        match load_command(name, path) {
            Ok(command) => self.commands.push(command),
            Err(warning) => self.warnings.push(warning),
        }
    }

    fn get(&self, name: &str) -> Option<&SlashCommand> {
        self.commands.iter().find(|command| command.name == name)
    }
}

/// The `.md` files under `folder`, each with its command name (sub-folders joined by `:`).
fn markdown_files(
    folder: &Path,
    prefix: &mut Vec<String>,
    depth: usize,
    files: &mut Vec<(String, PathBuf)>,
) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let path = entry.path();
        match entry_kind(&entry) {
            EntryKind::Folder if depth < MAX_COMMAND_DEPTH => {
                prefix.push(name);
                markdown_files(&path, prefix, depth + 1, files);
                prefix.pop();
            }
            EntryKind::File => {
                if let Some(stem) = name.strip_suffix(".md")
                    && !stem.is_empty()
                {
                    let mut parts = prefix.clone();
                    parts.push(stem.to_owned());
                    files.push((parts.join(":"), path));
                }
            }
            _ => {}
        }
    }
}

fn load_command(name: String, path: &Path) -> Result<SlashCommand, FrontMatterError> {
    let text = std::fs::read_to_string(path).map_err(|error| FrontMatterError {
        path: path.to_owned(),
        line: 1,
        message: format!("cannot read it: {error}"),
    })?;
    let document = front_matter::parse_with_literal_keys::<CommandFields>(
        path,
        &text,
        &["description", "argument-hint"],
    )?;
    let fields = document.fields;
    let description = fields
        .description
        .map(|text| text.trim().to_owned())
        .filter(|text| !text.is_empty())
        .unwrap_or_else(|| {
            document
                .body
                .lines()
                .map(str::trim)
                .find(|line| !line.is_empty())
                .unwrap_or("")
                .chars()
                .take(100)
                .collect()
        });
    Ok(SlashCommand {
        name,
        description,
        argument_hint: fields.argument_hint,
        allowed_tools: fields
            .allowed_tools
            .as_ref()
            .map(|list| toolhost_tool_entries(path, list)),
        model: fields.model,
        user_only: fields.disable_model_invocation,
        path: path.to_owned(),
        body: document.body,
    })
}

/// The entries of `allowed-tools` with Claude Code's tool names put as toolhost names them
/// (`Skill` is `read_skill`); an entry naming a tool toolhost does not offer is left out with
/// a warning, which only narrows what the turn is offered.
fn toolhost_tool_entries(path: &Path, list: &StringOrList) -> Vec<String> {
    list.entries()
        .iter()
        .filter_map(|entry| match toolhost_entry(entry) {
            Ok(entry) => Some(entry),
            Err(problem) => {
                tracing::warn!("{}: allowed-tools: {problem}; left out", path.display());
                None
            }
        })
        .collect()
}

/// The commands shared by a tool set (found once per session).
pub type SharedSlashCommands = Arc<SlashCommands>;

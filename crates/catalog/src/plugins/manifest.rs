//! One plugin folder as Claude Code lays it out: `.claude-plugin/plugin.json` (its `name`, and
//! optionally more places for its parts), `commands/`, `agents/`, `skills/`,
//! `hooks/hooks.json` and `.mcp.json`. Paths the manifest gives add to the default folders;
//! `hooks` and `mcpServers` may also be written inline in the manifest.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

/// Where a plugin's manifest is, below its folder.
pub const PLUGIN_MANIFEST: &str = ".claude-plugin/plugin.json";

/// The manifest's keys that toolhost reads; the others (`author`, `keywords`, …) are
/// Claude Code's or the marketplace's own.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct PluginJson {
    name: Option<String>,
    version: Option<String>,
    description: Option<String>,
    commands: Option<Value>,
    agents: Option<Value>,
    skills: Option<Value>,
    hooks: Option<Value>,
    mcp_servers: Option<Value>,
}

/// A file of JSON a plugin holds, with its text for line numbers.
#[derive(Debug, Clone)]
pub struct JsonPart {
    /// The file (the manifest itself for what is written inline there).
    pub path: PathBuf,
    /// Its text.
    pub text: String,
    /// The part: a `hooks` object, or the text's `.mcp.json` servers.
    pub value: Value,
}

/// A plugin folder that was read.
#[derive(Debug, Clone)]
pub struct Plugin {
    /// `name`.
    pub name: String,
    /// `version`.
    pub version: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// The folder, as found (symbolic links resolved).
    pub root: PathBuf,
    /// Folders and files of slash commands.
    pub command_paths: Vec<PathBuf>,
    /// Folders and files of agents.
    pub agent_paths: Vec<PathBuf>,
    /// Folders of skills.
    pub skill_folders: Vec<PathBuf>,
    /// Its `hooks` objects.
    pub hooks: Vec<JsonPart>,
    /// Its `.mcp.json`-shaped server files.
    pub mcp: Vec<JsonPart>,
}

impl Plugin {
    /// Reads the plugin in `root`; `Err` says what to change (a manifest that is missing, is
    /// not JSON or has no usable name, a hooks or servers file that does not parse).
    pub fn load(root: &Path) -> Result<Self, String> {
        let root = std::fs::canonicalize(root)
            .map_err(|error| format!("{}: cannot open the folder: {error}", root.display()))?;
        let manifest_path = root.join(PLUGIN_MANIFEST);
        let text = std::fs::read_to_string(&manifest_path).map_err(|error| {
            format!(
                "{}: cannot read it ({error}): a plugin folder holds {PLUGIN_MANIFEST}",
                manifest_path.display()
            )
        })?;
        let manifest: PluginJson = serde_json::from_str(&text).map_err(|error| {
            format!(
                "{}: line {}: {error}",
                manifest_path.display(),
                error.line()
            )
        })?;
        let name = manifest.name.as_deref().map(str::trim).unwrap_or_default();
        if name.is_empty() || name.contains(|c: char| c.is_whitespace() || "/:\\".contains(c)) {
            return Err(format!(
                "{}: the plugin's \"name\" '{name}' is missing or holds a space, ':' or '/': \
                 write one word in kebab-case, such as \"code-review\"",
                manifest_path.display()
            ));
        }
        let mut plugin = Self {
            name: name.to_owned(),
            version: manifest.version,
            description: manifest.description,
            command_paths: paths(&root, "commands", manifest.commands.as_ref()),
            agent_paths: paths(&root, "agents", manifest.agents.as_ref()),
            skill_folders: paths(&root, "skills", manifest.skills.as_ref()),
            hooks: Vec::new(),
            mcp: Vec::new(),
            root,
        };
        plugin.hooks = plugin.json_parts(
            "hooks/hooks.json",
            manifest.hooks,
            &manifest_path,
            &text,
            |value| value.get("hooks").cloned().unwrap_or(value),
        )?;
        plugin.mcp = plugin.json_parts(
            ".mcp.json",
            manifest.mcp_servers,
            &manifest_path,
            &text,
            |value| value,
        )?;
        Ok(plugin)
    }

    /// The default file `default` (when it exists) and what the manifest's `field` adds: file
    /// paths (one or a list) or an inline object. `part` takes the part out of a file's JSON
    /// (`hooks.json`'s `hooks`).
    fn json_parts(
        &self,
        default: &str,
        field: Option<Value>,
        manifest_path: &Path,
        manifest_text: &str,
        part: impl Fn(Value) -> Value,
    ) -> Result<Vec<JsonPart>, String> {
        let mut files = vec![self.root.join(default)];
        let mut parts = Vec::new();
        match field {
            Some(inline @ Value::Object(_)) => parts.push(JsonPart {
                path: manifest_path.to_owned(),
                text: manifest_text.to_owned(),
                value: part(inline),
            }),
            Some(other) => files.extend(path_list(&self.root, &other)),
            None => {}
        }
        files.dedup();
        for (index, path) in files.into_iter().enumerate() {
            let text = match std::fs::read_to_string(&path) {
                Ok(text) => text,
                // The default file is optional; a file the manifest names is not.
                Err(error) if index == 0 && error.kind() == std::io::ErrorKind::NotFound => {
                    continue;
                }
                Err(error) => return Err(format!("{}: cannot read it: {error}", path.display())),
            };
            let value: Value = serde_json::from_str(&text)
                .map_err(|error| format!("{}: line {}: {error}", path.display(), error.line()))?;
            parts.push(JsonPart {
                path,
                text,
                value: part(value),
            });
        }
        Ok(parts)
    }
}

/// `root/default` and the paths `field` names (one string or a list), relative to `root`.
fn paths(root: &Path, default: &str, field: Option<&Value>) -> Vec<PathBuf> {
    let mut paths = vec![root.join(default)];
    if let Some(field) = field {
        for path in path_list(root, field) {
            if !paths.contains(&path) {
                paths.push(path);
            }
        }
    }
    paths
}

fn path_list(root: &Path, field: &Value) -> Vec<PathBuf> {
    let strings: Vec<&str> = match field {
        Value::String(one) => vec![one.as_str()],
        Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    strings
        .into_iter()
        .map(|path| root.join(path.trim_start_matches("./")))
        .collect()
}

//! Where plugins are: the folders `[plugins] paths` names, toolhost's install records
//! (`~/.toolhost/plugins/installed.json`, written by `toolhost plugins install`) and Claude
//! Code's (`~/.claude/plugins/installed_plugins.json`, both its version 1 and 2 shapes; a
//! plugin that Claude Code's `enabledPlugins` turns off, or that was installed for another
//! project, is left out). Also the marketplaces each knows (`known_marketplaces.json`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolhost_config::Config;
use toolhost_config::claude_settings::claude_settings_paths;

/// toolhost's own plugin folder under `~`: installs, marketplaces, approvals.
pub fn toolhost_plugins_folder(home: &Path) -> PathBuf {
    home.join(".toolhost").join("plugins")
}

/// Claude Code's plugin folder under `~`.
pub fn claude_plugins_folder(home: &Path) -> PathBuf {
    home.join(".claude").join("plugins")
}

/// The file of toolhost's install records.
pub fn installed_file(home: &Path) -> PathBuf {
    toolhost_plugins_folder(home).join("installed.json")
}

/// The file of the marketplaces toolhost knows.
pub fn marketplaces_file(home: &Path) -> PathBuf {
    toolhost_plugins_folder(home).join("known_marketplaces.json")
}

/// A plugin folder to read, and how it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginPlace {
    /// The folder.
    pub root: PathBuf,
    /// `config`, `toolhost` or `claude`.
    pub source: &'static str,
    /// The record that named it (`file:line`, or the records file), for messages.
    pub named_in: String,
}

/// One of toolhost's install records.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct InstallRecord {
    /// The installed copy.
    pub install_path: PathBuf,
    /// What it was installed from (a folder, a git URL, `NAME@MARKETPLACE`).
    pub source: String,
    /// Its version then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// When (seconds since the epoch).
    #[serde(default)]
    pub installed_at: u64,
}

/// toolhost's install records, by plugin name.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct InstallRecords {
    /// The shape's version (1).
    #[serde(default)]
    pub version: u32,
    /// By name.
    #[serde(default)]
    pub plugins: BTreeMap<String, InstallRecord>,
}

impl InstallRecords {
    /// The records in `home`; none when the file is missing. `Err` names a file that is not
    /// readable or not JSON.
    pub fn read(home: &Path) -> Result<Self, String> {
        read_json(&installed_file(home)).map(Option::unwrap_or_default)
    }

    /// Writes them back.
    pub fn write(&self, home: &Path) -> Result<(), String> {
        write_json(
            &installed_file(home),
            &Self {
                version: 1,
                ..self.clone()
            },
        )
    }
}

/// A marketplace toolhost knows: its copy, and what it was added from.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct KnownMarketplace {
    /// What it was added from (a folder or a git URL), in Claude Code's shape.
    pub source: Value,
    /// Where its files are.
    pub install_location: PathBuf,
}

/// Marketplaces by name: toolhost's `known_marketplaces.json` and then Claude Code's, which has
/// the same shape (toolhost's entry wins for one name).
pub fn known_marketplaces(home: &Path) -> (BTreeMap<String, KnownMarketplace>, Vec<String>) {
    let mut known = BTreeMap::new();
    let mut warnings = Vec::new();
    for path in [
        claude_plugins_folder(home).join("known_marketplaces.json"),
        marketplaces_file(home),
    ] {
        match read_json::<BTreeMap<String, KnownMarketplace>>(&path) {
            Ok(Some(found)) => known.extend(found),
            Ok(None) => {}
            Err(warning) => warnings.push(format!("{warning}; its marketplaces are left out")),
        }
    }
    (known, warnings)
}

/// Writes toolhost's own marketplaces.
pub fn write_marketplaces(
    home: &Path,
    marketplaces: &BTreeMap<String, KnownMarketplace>,
) -> Result<(), String> {
    write_json(&marketplaces_file(home), marketplaces)
}

/// toolhost's own marketplaces only.
pub fn toolhost_marketplaces(home: &Path) -> Result<BTreeMap<String, KnownMarketplace>, String> {
    read_json(&marketplaces_file(home)).map(Option::unwrap_or_default)
}

/// Every plugin folder to read, in precedence order (the configuration's, toolhost's
/// installs, Claude Code's installs), and a warning for each record that cannot be used.
pub fn plugin_places(
    config: &Config,
    workspace: &Path,
    home: Option<&Path>,
) -> (Vec<PluginPlace>, Vec<String>) {
    let mut places: Vec<PluginPlace> = config
        .plugins
        .paths
        .iter()
        .map(|entry| PluginPlace {
            root: entry.path.clone(),
            source: "config",
            named_in: entry.origin.clone(),
        })
        .collect();
    let mut warnings = Vec::new();
    let Some(home) = home else {
        return (places, warnings);
    };
    match InstallRecords::read(home) {
        Ok(records) => places.extend(records.plugins.into_values().map(|record| PluginPlace {
            root: record.install_path,
            source: "toolhost",
            named_in: installed_file(home).display().to_string(),
        })),
        Err(warning) => warnings.push(format!("{warning}; its plugins are left out")),
    }
    let claude_records = claude_plugins_folder(home).join("installed_plugins.json");
    match read_json::<ClaudeInstalled>(&claude_records) {
        Ok(Some(installed)) => {
            let disabled = disabled_plugins(workspace, home);
            for (id, entries) in installed.plugins {
                if disabled.contains(&id) {
                    continue;
                }
                let entries = match entries {
                    ClaudeEntries::Many(many) => many,
                    ClaudeEntries::One(one) => vec![one],
                };
                let Some(entry) = entries
                    .into_iter()
                    .find(|entry| entry.applies_to(workspace))
                else {
                    continue;
                };
                match entry.install_path {
                    Some(root) => places.push(PluginPlace {
                        root,
                        source: "claude",
                        named_in: format!("{} ({id})", claude_records.display()),
                    }),
                    None => warnings.push(format!(
                        "{}: the plugin '{id}' has no installPath; it is left out",
                        claude_records.display()
                    )),
                }
            }
        }
        Ok(None) => {}
        Err(warning) => warnings.push(format!("{warning}; Claude Code's plugins are left out")),
    }
    (places, warnings)
}

/// `installed_plugins.json`: `{"version": 2, "plugins": {"NAME@MARKETPLACE": [{"scope":
/// "user", "installPath": …}]}}` (version 1 has one object per plugin instead of a list).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ClaudeInstalled {
    plugins: BTreeMap<String, ClaudeEntries>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum ClaudeEntries {
    Many(Vec<ClaudeEntry>),
    One(ClaudeEntry),
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct ClaudeEntry {
    scope: Option<String>,
    install_path: Option<PathBuf>,
    project_path: Option<PathBuf>,
}

impl ClaudeEntry {
    /// A user install applies everywhere; a project or local one only in its project.
    fn applies_to(&self, workspace: &Path) -> bool {
        match (self.scope.as_deref(), &self.project_path) {
            (Some("project" | "local"), Some(project)) => same_folder(project, workspace),
            _ => true,
        }
    }
}

fn same_folder(a: &Path, b: &Path) -> bool {
    let canonical = |path: &Path| std::fs::canonicalize(path).unwrap_or_else(|_| path.into());
    canonical(a) == canonical(b)
}

/// The plugins Claude Code's settings turn off (`"enabledPlugins": {"ID": false}`), the last
/// settings file that names one deciding.
fn disabled_plugins(workspace: &Path, home: &Path) -> Vec<String> {
    let mut enabled: BTreeMap<String, bool> = BTreeMap::new();
    for path in claude_settings_paths(workspace, Some(home)) {
        #[derive(Deserialize, Default)]
        #[serde(default, rename_all = "camelCase")]
        struct Settings {
            enabled_plugins: BTreeMap<String, Value>,
        }
        // A settings file that is not JSON is reported where the settings are read.
        if let Ok(Some(settings)) = read_json::<Settings>(&path) {
            for (id, value) in settings.enabled_plugins {
                enabled.insert(id, value.as_bool().unwrap_or(true));
            }
        }
    }
    enabled
        .into_iter()
        .filter(|(_, on)| !on)
        .map(|(id, _)| id)
        .collect()
}

/// The JSON in `path`; `None` when it does not exist.
pub(crate) fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<T>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(format!("{}: cannot read it: {error}", path.display())),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|error| format!("{}: line {}: {error}", path.display(), error.line()))
}

/// Writes `value` as JSON to `path` whole: a new file renamed over the old one.
pub(crate) fn write_json<T: Serialize + ?Sized>(path: &Path, value: &T) -> Result<(), String> {
    let folder = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(folder)
        .map_err(|error| format!("cannot create {}: {error}", folder.display()))?;
    let text = serde_json::to_string_pretty(value).map_err(|error| error.to_string())?;
    let partial = path.with_extension("json.partial");
    std::fs::write(&partial, format!("{text}\n"))
        .and_then(|()| std::fs::rename(&partial, path))
        .map_err(|error| format!("cannot write {}: {error}", path.display()))
}

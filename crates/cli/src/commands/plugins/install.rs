//! Installing and removing plugins, and the marketplaces they are installed from. An install
//! is built in a hidden staging folder and renamed into place, so a failed one leaves nothing
//! half written.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use serde::Deserialize;
use serde_json::{Value, json};
use toolhost_catalog::plugins::records::{
    InstallRecord, InstallRecords, KnownMarketplace, known_marketplaces, toolhost_marketplaces,
    toolhost_plugins_folder, write_marketplaces,
};
use toolhost_catalog::plugins::{Approvals, PLUGIN_MANIFEST, Plugin, load_plugins};
use toolhost_config::Config;
use toolhost_config::plugins::{LoadedPlugin, PluginPath};

use super::MarketplaceCommand;
use super::fetch::{fetch, git_clone, is_git_url};

/// Where a marketplace lists its plugins.
const MARKETPLACE_MANIFEST: &str = ".claude-plugin/marketplace.json";

/// `marketplace.json`: its name and plugins (the other keys are the marketplace's own).
#[derive(Debug, Deserialize)]
struct Marketplace {
    name: String,
    #[serde(default)]
    metadata: MarketplaceMetadata,
    #[serde(default)]
    plugins: Vec<MarketplaceEntry>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct MarketplaceMetadata {
    plugin_root: Option<String>,
}

/// One plugin of a marketplace: where it is (`source`), and (for an entry that is its own
/// manifest, `"strict": false`) the manifest's keys.
#[derive(Debug, Deserialize)]
struct MarketplaceEntry {
    name: String,
    source: Value,
    #[serde(flatten)]
    manifest: serde_json::Map<String, Value>,
}

/// A staging folder beside the final ones, removed when dropped.
struct Staging(PathBuf);

impl Staging {
    fn new(parent: &Path) -> anyhow::Result<Self> {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
        let path = parent.join(format!(".staging-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        Ok(Self(path))
    }

    /// Moves the staged folder to `to`, replacing what is there.
    fn finish(self, to: &Path) -> anyhow::Result<()> {
        if to.exists() {
            std::fs::remove_dir_all(to)
                .with_context(|| format!("cannot replace {}", to.display()))?;
        }
        std::fs::rename(&self.0, to).with_context(|| format!("cannot create {}", to.display()))
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Installs the plugin `source` names into `~/.toolhost/plugins/cache/NAME` and records it.
pub(super) fn install(home: &Path, source: &str) -> anyhow::Result<Plugin> {
    let cache = toolhost_plugins_folder(home).join("cache");
    let staging = Staging::new(&cache)?;
    match marketplace_ref(source) {
        Some((name, marketplace)) => from_marketplace(home, name, marketplace, &staging.0)?,
        None => fetch(source, &staging.0)?,
    }
    let plugin = Plugin::load(&staging.0).map_err(|problem| {
        if staging.0.join(MARKETPLACE_MANIFEST).is_file() {
            anyhow::anyhow!(
                "'{source}' is a marketplace, not a plugin: add it with `toolhost plugins \
                 marketplace add {source}`, then install NAME@MARKETPLACE"
            )
        } else {
            anyhow::anyhow!("{problem}")
        }
    })?;
    let folder = cache.join(&plugin.name);
    staging.finish(&folder)?;
    let mut records = InstallRecords::read(home).map_err(anyhow::Error::msg)?;
    records.plugins.insert(
        plugin.name.clone(),
        InstallRecord {
            install_path: folder.clone(),
            source: source.to_owned(),
            version: plugin.version.clone(),
            installed_at: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |since| since.as_secs()),
        },
    );
    records.write(home).map_err(anyhow::Error::msg)?;
    Plugin::load(&folder).map_err(anyhow::Error::msg)
}

/// The plugin as every command will load it (what it runs, as they will see it).
pub(super) fn loaded_now(home: &Path, plugin: &Plugin) -> anyhow::Result<LoadedPlugin> {
    let mut config = Config::default();
    config.plugins.paths.push(PluginPath {
        path: plugin.root.clone(),
        origin: "toolhost plugins install".to_owned(),
    });
    load_plugins(&mut config, home, None);
    config
        .plugins
        .loaded
        .pop()
        .with_context(|| format!("{} did not load: {:?}", plugin.name, config.warnings()))
}

/// `NAME@MARKETPLACE`, when `source` is one (not a path, not a URL).
fn marketplace_ref(source: &str) -> Option<(&str, &str)> {
    if is_git_url(source) || source.contains('/') || Path::new(source).exists() {
        return None;
    }
    source
        .split_once('@')
        .filter(|(name, market)| !name.is_empty() && !market.is_empty())
}

/// The plugin `name` of the known marketplace `market`, into `to`.
fn from_marketplace(home: &Path, name: &str, market: &str, to: &Path) -> anyhow::Result<()> {
    let (known, warnings) = known_marketplaces(home);
    for warning in warnings {
        tracing::warn!("{warning}");
    }
    let Some(known) = known.get(market) else {
        bail!(
            "no marketplace named '{market}' is known: add it with `toolhost plugins \
             marketplace add FOLDER-OR-GIT-URL`"
        );
    };
    let location = &known.install_location;
    let manifest = read_marketplace(location)?;
    let Some(entry) = manifest
        .plugins
        .into_iter()
        .find(|entry| entry.name == name)
    else {
        bail!(
            "the marketplace '{market}' ({}) has no plugin '{name}'",
            location.display()
        );
    };
    match &entry.source {
        Value::String(path) => {
            let relative = path.trim_start_matches("./");
            let base = match (&manifest.metadata.plugin_root, path.starts_with('.')) {
                (Some(root), false) => location.join(root.trim_start_matches("./")),
                _ => location.clone(),
            };
            fetch(&base.join(relative).to_string_lossy(), to)?;
        }
        Value::Object(source) => {
            let url = match (source.get("source").and_then(Value::as_str), source) {
                (Some("github"), source) => source
                    .get("repo")
                    .and_then(Value::as_str)
                    .map(|repo| format!("https://github.com/{repo}.git")),
                (Some("url" | "git"), source) => {
                    source.get("url").and_then(Value::as_str).map(str::to_owned)
                }
                _ => None,
            };
            let Some(url) = url else {
                bail!(
                    "the marketplace '{market}' gives '{name}' a source toolhost cannot fetch \
                     ({}): it fetches folders, github repositories and git URLs",
                    Value::Object(source.clone())
                );
            };
            git_clone(&url, to)?;
        }
        other => bail!("the marketplace '{market}' gives '{name}' the source {other}"),
    }
    // An entry with `"strict": false` is the plugin's manifest when its folder has none.
    let manifest_path = to.join(PLUGIN_MANIFEST);
    if !manifest_path.is_file() {
        let mut fields = entry.manifest;
        fields.remove("strict");
        fields.insert("name".to_owned(), json!(name));
        std::fs::create_dir_all(to.join(".claude-plugin"))?;
        std::fs::write(&manifest_path, serde_json::to_string_pretty(&fields)?)?;
    }
    Ok(())
}

fn read_marketplace(folder: &Path) -> anyhow::Result<Marketplace> {
    let path = folder.join(MARKETPLACE_MANIFEST);
    let text = std::fs::read_to_string(&path).with_context(|| {
        format!(
            "cannot read {}: a marketplace holds {MARKETPLACE_MANIFEST}",
            path.display()
        )
    })?;
    serde_json::from_str(&text)
        .map_err(|error| anyhow::anyhow!("{}: line {}: {error}", path.display(), error.line()))
}

/// Removes a plugin toolhost installed; says where a plugin found otherwise is to be removed.
pub(super) fn remove(home: &Path, config: &Config, name: &str) -> anyhow::Result<PathBuf> {
    let mut records = InstallRecords::read(home).map_err(anyhow::Error::msg)?;
    if let Some(record) = records.plugins.remove(name) {
        let folder = record.install_path;
        let root = std::fs::canonicalize(&folder).unwrap_or_else(|_| folder.clone());
        if folder.starts_with(toolhost_plugins_folder(home).join("cache")) && folder.exists() {
            std::fs::remove_dir_all(&folder)
                .with_context(|| format!("cannot remove {}", folder.display()))?;
        }
        records.write(home).map_err(anyhow::Error::msg)?;
        let mut approvals = Approvals::read(home).map_err(anyhow::Error::msg)?;
        approvals.forget(&root);
        approvals.write(home).map_err(anyhow::Error::msg)?;
        return Ok(folder);
    }
    match config
        .plugins
        .loaded
        .iter()
        .find(|plugin| plugin.name == name)
    {
        Some(plugin) if plugin.source == "claude" => bail!(
            "'{name}' was installed by Claude Code ({}): remove it there (`claude plugin \
             uninstall {name}`), or turn it off with \"enabledPlugins\" in its settings",
            plugin.root.display()
        ),
        Some(plugin) => bail!(
            "'{name}' ({}) comes from [plugins] paths in the configuration: remove it there",
            plugin.root.display()
        ),
        None => bail!("no plugin named '{name}' was installed with `toolhost plugins install`"),
    }
}

/// `toolhost plugins marketplace …`.
pub(super) fn marketplace(home: &Path, command: MarketplaceCommand) -> anyhow::Result<()> {
    let folder = toolhost_plugins_folder(home).join("marketplaces");
    match command {
        MarketplaceCommand::Add { source } => {
            let staging = Staging::new(&folder)?;
            fetch(&source, &staging.0)?;
            let manifest = read_marketplace(&staging.0)?;
            let name = manifest.name.trim().to_owned();
            if name.is_empty() || name.contains(['/', '\\', '@']) || name.starts_with('.') {
                bail!("the marketplace's name '{name}' cannot be a folder name: fix its \"name\"");
            }
            let location = folder.join(&name);
            staging.finish(&location)?;
            let described = if is_git_url(&source) {
                json!({"source": "git", "url": source})
            } else {
                let path = std::fs::canonicalize(&source).unwrap_or_else(|_| source.clone().into());
                json!({"source": "directory", "path": path})
            };
            let mut known = toolhost_marketplaces(home).map_err(anyhow::Error::msg)?;
            known.insert(
                name.clone(),
                KnownMarketplace {
                    source: described,
                    install_location: location,
                },
            );
            write_marketplaces(home, &known).map_err(anyhow::Error::msg)?;
            let plugins: Vec<&str> = manifest.plugins.iter().map(|p| p.name.as_str()).collect();
            println!(
                "Added marketplace {name} with {} plugin(s): {}",
                plugins.len(),
                plugins.join(", ")
            );
        }
        MarketplaceCommand::List => {
            let (known, warnings) = known_marketplaces(home);
            for warning in warnings {
                eprintln!("warning: {warning}");
            }
            if known.is_empty() {
                println!("No marketplaces known.");
            }
            for (name, market) in known {
                let plugins = match read_marketplace(&market.install_location) {
                    Ok(manifest) => manifest
                        .plugins
                        .iter()
                        .map(|plugin| format!("{}@{name}", plugin.name))
                        .collect::<Vec<_>>()
                        .join(" "),
                    Err(error) => format!("(unreadable: {error})"),
                };
                println!("{name}\t{}\t{plugins}", market.install_location.display());
            }
        }
        MarketplaceCommand::Remove { name } => {
            let mut known = toolhost_marketplaces(home).map_err(anyhow::Error::msg)?;
            let Some(market) = known.remove(&name) else {
                bail!(
                    "no marketplace named '{name}' was added with `toolhost plugins marketplace add`"
                );
            };
            if market.install_location.starts_with(&folder) {
                let _ = std::fs::remove_dir_all(&market.install_location);
            }
            write_marketplaces(home, &known).map_err(anyhow::Error::msg)?;
            println!("Removed marketplace {name}");
        }
    }
    Ok(())
}

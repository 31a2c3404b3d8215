//! `toolhost plugins`: the Claude Code plugins found (`list`), installing one from a folder, a
//! git URL or a marketplace (`install`), removing one (`remove`), saying yes to what a plugin
//! runs (`approve`) and the marketplaces (`marketplace add|list|remove`). Reading plugins is
//! `toolhost_catalog::plugins`'; this module copies, clones and asks.

mod fetch;
mod install;

use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use clap::Subcommand;
use toolhost_catalog::plugins::Approvals;
use toolhost_config::Config;
use toolhost_config::plugins::LoadedPlugin;

/// `toolhost plugins …`.
#[derive(Debug, Subcommand)]
pub enum PluginsCommand {
    /// The plugins found for this workspace: where each is, what it gives, whether its hooks
    /// and MCP servers are approved.
    List {
        /// One JSON array instead of lines.
        #[arg(long)]
        json: bool,
    },
    /// Install a plugin into ~/.toolhost/plugins/cache/NAME from a folder, a git URL, or
    /// NAME@MARKETPLACE; then show its hooks and MCP servers and ask to approve them.
    Install {
        /// A plugin folder, a git URL (https://…, git@…, file://…, …​.git) or NAME@MARKETPLACE.
        source: String,
        /// Approve its hooks and MCP servers without asking.
        #[arg(long)]
        yes: bool,
    },
    /// Remove a plugin installed with `toolhost plugins install`.
    Remove {
        /// The plugin's name.
        name: String,
    },
    /// Show what a plugin runs (its hooks and MCP servers) and say yes to it.
    Approve {
        /// The plugin's name.
        name: String,
        /// Approve without asking.
        #[arg(long)]
        yes: bool,
    },
    /// Plugin marketplaces (a folder or git repository with .claude-plugin/marketplace.json).
    #[command(subcommand)]
    Marketplace(MarketplaceCommand),
}

/// `toolhost plugins marketplace …`.
#[derive(Debug, Subcommand)]
pub enum MarketplaceCommand {
    /// Add a marketplace from a folder or a git URL (copied into
    /// ~/.toolhost/plugins/marketplaces/NAME).
    Add {
        /// The folder or git URL.
        source: String,
    },
    /// The marketplaces known (toolhost's and Claude Code's) and their plugins.
    List,
    /// Forget a marketplace added with `marketplace add`.
    Remove {
        /// Its name.
        name: String,
    },
}

/// Runs the subcommand.
pub fn run(
    home: Option<&Path>,
    config: &Config,
    command: PluginsCommand,
) -> anyhow::Result<ExitCode> {
    let home = || home.context("HOME is not set: plugins are installed under ~/.toolhost/plugins");
    match command {
        PluginsCommand::List { json } => list(&with_agents(config), json)?,
        PluginsCommand::Install { source, yes } => {
            let home = home()?;
            let installed = install::install(home, &source)?;
            println!(
                "Installed {} {}into {}",
                installed.name,
                installed
                    .version
                    .as_deref()
                    .map(|version| format!("{version} "))
                    .unwrap_or_default(),
                installed.root.display()
            );
            let loaded = install::loaded_now(home, &installed)?;
            approve(home, &loaded, yes)?;
        }
        PluginsCommand::Remove { name } => {
            let root = install::remove(home()?, config, &name)?;
            println!("Removed {name} ({})", root.display());
        }
        PluginsCommand::Approve { name, yes } => {
            let Some(plugin) = config.plugins.loaded.iter().find(|p| p.name == name) else {
                bail!("no plugin named '{name}' is loaded here (see `toolhost plugins list`)");
            };
            approve(home()?, plugin, yes)?;
        }
        PluginsCommand::Marketplace(command) => install::marketplace(home()?, command)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// The loaded plugins, each with the names of the agents it defines (read now: agent files are
/// read when first needed).
fn with_agents(config: &Config) -> Vec<LoadedPlugin> {
    let mut plugins = config.plugins.loaded.clone();
    for plugin in &mut plugins {
        let prefix = format!("{}:", plugin.name);
        plugin.agents = config
            .agents
            .keys()
            .filter(|name| name.starts_with(&prefix))
            .cloned()
            .collect();
    }
    plugins
}

fn list(plugins: &[LoadedPlugin], json: bool) -> anyhow::Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(plugins)?);
        return Ok(());
    }
    if plugins.is_empty() {
        println!("No plugins found.");
    }
    for plugin in plugins {
        let state = match (plugin.runs_anything(), plugin.approved) {
            (false, _) => "runs nothing",
            (true, true) => "approved",
            (true, false) => "needs approval",
        };
        // One line per plugin: scripts read this.
        println!(
            "{}\t{}\t{}\t{state}\t{}",
            plugin.name,
            plugin.version.as_deref().unwrap_or("-"),
            plugin.source,
            plugin.root.display()
        );
    }
    Ok(())
}

/// Shows what `plugin` runs and, on the user's yes (or `yes`), remembers it.
fn approve(home: &Path, plugin: &LoadedPlugin, yes: bool) -> anyhow::Result<()> {
    if !plugin.runs_anything() {
        println!(
            "{} runs no hooks and no MCP servers: nothing to approve.",
            plugin.name
        );
        return Ok(());
    }
    let mut approvals = Approvals::read(home).map_err(anyhow::Error::msg)?;
    let what_runs = plugin.what_runs();
    if approvals.approves(&plugin.root, &what_runs) {
        println!(
            "{}'s hooks and MCP servers are already approved.",
            plugin.name
        );
        return Ok(());
    }
    println!("{} runs these on its own once approved:", plugin.name);
    for line in what_runs.lines() {
        println!("  {line}");
    }
    let said_yes = yes || ask("Approve them?")?;
    if !said_yes {
        println!(
            "Not approved: they stay off (approve later with `toolhost plugins approve {}`).",
            plugin.name
        );
        return Ok(());
    }
    approvals.approve(&plugin.root, &what_runs);
    approvals.write(home).map_err(anyhow::Error::msg)?;
    println!("Approved.");
    Ok(())
}

/// Asks on the terminal (or reads one line of stdin); anything but y or yes is a no.
fn ask(question: &str) -> anyhow::Result<bool> {
    let mut stdout = std::io::stdout();
    write!(stdout, "{question} [y/N] ")?;
    stdout.flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    if !std::io::stdin().is_terminal() {
        println!();
    }
    Ok(matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

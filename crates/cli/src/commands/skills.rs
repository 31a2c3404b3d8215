//! `toolhost skills`: search the configured hubs, install and remove hub skills, list the
//! skills found. Thin: the work is `toolhost_catalog::skills` and `toolhost_skillhub`.

use std::path::Path;
use std::process::ExitCode;

use clap::Subcommand;
use toolhost_catalog::skills::SkillCatalog;
use toolhost_config::Config;
use toolhost_skillhub::SkillHub;

/// `toolhost skills …`.
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum SkillsCommand {
    /// Search the configured hubs ([skills] hubs) for skills; no words lists them all.
    Search {
        /// Words that must all appear in a skill's id, name or description.
        query: Vec<String>,
    },
    /// Download, check and install a hub skill into ~/.toolhost/skills/ID.
    Install {
        /// The skill's id, as `skills search` shows it.
        id: String,
    },
    /// List the skills found for this workspace, and where each comes from.
    List {
        /// Print a JSON array (for scripts) instead of lines.
        #[arg(long)]
        json: bool,
    },
    /// Remove a skill installed from a hub (never a skill you wrote yourself).
    Remove {
        /// The skill's id.
        id: String,
    },
}

/// Runs the subcommand.
pub async fn run(
    workspace: &Path,
    home: Option<&Path>,
    config: &Config,
    command: SkillsCommand,
) -> anyhow::Result<ExitCode> {
    let hub = SkillHub::for_config(&config.skills, home);
    match command {
        SkillsCommand::Search { query } => {
            let found = hub.search(&query.join(" ")).await?;
            if found.is_empty() {
                println!("No skill on the hubs matches.");
            }
            for listing in found {
                let skill = listing.skill;
                println!(
                    "{}\t{}\t{}\t{}",
                    skill.id, skill.version, skill.name, skill.description
                );
            }
        }
        SkillsCommand::Install { id } => {
            let installed = hub.install(&id).await?;
            println!(
                "Installed {} {} into {}",
                installed.record.id,
                installed.record.version,
                installed.folder.display()
            );
        }
        SkillsCommand::List { json } => {
            let catalog = SkillCatalog::for_config(workspace, home, config);
            for warning in catalog.warnings() {
                eprintln!("warning: {warning}");
            }
            if json {
                let skills: Vec<serde_json::Value> = catalog
                    .skills()
                    .iter()
                    .map(|skill| {
                        serde_json::json!({
                            "name": skill.name,
                            "origin": skill_origin(skill),
                            "folder": skill.folder,
                            "description": skill.description,
                        })
                    })
                    .collect();
                println!("{}", serde_json::Value::Array(skills));
                return Ok(ExitCode::SUCCESS);
            }
            if catalog.skills().is_empty() {
                println!("No skills found.");
            }
            for skill in catalog.skills() {
                let origin = skill_origin(skill);
                // One line per skill, whatever its description holds: scripts read this.
                let description = skill.description.split_whitespace().collect::<Vec<_>>();
                println!(
                    "{}\t{origin}\t{}\t{}",
                    skill.name,
                    skill.folder.display(),
                    description.join(" ")
                );
            }
        }
        SkillsCommand::Remove { id } => {
            let folder = hub.remove(&id)?;
            println!("Removed {id} ({})", folder.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Where a skill comes from: `project`, `user`, or `hub` (installed from a skill hub).
fn skill_origin(skill: &toolhost_catalog::skills::Skill) -> &'static str {
    if skill.from_hub {
        "hub"
    } else {
        match skill.scope {
            toolhost_catalog::skills::SkillScope::Project => "project",
            toolhost_catalog::skills::SkillScope::User => "user",
        }
    }
}

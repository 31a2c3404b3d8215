//! `completion/complete`: values for prompt arguments and resource-template variables that
//! start with what was typed (case-insensitively), shortest first.
//!
//! - A prompt argument whose name speaks of a file, path or folder: the workspace's files
//!   (those Read may read). Other arguments have nothing to offer.
//! - `{+path}` of the workspace template: the workspace's files; `{skill}` of the skill
//!   template: the skills' names, and `{+path}`: the files of the skill named in the
//!   context; `{id}` of the session template: this workspace's session ids.

use std::collections::BTreeMap;

use toolhost_mcp::rmcp::ErrorData;
use toolhost_mcp::rmcp::model::{ArgumentInfo, Reference};

use super::resources::{file_template, sessions, workspace_files};
use super::{WorkspaceCatalog, prompts};

/// The values for `argument` of `reference`.
pub(super) async fn complete(
    catalog: &WorkspaceCatalog,
    reference: &Reference,
    argument: &ArgumentInfo,
    context: &BTreeMap<String, String>,
) -> Result<Vec<String>, ErrorData> {
    let candidates = match reference {
        Reference::Prompt(prompt) => {
            let found = catalog.found();
            let known = prompts::list(&found);
            let Some(known) = known.iter().find(|known| known.name == prompt.name) else {
                return Err(prompts::unknown_prompt(&found, &prompt.name));
            };
            let has_argument = known
                .arguments
                .iter()
                .flatten()
                .any(|known| known.name == argument.name);
            if !has_argument {
                return Err(ErrorData::invalid_params(
                    format!(
                        "prompt '{}' has no argument '{}'",
                        prompt.name, argument.name
                    ),
                    None,
                ));
            }
            if names_a_path(&argument.name) {
                workspace_files(catalog).await
            } else {
                Vec::new()
            }
        }
        Reference::Resource(template) => {
            template_values(catalog, &template.uri, &argument.name, context).await?
        }
        _ => {
            return Err(ErrorData::invalid_params(
                "completion is offered for ref/prompt and ref/resource only",
                None,
            ));
        }
    };
    Ok(ranked(candidates, &argument.value))
}

async fn template_values(
    catalog: &WorkspaceCatalog,
    uri: &str,
    variable: &str,
    context: &BTreeMap<String, String>,
) -> Result<Vec<String>, ErrorData> {
    let unknown_variable = || {
        ErrorData::invalid_params(
            format!("the template {uri} has no variable '{variable}'"),
            None,
        )
    };
    if uri == file_template(&catalog.workspace) {
        return match variable {
            "path" => Ok(workspace_files(catalog).await),
            _ => Err(unknown_variable()),
        };
    }
    match (uri, variable) {
        ("skill://{skill}/{+path}", "skill") => Ok(catalog
            .found()
            .skills
            .skills()
            .iter()
            .map(|skill| skill.name.clone())
            .collect()),
        ("skill://{skill}/{+path}", "path") => {
            let found = catalog.found();
            let Some(skill) = context.get("skill").and_then(|name| found.skills.get(name)) else {
                return Ok(Vec::new());
            };
            let (others, _) = skill.other_files();
            Ok(std::iter::once("SKILL.md".to_owned())
                .chain(
                    others
                        .iter()
                        .map(|file| file.to_string_lossy().into_owned()),
                )
                .collect())
        }
        ("session://{id}", "id") => Ok(sessions(catalog).into_iter().map(|(id, _)| id).collect()),
        ("skill://{skill}/{+path}" | "session://{id}", _) => Err(unknown_variable()),
        _ => Err(ErrorData::invalid_params(
            format!("'{uri}' is not a resource template of this server"),
            None,
        )),
    }
}

fn names_a_path(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    ["file", "path", "dir", "folder"]
        .iter()
        .any(|word| name.contains(word))
}

/// The candidates starting with `typed` (case-insensitively), shortest first, then in order.
fn ranked(candidates: Vec<String>, typed: &str) -> Vec<String> {
    let typed = typed.to_lowercase();
    let mut matching: Vec<String> = candidates
        .into_iter()
        .filter(|candidate| candidate.to_lowercase().starts_with(&typed))
        .collect();
    matching.sort_by_key(String::len);
    matching
}

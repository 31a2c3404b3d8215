//! A configured MCP server's prompts as slash commands: `/mcp__<server>__<prompt> args` in
//! `toolhost chat` and `toolhost run` (as Claude Code offers them).
//!
//! The words after the name fill the prompt's arguments in order, split as a shell splits
//! words (quotes keep spaces); the last argument takes every word left, and a prompt with one
//! argument takes the whole text as typed. A missing required argument is an error that
//! shows the usage. The permission rules judge the command as a call of a tool of that name
//! of that server: a `deny` rule naming it (`mcp__github__review`) or its server
//! (`mcp__github`) refuses it; the user typing it is the confirmation an `ask` would want.

use std::collections::BTreeMap;

use toolhost_catalog::slash_commands::split_arguments;
use toolhost_core::permission::{Decision, PermissionPolicy};
use toolhost_core::{PermissionSubject, ToolOrigin, ToolSpec};
use toolhost_mcp::McpClients;
use toolhost_mcp::client::McpPrompt;
use toolhost_mcp::client::naming::server_segment;

/// The prefix of every MCP prompt's command name.
const PREFIX: &str = "mcp__";

/// The user message for `line` when it is `/mcp__<server>__<prompt> args`; `None` for any
/// other line.
pub async fn expand_mcp_prompt_line(
    line: &str,
    clients: &McpClients,
    policy: &PermissionPolicy,
) -> Option<Result<String, String>> {
    let rest = line.trim_start().strip_prefix('/')?;
    let (name, raw) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    if !name.starts_with(PREFIX) {
        return None;
    }
    Some(expand(name, raw.trim(), clients, policy).await)
}

/// The MCP prompts as `/name [ARGS]` usage lines with their descriptions, for `/help`.
pub async fn mcp_prompt_commands(clients: &McpClients) -> Vec<(String, String)> {
    clients
        .prompts()
        .await
        .into_iter()
        .map(|prompt| (usage(&prompt), prompt.description))
        .collect()
}

async fn expand(
    name: &str,
    raw: &str,
    clients: &McpClients,
    policy: &PermissionPolicy,
) -> Result<String, String> {
    let prompts = clients.prompts().await;
    let Some(prompt) = prompts.iter().find(|prompt| prompt.command == name) else {
        let known: Vec<String> = prompts.iter().map(|p| format!("/{}", p.command)).collect();
        return Err(format!(
            "there is no MCP prompt /{name}; {}",
            if known.is_empty() {
                "no running MCP server offers prompts".to_owned()
            } else {
                format!("the MCP prompts are: {}", known.join(", "))
            }
        ));
    };
    let spec = ToolSpec::new(&prompt.command, &prompt.description)
        .with_origin(ToolOrigin::mcp(server_segment(&prompt.server)));
    let evaluation = policy.evaluate(&spec, &PermissionSubject::None, None);
    if evaluation.decision == Decision::Deny {
        return Err(format!(
            "/{name} is refused by the permission rules: {}",
            evaluation.reason
        ));
    }
    let arguments = fill_arguments(prompt, raw)?;
    clients.prompt_text(prompt, arguments).await
}

/// The prompt's arguments from the text typed after its name.
fn fill_arguments(prompt: &McpPrompt, raw: &str) -> Result<BTreeMap<String, String>, String> {
    let mut filled = BTreeMap::new();
    match prompt.arguments.as_slice() {
        [] if !raw.is_empty() => {
            return Err(format!("/{} takes no arguments", prompt.command));
        }
        [] => {}
        [(only, _)] => {
            if !raw.is_empty() {
                filled.insert(only.clone(), raw.to_owned());
            }
        }
        arguments => {
            let mut words = split_arguments(raw).map_err(|error| error.to_string())?;
            let last = arguments.len() - 1;
            let rest = if words.len() > last {
                words.split_off(last).join(" ")
            } else {
                String::new()
            };
            for ((name, _), word) in arguments.iter().zip(words) {
                filled.insert(name.clone(), word);
            }
            if !rest.is_empty() {
                filled.insert(arguments[last].0.clone(), rest);
            }
        }
    }
    let missing: Vec<&str> = prompt
        .arguments
        .iter()
        .filter(|(name, required)| *required && !filled.contains_key(name))
        .map(|(name, _)| name.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "/{} needs {}: {}",
            prompt.command,
            missing.join(", "),
            usage(prompt)
        ));
    }
    Ok(filled)
}

/// `/name <required> [optional]`.
fn usage(prompt: &McpPrompt) -> String {
    let mut text = format!("/{}", prompt.command);
    for (name, required) in &prompt.arguments {
        text.push_str(&if *required {
            format!(" <{name}>")
        } else {
            format!(" [{name}]")
        });
    }
    text
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn prompt(arguments: &[(&str, bool)]) -> McpPrompt {
        McpPrompt {
            command: "mcp__ev__p".to_owned(),
            server: "ev".to_owned(),
            name: "p".to_owned(),
            description: String::new(),
            arguments: arguments
                .iter()
                .map(|(name, required)| ((*name).to_owned(), *required))
                .collect(),
        }
    }

    #[test]
    fn words_fill_the_arguments_in_order_and_the_last_takes_the_rest() {
        let two = prompt(&[("city", true), ("note", false)]);
        let filled = fill_arguments(&two, "'New York' rainy and cold").unwrap();
        assert_eq!(filled["city"], "New York");
        assert_eq!(filled["note"], "rainy and cold");
        let one = prompt(&[("text", true)]);
        assert_eq!(fill_arguments(&one, "a 'b' c").unwrap()["text"], "a 'b' c");
        let error = fill_arguments(&two, "").unwrap_err();
        assert!(
            error.contains("needs city") && error.contains("<city> [note]"),
            "{error}"
        );
    }
}

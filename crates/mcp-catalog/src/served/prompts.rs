//! Slash commands and skills as MCP prompts.
//!
//! A command's arguments: when its body uses `$1`…`$9`, one argument per position, named by
//! the words of `argument-hint` (`[pr-number] [priority]` gives `pr-number` and `priority`;
//! `arg3` where the hint has no third word); otherwise one argument, named by the hint's only
//! word or `arguments`, which is `$ARGUMENTS` as typed. The values are put together into the
//! raw argument string a `/name args` line would give (positional ones quoted as a shell
//! would need them), and the command is expanded exactly as `toolhost chat` expands it:
//! `@file`s read with Read and `` !`command` ``s run with Bash through the served registry's
//! permissions. Every argument is optional, as in `chat`.
//!
//! A skill is a prompt of its name with one optional `arguments`; its message is
//! `SKILL.md`'s body, expanded the same way, after a line naming the skill's folder (which
//! its relative paths are relative to).

use std::collections::BTreeMap;

use toolhost_catalog::slash_commands::{SlashCommand, SlashCommandError, expand};
use toolhost_core::{CallOptions, ToolRegistry};
use toolhost_mcp::rmcp::ErrorData;
use toolhost_mcp::rmcp::model::{GetPromptResult, Prompt, PromptArgument, PromptMessage, Role};

use super::Found;

/// The name of the one argument of a prompt without positional ones.
pub(super) const ARGUMENTS: &str = "arguments";

/// Every command, then every skill no command shadows.
pub(super) fn list(found: &Found) -> Vec<Prompt> {
    let mut prompts: Vec<Prompt> = found
        .commands
        .commands()
        .iter()
        .map(|command| {
            let arguments = command_arguments(command)
                .into_iter()
                .map(|(name, description)| {
                    PromptArgument::new(name)
                        .with_description(description)
                        .with_required(false)
                })
                .collect();
            Prompt::new(
                &command.name,
                Some(non_empty(&command.description, "a slash command")),
                Some(arguments),
            )
            .with_title(format!("/{}", command.name))
        })
        .collect();
    for skill in found.skills.skills() {
        if found.commands.get(&skill.name).is_some() {
            continue;
        }
        let argument = PromptArgument::new(ARGUMENTS)
            .with_description("what to use the skill on ($ARGUMENTS in SKILL.md)")
            .with_required(false);
        prompts.push(
            Prompt::new(
                &skill.name,
                Some(non_empty(&skill.description, "a skill")),
                Some(vec![argument]),
            )
            .with_title(format!("skill {}", skill.name)),
        );
    }
    prompts
}

/// The prompt `name` with `arguments`, expanded.
pub(super) async fn get(
    found: &Found,
    registry: &ToolRegistry,
    name: &str,
    arguments: &BTreeMap<String, String>,
    options: CallOptions,
) -> Result<GetPromptResult, ErrorData> {
    if let Some(command) = found.commands.get(name) {
        let raw = raw_arguments(command, arguments)?;
        let turn = found
            .commands
            .run(name, &raw, registry, options, true)
            .await
            .map_err(|error| match error {
                SlashCommandError::Expand { .. } => {
                    ErrorData::internal_error(error.to_string(), None)
                }
                other => ErrorData::invalid_params(other.to_string(), None),
            })?;
        return Ok(
            GetPromptResult::new(vec![PromptMessage::new_text(Role::User, turn.prompt)])
                .with_description(non_empty(&command.description, "a slash command")),
        );
    }
    if let Some(skill) = found.skills.get(name) {
        check_names(arguments, &[ARGUMENTS.to_owned()], name)?;
        let body = skill
            .body()
            .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
        let raw = arguments.get(ARGUMENTS).map_or("", String::as_str);
        let expansion = expand(&body, raw, registry, options)
            .await
            .map_err(|error| ErrorData::internal_error(format!("skill {name}: {error}"), None))?;
        let text = format!(
            "Base directory for this skill: {}\n\n{}",
            skill.folder.display(),
            expansion.prompt
        );
        return Ok(
            GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
                .with_description(non_empty(&skill.description, "a skill")),
        );
    }
    Err(unknown_prompt(found, name))
}

/// The error for a prompt there is none of, naming those there are.
pub(super) fn unknown_prompt(found: &Found, name: &str) -> ErrorData {
    let known: Vec<String> = list(found).into_iter().map(|prompt| prompt.name).collect();
    let listed = if known.is_empty() {
        "there are none (slash commands in .toolhost/commands/ or .claude/commands/, skills in .toolhost/skills/)".to_owned()
    } else {
        format!("the prompts are: {}", known.join(", "))
    };
    ErrorData::invalid_params(format!("there is no prompt '{name}'; {listed}"), None)
}

/// A command's arguments with their descriptions, in order.
pub(super) fn command_arguments(command: &SlashCommand) -> Vec<(String, String)> {
    let hint = command.argument_hint.as_deref().unwrap_or("").trim();
    let words = hint_words(hint);
    let positions = highest_position(&command.body);
    if positions == 0 {
        let name = match words.as_deref() {
            Some([only]) => only.clone(),
            _ => ARGUMENTS.to_owned(),
        };
        let description = if hint.is_empty() {
            "the arguments, as typed after the command ($ARGUMENTS)".to_owned()
        } else {
            format!("the arguments, as typed after the command: {hint}")
        };
        return vec![(name, description)];
    }
    (1..=positions)
        .map(|position| {
            let name = words
                .as_ref()
                .and_then(|words| words.get(position - 1).cloned())
                .unwrap_or_else(|| format!("arg{position}"));
            (name, format!("${position} of the command"))
        })
        .collect()
}

/// The raw argument string for `arguments` given by name.
fn raw_arguments(
    command: &SlashCommand,
    arguments: &BTreeMap<String, String>,
) -> Result<String, ErrorData> {
    let names: Vec<String> = command_arguments(command)
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    check_names(arguments, &names, &command.name)?;
    if highest_position(&command.body) == 0 {
        return Ok(arguments.get(&names[0]).cloned().unwrap_or_default());
    }
    let mut values: Vec<&str> = names
        .iter()
        .map(|name| arguments.get(name).map_or("", String::as_str))
        .collect();
    while values.last().is_some_and(|value| value.is_empty()) {
        values.pop();
    }
    Ok(values
        .into_iter()
        .map(shell_word)
        .collect::<Vec<_>>()
        .join(" "))
}

fn check_names(
    arguments: &BTreeMap<String, String>,
    names: &[String],
    prompt: &str,
) -> Result<(), ErrorData> {
    match arguments.keys().find(|key| !names.contains(key)) {
        Some(unknown) => Err(ErrorData::invalid_params(
            format!(
                "prompt '{prompt}' has no argument '{unknown}'; its arguments are: {}",
                names.join(", ")
            ),
            None,
        )),
        None => Ok(()),
    }
}

/// `value` as one word of the argument string: quoted when it is empty or holds anything
/// the splitter would read.
fn shell_word(value: &str) -> String {
    let plain = !value.is_empty()
        && value
            .chars()
            .all(|c| !c.is_whitespace() && !matches!(c, '\'' | '"' | '\\'));
    if plain {
        value.to_owned()
    } else {
        format!("'{}'", value.replace('\'', r"'\''"))
    }
}

/// The words of a hint such as `[pr-number] [priority]`, when it is a plain list of names;
/// `None` for free text (`add [tag] | remove [tag]`).
fn hint_words(hint: &str) -> Option<Vec<String>> {
    if hint.is_empty() || hint.contains('|') {
        return None;
    }
    let words: Vec<String> = hint
        .split_whitespace()
        .map(|word| word.trim_matches(|c| matches!(c, '[' | ']' | '<' | '>' | '.')))
        .filter(|word| !word.is_empty())
        .map(str::to_owned)
        .collect();
    let names = words.iter().all(|word| {
        word.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_'))
    });
    (names && !words.is_empty()).then_some(words)
}

/// The highest `$N` (1–9) the body uses, not counting `\$N`; 0 for none.
fn highest_position(body: &str) -> usize {
    let bytes = body.as_bytes();
    let mut highest = 0;
    for (index, byte) in bytes.iter().enumerate() {
        if *byte != b'$' || (index > 0 && bytes[index - 1] == b'\\') {
            continue;
        }
        if let Some(digit) = bytes.get(index + 1).filter(|d| (b'1'..=b'9').contains(d)) {
            highest = highest.max(usize::from(digit - b'0'));
        }
    }
    highest
}

fn non_empty(text: &str, fallback: &str) -> String {
    if text.trim().is_empty() {
        fallback.to_owned()
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn positions_and_hints_name_the_arguments() {
        assert_eq!(highest_position("fix $1 then $3, not \\$9"), 3);
        assert_eq!(highest_position("$ARGUMENTS and $10"), 1);
        assert_eq!(
            hint_words("[pr-number] [priority]").unwrap(),
            ["pr-number", "priority"]
        );
        assert_eq!(hint_words("add [tag] | remove [tag]"), None);
        assert_eq!(shell_word("two words"), "'two words'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word("plain"), "plain");
    }
}

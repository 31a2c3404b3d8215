//! The slash commands an editor offers after `/`: the slash-command files
//! (`.claude/commands/`, `.toolhost/commands/`), the skills, and the configured MCP servers'
//! prompts (`/mcp__<server>__<prompt>`). A command or a prompt runs as `toolhost chat` runs it
//! (its expansion is the turn's message; a command's with its `allowed-tools` and `model`); a
//! skill's command asks the model to follow that skill.

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, UnstructuredCommandInput,
};
use toolhost_catalog::skills::SkillSummary;
use toolhost_catalog::slash_commands::SlashCommands;
use toolhost_mcp::client::McpPrompt;

/// How every MCP prompt's command starts, as `toolhost chat` names them.
const MCP_PROMPT_PREFIX: &str = "mcp__";

/// What a prompt's leading `/name args` is.
#[derive(Debug, PartialEq, Eq)]
pub enum Invocation {
    /// A slash command file or an MCP prompt: run the whole line.
    Command,
    /// A skill: the message that asks the model to use it.
    Skill(String),
}

/// The commands, skills and MCP prompts, as `available_commands_update` lists them.
pub fn available(
    commands: &SlashCommands,
    skills: &[SkillSummary],
    prompts: &[McpPrompt],
) -> Vec<AvailableCommand> {
    let mut listed: Vec<AvailableCommand> = commands
        .commands()
        .iter()
        .map(|command| {
            let hint = command
                .argument_hint
                .clone()
                .unwrap_or_else(|| "arguments".to_owned());
            AvailableCommand::new(command.name.clone(), command.description.clone()).input(
                AvailableCommandInput::Unstructured(UnstructuredCommandInput::new(hint)),
            )
        })
        .collect();
    for skill in skills {
        if commands.get(&skill.name).is_none() {
            listed.push(
                AvailableCommand::new(skill.name.clone(), format!("skill: {}", skill.description))
                    .input(AvailableCommandInput::Unstructured(
                        UnstructuredCommandInput::new("what to use it for"),
                    )),
            );
        }
    }
    listed.extend(prompts.iter().map(prompt_command));
    listed
}

/// An MCP prompt as a command: its arguments, when it has any, are the input's hint
/// (`<city> [state]`: required ones in angle brackets, as `/help` of `toolhost chat` shows).
fn prompt_command(prompt: &McpPrompt) -> AvailableCommand {
    let description = if prompt.description.is_empty() {
        format!(
            "prompt '{}' of the MCP server '{}'",
            prompt.name, prompt.server
        )
    } else {
        prompt.description.clone()
    };
    let command = AvailableCommand::new(prompt.command.clone(), description);
    if prompt.arguments.is_empty() {
        return command;
    }
    let hint = prompt
        .arguments
        .iter()
        .map(|(name, required)| {
            if *required {
                format!("<{name}>")
            } else {
                format!("[{name}]")
            }
        })
        .collect::<Vec<_>>()
        .join(" ");
    command.input(AvailableCommandInput::Unstructured(
        UnstructuredCommandInput::new(hint),
    ))
}

/// What `text` invokes, when it starts with `/name` of a command or skill.
pub fn invocation(
    text: &str,
    commands: &SlashCommands,
    skills: &[SkillSummary],
) -> Option<Invocation> {
    let line = text.trim_start().strip_prefix('/')?;
    let (name, rest) = line
        .split_once(char::is_whitespace)
        .map_or((line, ""), |(name, rest)| (name, rest.trim()));
    // An MCP prompt that no server offers is still the chat's to answer: its error names
    // the prompts there are.
    if commands.get(name).is_some() || name.starts_with(MCP_PROMPT_PREFIX) {
        return Some(Invocation::Command);
    }
    skills.iter().find(|skill| skill.name == name).map(|skill| {
        let mut message = format!(
            "Use the skill '{}': read it first with the read_skill tool, then follow it.",
            skill.name
        );
        if !rest.is_empty() {
            message.push_str("\n\n");
            message.push_str(rest);
        }
        Invocation::Skill(message)
    })
}

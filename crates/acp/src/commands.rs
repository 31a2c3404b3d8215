//! The slash commands an editor offers after `/`: the slash-command files
//! (`.claude/commands/`, `.toolhost/commands/`) and the skills. A command runs as
//! `toolhost chat` runs it (its expansion is the turn's message, with its `allowed-tools` and
//! `model`); a skill's command asks the model to follow that skill.

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, UnstructuredCommandInput,
};
use toolhost_catalog::skills::SkillSummary;
use toolhost_catalog::slash_commands::SlashCommands;

/// What a prompt's leading `/name args` is.
#[derive(Debug, PartialEq, Eq)]
pub enum Invocation {
    /// A slash command file: run the whole line.
    Command,
    /// A skill: the message that asks the model to use it.
    Skill(String),
}

/// The commands and skills, as `available_commands_update` lists them.
pub fn available(commands: &SlashCommands, skills: &[SkillSummary]) -> Vec<AvailableCommand> {
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
    listed
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
    if commands.get(name).is_some() {
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

//! `slash_command` (R28): expands a slash command for the model.
//!
//! The tool itself asks for nothing: what it reads goes through Read and what it runs goes
//! through Bash, each with its own permission rules (a `` !`command` `` asks exactly when the
//! same Bash call would).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolhost_core::{
    CallOptions, Sensitivity, ToolAnnotations, ToolContext, ToolError, ToolOutput, ToolSpec,
    TypedTool,
};

use crate::offered_registry::OfferedRegistry;
use toolhost_catalog::slash_commands::SlashCommands;

/// Parameters of `slash_command`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SlashCommandParams {
    /// The command's name, with or without the leading `/` (`review`, `/frontend:component`).
    pub command: String,
    /// The arguments, as a user would type them after the name (`123 "high priority"`).
    pub args: Option<String>,
}

/// Expands a slash command's prompt, reading its `@file`s and running its `` !`command` ``s.
pub struct SlashCommandTool {
    commands: Arc<SlashCommands>,
    registry: OfferedRegistry,
}

impl SlashCommandTool {
    /// `slash_command` over `commands`, reading and running through the registry `registry`
    /// is set to.
    pub fn new(commands: Arc<SlashCommands>, registry: OfferedRegistry) -> Self {
        Self { commands, registry }
    }
}

impl TypedTool for SlashCommandTool {
    type Params = SlashCommandParams;

    fn tool_name(&self) -> String {
        "slash_command".to_owned()
    }

    fn describe(&self) -> ToolSpec {
        let mut description = String::from(
            "Runs a slash command: expands its prompt template with the arguments (inlining \
             the files it names and the output of the shell commands it runs) and returns the \
             prompt, which you then follow.",
        );
        let commands = self.commands.commands();
        if commands.is_empty() {
            description.push_str(" No commands are defined.");
        } else {
            description.push_str(" The commands:");
            for command in commands.iter().filter(|command| !command.user_only) {
                description.push_str(&format!("\n- /{}", command.name));
                if let Some(hint) = &command.argument_hint {
                    description.push_str(&format!(" {hint}"));
                }
                description.push_str(&format!(": {}", command.description));
            }
        }
        ToolSpec::new("slash_command", description)
            .with_label("Slash command")
            .with_annotations(ToolAnnotations {
                read_only: false,
                destructive: false,
                idempotent: false,
                open_world: false,
            })
            .with_sensitivity(Sensitivity::Safe)
            .with_subagent_inheritance()
    }

    async fn run(
        &self,
        params: SlashCommandParams,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let Some(registry) = self.registry.get() else {
            return Err(ToolError::new("the tool set is not ready yet"));
        };
        let options = CallOptions {
            cancel: ctx.cancellation().clone(),
            session: Arc::new(ctx.session().clone()),
            ..CallOptions::default()
        };
        let turn = self
            .commands
            .run(
                &params.command,
                params.args.as_deref().unwrap_or(""),
                &registry,
                options,
                false,
            )
            .await
            .map_err(|error| ToolError::new(error.to_string()))?;
        let mut text = format!("/{} expands to:\n\n{}\n", turn.command, turn.prompt);
        if let Some(tools) = &turn.allowed_tools {
            let names: Vec<&str> = tools.rules().iter().map(|rule| rule.as_str()).collect();
            text.push_str(&format!(
                "\n(The command allows only these tools: {}.)\n",
                names.join(", ")
            ));
        }
        Ok(ToolOutput::text(text).with_details(json!({
            "command": turn.command,
            "prompt": turn.prompt,
            "allowed_tools": turn.allowed_tools.as_ref().map(|tools| tools.rules().iter().map(|rule| rule.as_str().to_owned()).collect::<Vec<_>>()),
            "model": turn.model,
            "files": turn.expansion.files,
            "commands": turn.expansion.commands,
        })))
    }
}

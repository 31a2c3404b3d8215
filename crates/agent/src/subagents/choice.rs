//! Which definition and model a child runs: `agent` (the general-purpose agent when none)
//! and `model` (`inherit`, a configured provider, `PROVIDER/MODEL`, Claude Code's aliases, a
//! model name on the parent's provider).

use toolhost_core::ToolError;

use super::{GENERAL_PURPOSE_AGENT, SubAgents};
use toolhost_config::model_choice::{ChosenProvider, ModelFlags, choose_provider};
use toolhost_config::{AgentConfig, Config};

fn refuse(message: impl Into<String>) -> ToolError {
    ToolError::new(message.into())
}

/// Claude Code's model aliases, and the Anthropic model each stands for.
const CLAUDE_ALIASES: [(&str, &str); 3] = [
    ("sonnet", "claude-sonnet-4-5"),
    ("opus", "claude-opus-4-1"),
    ("haiku", "claude-haiku-4-5"),
];

impl SubAgents {
    /// The definition `name` names (the general-purpose agent when none).
    pub(super) fn definition(&self, name: Option<&str>) -> Result<AgentConfig, ToolError> {
        let config = &self.hub.context.config;
        match name {
            None | Some(GENERAL_PURPOSE_AGENT) => Ok(config
                .agents
                .get(GENERAL_PURPOSE_AGENT)
                .cloned()
                .unwrap_or_else(|| {
                    let mut agent = AgentConfig::main();
                    agent.name = GENERAL_PURPOSE_AGENT.to_owned();
                    agent
                })),
            Some(name) => config.agents.get(name).cloned().ok_or_else(|| {
                let mut known: Vec<String> = config.agents.keys().cloned().collect();
                if !known.iter().any(|known| known == GENERAL_PURPOSE_AGENT) {
                    known.push(GENERAL_PURPOSE_AGENT.to_owned());
                }
                refuse(format!(
                    "there is no agent '{name}': the agents are {} (define others in \
                     .toolhost/agents/NAME.md or as [agents.NAME])",
                    known.join(", ")
                ))
            }),
        }
    }

    /// The provider and model a resumed session was using.
    pub(super) fn resumed_provider(
        &self,
        provider: &str,
        model: &str,
    ) -> Result<ChosenProvider, ToolError> {
        let flags = ModelFlags {
            provider: Some(provider.to_owned()),
            model: Some(model.to_owned()),
        };
        choose_provider(&self.hub.context.config, &flags, &|name| {
            std::env::var(name).ok()
        })
        .map_err(|error| refuse(format!("the session's model: {error}")))
    }

    /// The provider and model for `asked` (a definition's or the call's `model`).
    pub(super) fn child_provider(&self, asked: Option<&str>) -> Result<ChosenProvider, ToolError> {
        let config = &self.hub.context.config;
        let inherited = self
            .scope
            .provider
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        let parent = match inherited {
            Some(chosen) => chosen,
            None => choose_provider(config, &ModelFlags::default(), &|name| {
                std::env::var(name).ok()
            })
            .map_err(|error| refuse(error.to_string()))?,
        };
        definition_model(config, parent, asked)
            .map_err(|error| refuse(format!("the sub-agent's model: {error}")))
    }
}

/// The provider and model a definition's `model` asks for, given the one its parent (or the
/// run) would ask: `inherit` or nothing keeps `parent`; a configured provider's name, its model;
/// `PROVIDER/MODEL`; Claude Code's aliases (an Anthropic model on an Anthropic provider, else
/// `parent`); any other name, that model on `parent`'s provider.
pub(crate) fn definition_model(
    config: &Config,
    parent: ChosenProvider,
    asked: Option<&str>,
) -> Result<ChosenProvider, String> {
    let asked = asked.map(str::trim).filter(|model| !model.is_empty());
    let flags = match asked {
        None | Some("inherit") => return Ok(parent),
        Some(alias) if CLAUDE_ALIASES.iter().any(|(name, _)| *name == alias) => {
            if parent.entry.api != toolhost_providers::Api::Anthropic {
                return Ok(parent);
            }
            let model = CLAUDE_ALIASES
                .iter()
                .find(|(name, _)| *name == alias)
                .map(|(_, model)| (*model).to_owned());
            ModelFlags {
                provider: Some(parent.entry.name.clone()),
                model,
            }
        }
        Some(name) if config.providers.contains_key(name) => ModelFlags {
            provider: Some(name.to_owned()),
            model: None,
        },
        Some(both) => match both.split_once('/') {
            Some((provider, model)) if config.providers.contains_key(provider) => ModelFlags {
                provider: Some(provider.to_owned()),
                model: Some(model.to_owned()),
            },
            _ => ModelFlags {
                provider: Some(parent.entry.name.clone()),
                model: Some(both.to_owned()),
            },
        },
    };
    choose_provider(config, &flags, &|name| std::env::var(name).ok())
        .map_err(|error| error.to_string())
}

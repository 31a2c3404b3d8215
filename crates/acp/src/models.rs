//! The model choice an editor offers in its model picker: a session configuration option
//! (`configOptions` of `session/new` and `session/load`, set with `session/set_config_option`)
//! whose values are `PROVIDER/MODEL`, as agent definitions name a model.
//!
//! The choices are the model in use, each `[providers.NAME]` with its `model`, the `[agent]`
//! model, and the models the agent definitions name (`PROVIDER/MODEL`, a configured provider,
//! or a model on the provider in use); `inherit` and Claude Code's aliases (`sonnet`, …) name
//! no model of their own and are left out.

use agent_client_protocol::Error;
use agent_client_protocol::v1::schema::{
    SessionConfigOption, SessionConfigOptionCategory, SessionConfigOptionValue,
    SessionConfigSelectOption,
};
use toolhost_config::Config;
use toolhost_config::model_choice::ModelFlags;

use crate::requests::invalid_params;

/// The id of the model option.
pub const MODEL_OPTION: &str = "model";

/// What an agent definition's `model` may say that names no model of its own.
const NOT_A_MODEL: [&str; 4] = ["inherit", "sonnet", "opus", "haiku"];

/// One model to choose: a provider and a model of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelChoice {
    /// The provider's name (`[providers.NAME]`, or `openai` / `anthropic`).
    pub provider: String,
    /// The model.
    pub model: String,
}

impl ModelChoice {
    /// A choice of `model` on `provider`.
    pub fn new(provider: &str, model: &str) -> Self {
        Self {
            provider: provider.to_owned(),
            model: model.to_owned(),
        }
    }

    /// Its value in the option: `PROVIDER/MODEL`.
    pub fn value(&self) -> String {
        format!("{}/{}", self.provider, self.model)
    }

    /// The flags that choose it.
    pub fn flags(&self) -> ModelFlags {
        ModelFlags {
            provider: Some(self.provider.clone()),
            model: Some(self.model.clone()),
        }
    }

    /// What `/model` of the chat takes: `PROVIDER MODEL`.
    pub fn words(&self) -> String {
        format!("{} {}", self.provider, self.model)
    }
}

/// The models `config` names, each once, in the configuration's order (so that the list does
/// not change with the choice); `current` first when the configuration does not name it.
pub fn model_choices(config: &Config, current: &ModelChoice) -> Vec<ModelChoice> {
    let mut choices: Vec<ModelChoice> = Vec::new();
    let mut add = |choice: ModelChoice| {
        if !choices.contains(&choice) {
            choices.push(choice);
        }
    };
    for (name, entry) in &config.providers {
        if let Some(model) = &entry.model {
            add(ModelChoice::new(name, model));
        }
    }
    if let Some(model) = &config.agent_settings.model {
        let provider = config
            .agent_settings
            .provider
            .as_deref()
            .unwrap_or(&current.provider);
        add(ModelChoice::new(provider, model));
    }
    for agent in config.agents.values() {
        let Some(named) = agent.model.as_deref().map(str::trim) else {
            continue;
        };
        if named.is_empty() || NOT_A_MODEL.contains(&named) {
            continue;
        }
        if let Some(entry) = config.providers.get(named) {
            if let Some(model) = &entry.model {
                add(ModelChoice::new(named, model));
            }
            continue;
        }
        match named.split_once('/') {
            Some((provider, model)) if is_provider(config, provider) => {
                add(ModelChoice::new(provider, model));
            }
            _ => add(ModelChoice::new(&current.provider, named)),
        }
    }
    if !choices.contains(current) {
        choices.insert(0, current.clone());
    }
    choices
}

/// Whether `name` is a provider `config` can use.
fn is_provider(config: &Config, name: &str) -> bool {
    config.providers.contains_key(name) || toolhost_config::CONVENTIONAL_PROVIDERS.contains(&name)
}

/// The option as the editor draws it: `current` chosen among `choices`.
pub fn model_option(choices: &[ModelChoice], current: &ModelChoice) -> SessionConfigOption {
    let options: Vec<SessionConfigSelectOption> = choices
        .iter()
        .map(|choice| {
            SessionConfigSelectOption::new(choice.value(), choice.model.clone())
                .description(format!("the provider '{}'", choice.provider))
        })
        .collect();
    SessionConfigOption::select(MODEL_OPTION, "Model", current.value(), options)
        .category(SessionConfigOptionCategory::Model)
        .description("The model the agent asks from the next request on".to_owned())
}

/// The choice a `session/set_config_option` asks for, among `choices`.
pub fn chosen(
    config_id: &str,
    value: &SessionConfigOptionValue,
    choices: &[ModelChoice],
) -> Result<ModelChoice, Error> {
    if config_id != MODEL_OPTION {
        return Err(invalid_params(
            format!(
                "session/set_config_option: configId: there is no option '{config_id}'; \
                 toolhost offers '{MODEL_OPTION}'"
            ),
            "configId",
        ));
    }
    let listed = || {
        choices
            .iter()
            .map(ModelChoice::value)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(id) = value.as_value_id() else {
        return Err(invalid_params(
            format!(
                "session/set_config_option: value: the model is one of {}, not a boolean",
                listed()
            ),
            "value",
        ));
    };
    choices
        .iter()
        .find(|choice| choice.value() == *id.0)
        .cloned()
        .ok_or_else(|| {
            invalid_params(
                format!(
                    "session/set_config_option: value: '{}' is not a model offered; the models \
                     are {} (configure others as [providers.NAME] with a model)",
                    id.0,
                    listed()
                ),
                "value",
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use toolhost_config::AgentConfig;

    fn with_agents(models: &[&str]) -> Config {
        let mut config = Config::default();
        for (index, model) in models.iter().enumerate() {
            let mut agent = AgentConfig::named(&format!("agent{index}"), "test".to_owned());
            agent.model = Some((*model).to_owned());
            config.agents.insert(agent.name.clone(), agent);
        }
        config
    }

    #[test]
    fn agents_name_models_on_a_provider_or_the_one_in_use_and_aliases_name_none() {
        let current = ModelChoice::new("openai", "gpt-5-mini");
        let config = with_agents(&["inherit", "haiku", "anthropic/claude-x", "gpt-5", "gpt-5"]);
        assert_eq!(
            model_choices(&config, &current),
            vec![
                current.clone(),
                ModelChoice::new("anthropic", "claude-x"),
                ModelChoice::new("openai", "gpt-5"),
            ]
        );
    }

    #[test]
    fn a_value_not_offered_or_another_option_is_refused_naming_the_field() {
        let choices = vec![ModelChoice::new("openai", "gpt-5-mini")];
        let wrong_option = chosen(
            "mode",
            &SessionConfigOptionValue::value_id("openai/gpt-5-mini"),
            &choices,
        )
        .unwrap_err();
        assert_eq!(wrong_option.data.unwrap()["field"], "configId");
        let not_offered = chosen(
            MODEL_OPTION,
            &SessionConfigOptionValue::boolean(true),
            &choices,
        )
        .unwrap_err();
        assert_eq!(not_offered.data.unwrap()["field"], "value");
        assert_eq!(
            chosen(
                MODEL_OPTION,
                &SessionConfigOptionValue::value_id("openai/gpt-5-mini"),
                &choices
            )
            .unwrap(),
            choices[0]
        );
    }
}

//! Which provider and model a run asks: the flags, then `[agent]`, then `[providers.NAME]`,
//! then the conventional environment variables (`OPENAI_API_KEY` / `OPENAI_BASE_URL`,
//! `ANTHROPIC_API_KEY` / `ANTHROPIC_BASE_URL`), so that a run works with no configuration at
//! all.

use std::collections::BTreeMap;

use crate::{Api, CONVENTIONAL_PROVIDERS, Config, ProviderEntry, ProviderTimeouts, check_base_url};

/// The provider used when only `OPENAI_*` variables are set, and the model it asks unless told.
pub const OPENAI_DEFAULT_MODEL: &str = "gpt-5-mini";

/// The model the `anthropic` provider asks unless told.
pub const ANTHROPIC_DEFAULT_MODEL: &str = "claude-sonnet-4-5";

/// What the command line says (`--provider`, `--model`).
#[derive(Clone, Debug, Default)]
pub struct ModelFlags {
    /// `--provider NAME`.
    pub provider: Option<String>,
    /// `--model NAME`.
    pub model: Option<String>,
}

/// A provider ready to connect: its entry, its key read from the environment, its model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChosenProvider {
    /// The configured (or conventional) provider.
    pub entry: ProviderEntry,
    /// The API key, when the provider has one.
    pub api_key: Option<String>,
    /// The model to ask.
    pub model: String,
}

/// Why no provider could be chosen; each says what to set.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ModelChoiceError(String);

impl ModelChoiceError {
    /// A choice refused for `message` (what is wrong and what to do instead).
    pub fn new(message: String) -> Self {
        Self(message)
    }
}

/// The provider and model for a run.
pub fn choose_provider(
    config: &Config,
    flags: &ModelFlags,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ChosenProvider, ModelChoiceError> {
    let named = flags
        .provider
        .clone()
        .or_else(|| config.agent_settings.provider.clone());
    let entry = match named {
        Some(name) => match config.providers.get(&name) {
            Some(entry) => entry.clone(),
            None => conventional(&name, env).ok_or_else(|| {
                let mut known: Vec<&str> = config.providers.keys().map(String::as_str).collect();
                known.extend(CONVENTIONAL_PROVIDERS);
                ModelChoiceError(format!(
                    "unknown provider '{name}'{}: the providers are {} (configure others as \
                     [providers.NAME] in .toolhost/config.toml)",
                    source_of_name(flags, config),
                    known.join(", ")
                ))
            })?,
        },
        None => default_provider(config, env)?,
    };
    if let Some(url) = &entry.base_url {
        check_base_url(url).map_err(|problem| {
            ModelChoiceError(format!(
                "provider '{}': base_url {problem} (from {})",
                entry.name, entry.origin
            ))
        })?;
    }
    let api_key = match &entry.api_key_env {
        None => None,
        Some(variable) => match env(variable).filter(|key| !key.trim().is_empty()) {
            Some(key) => Some(key),
            None if needs_key(&entry) => {
                return Err(ModelChoiceError(format!(
                    "provider '{}' needs an API key: set the environment variable {variable} \
                     (api_key_env, {})",
                    entry.name, entry.origin
                )));
            }
            None => None,
        },
    };
    let model = flags
        .model
        .clone()
        .or_else(|| config.agent_settings.model.clone())
        .or_else(|| entry.model.clone())
        .ok_or_else(|| {
            ModelChoiceError(format!(
                "provider '{}' has no model: pass --model, or set model in [providers.{}] or \
                 [agent]",
                entry.name, entry.name
            ))
        })?;
    Ok(ChosenProvider {
        entry,
        api_key,
        model,
    })
}

fn source_of_name(flags: &ModelFlags, config: &Config) -> String {
    if flags.provider.is_some() {
        " (--provider)".to_owned()
    } else {
        config
            .source_of("agent.provider")
            .map(|origin| format!(" ([agent] provider, {origin})"))
            .unwrap_or_default()
    }
}

/// With no provider named: the only configured one, else Anthropic or OpenAI by their
/// variables.
fn default_provider(
    config: &Config,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ProviderEntry, ModelChoiceError> {
    let mut configured = config.providers.values();
    if let (Some(only), None) = (configured.next(), configured.next()) {
        return Ok(only.clone());
    }
    if !config.providers.is_empty() {
        let names: Vec<&str> = config.providers.keys().map(String::as_str).collect();
        return Err(ModelChoiceError(format!(
            "several providers are configured ({}): choose one with --provider or [agent] provider",
            names.join(", ")
        )));
    }
    let set = |variable: &str| env(variable).is_some_and(|value| !value.trim().is_empty());
    let name = if set("ANTHROPIC_API_KEY") || set("ANTHROPIC_BASE_URL") {
        "anthropic"
    } else if set("OPENAI_API_KEY") || set("OPENAI_BASE_URL") {
        "openai"
    } else {
        return Err(ModelChoiceError(
            "no model provider: set ANTHROPIC_API_KEY or OPENAI_API_KEY (OPENAI_BASE_URL for a \
             local OpenAI-compatible server), pass --provider, or configure [providers.NAME] in \
             .toolhost/config.toml"
                .to_owned(),
        ));
    };
    conventional(name, env).ok_or_else(|| ModelChoiceError(format!("no provider '{name}'")))
}

/// Whether `name` is a provider `choose_provider` knows: configured, or conventional.
pub fn is_provider(config: &Config, name: &str) -> bool {
    config.providers.contains_key(name) || CONVENTIONAL_PROVIDERS.contains(&name)
}

/// `openai` and `anthropic` from their conventional variables.
fn conventional(name: &str, env: &dyn Fn(&str) -> Option<String>) -> Option<ProviderEntry> {
    let (api, url_variable, key_variable, default_url, model) = match name {
        "openai" => (
            Api::OpenAiChat,
            "OPENAI_BASE_URL",
            "OPENAI_API_KEY",
            "https://api.openai.com/v1",
            OPENAI_DEFAULT_MODEL,
        ),
        "anthropic" => (
            Api::Anthropic,
            "ANTHROPIC_BASE_URL",
            "ANTHROPIC_API_KEY",
            "https://api.anthropic.com",
            ANTHROPIC_DEFAULT_MODEL,
        ),
        _ => return None,
    };
    let base_url = env(url_variable).filter(|url| !url.trim().is_empty());
    Some(ProviderEntry {
        name: name.to_owned(),
        api,
        origin: match &base_url {
            Some(_) => format!("the environment ({url_variable}, {key_variable})"),
            None => format!("the environment ({key_variable})"),
        },
        base_url: Some(base_url.unwrap_or_else(|| default_url.to_owned())),
        api_key_env: Some(key_variable.to_owned()),
        model: Some(model.to_owned()),
        headers: BTreeMap::new(),
        context_window: None,
        max_output_tokens: None,
        timeouts: ProviderTimeouts::default(),
        max_retries: None,
        prompt_cache: None,
        native_tool_search: None,
        temperature: None,
        pricing: None,
    })
}

/// A key is required by the public APIs; a local server (any other URL) may do without.
fn needs_key(entry: &ProviderEntry) -> bool {
    entry.base_url.as_deref().is_none_or(|url| {
        url.starts_with("https://api.openai.com") || url.starts_with("https://api.anthropic.com")
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_owned())
        }
    }

    #[test]
    fn no_configuration_and_no_variables_says_what_to_set() {
        let error =
            choose_provider(&Config::default(), &ModelFlags::default(), &env_of(&[])).unwrap_err();
        assert!(error.to_string().contains("OPENAI_API_KEY"), "{error}");
    }

    #[test]
    fn openai_variables_give_an_openai_chat_provider() {
        let chosen = choose_provider(
            &Config::default(),
            &ModelFlags {
                model: Some("qwen".into()),
                ..ModelFlags::default()
            },
            &env_of(&[("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")]),
        )
        .unwrap();
        assert_eq!(chosen.entry.api, Api::OpenAiChat);
        assert_eq!(
            chosen.entry.base_url.as_deref(),
            Some("http://127.0.0.1:9/v1")
        );
        assert_eq!(chosen.api_key, None);
        assert_eq!(chosen.model, "qwen");
    }

    #[test]
    fn the_public_api_without_its_key_is_an_error_naming_the_variable() {
        let error = choose_provider(
            &Config::default(),
            &ModelFlags {
                provider: Some("anthropic".into()),
                ..ModelFlags::default()
            },
            &env_of(&[]),
        )
        .unwrap_err();
        assert!(error.to_string().contains("ANTHROPIC_API_KEY"), "{error}");
    }

    #[test]
    fn a_base_url_without_a_scheme_names_the_variable() {
        let error = choose_provider(
            &Config::default(),
            &ModelFlags::default(),
            &env_of(&[("OPENAI_BASE_URL", "localhost:8080/v1")]),
        )
        .unwrap_err();
        assert!(error.to_string().contains("OPENAI_BASE_URL"), "{error}");
        assert!(error.to_string().contains("scheme"), "{error}");
    }

    #[test]
    fn an_unknown_provider_lists_the_known_ones() {
        let error = choose_provider(
            &Config::default(),
            &ModelFlags {
                provider: Some("opneai".into()),
                ..ModelFlags::default()
            },
            &env_of(&[]),
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "unknown provider 'opneai' (--provider): the providers are openai, anthropic \
             (configure others as [providers.NAME] in .toolhost/config.toml)"
        );
    }
}

//! The one way toolhost authenticates: an API key in an environment variable the provider's
//! `api_key_env` names. When it is not set, `initialize` offers the method (so the editor can
//! tell the user what to set) and `session/new` answers `auth_required` instead of failing.

use agent_client_protocol::Error;
use agent_client_protocol::v1::schema::{AuthMethod, AuthMethodAgent};
use serde_json::json;
use toolhost_config::Config;
use toolhost_config::model_choice::{ModelFlags, choose_provider};

/// A provider whose key is not in the environment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MissingKey {
    /// The provider's name.
    pub provider: String,
    /// The variable that must hold its key.
    pub variable: String,
}

impl MissingKey {
    /// The provider `config` and `flags` choose, when the only thing wrong with it is that its
    /// key is not set.
    pub fn of(config: &Config, flags: &ModelFlags) -> Option<Self> {
        let env = |name: &str| std::env::var(name).ok();
        if choose_provider(config, flags, &env).is_ok() {
            return None;
        }
        // The same choice with every key set (URLs stay as they are): what it picks then is
        // the provider that lacks nothing but its key.
        let with_keys =
            |name: &str| env(name).or_else(|| (!name.ends_with("_URL")).then(|| "set".to_owned()));
        let chosen = choose_provider(config, flags, &with_keys).ok()?;
        let variable = chosen.entry.api_key_env?;
        env(&variable)
            .filter(|key| !key.trim().is_empty())
            .is_none()
            .then_some(Self {
                provider: chosen.entry.name,
                variable,
            })
    }

    /// The method `initialize` lists for it.
    pub fn method(&self) -> AuthMethod {
        AuthMethod::Agent(
            AuthMethodAgent::new(self.method_id(), format!("Set {}", self.variable)).description(
                format!(
                    "toolhost reads the API key of the provider '{}' from the environment \
                     variable {}: set it in the editor's settings for this agent (its `env`) \
                     and restart the agent",
                    self.provider, self.variable
                ),
            ),
        )
    }

    /// The method's id.
    pub fn method_id(&self) -> String {
        format!("env:{}", self.variable)
    }

    /// `-32000 Authentication required`, naming the variable.
    pub fn error(&self) -> Error {
        Error::auth_required().data(json!({
            "message": format!(
                "the provider '{}' needs an API key: set the environment variable {} for \
                 toolhost acp",
                self.provider, self.variable
            ),
            "provider": self.provider,
            "variable": self.variable,
            "authMethods": [self.method_id()],
        }))
    }
}

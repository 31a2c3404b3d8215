//! What `toolhost acp` was started with: the configuration's sources, the agent and the model
//! flags. Each session loads the configuration of its own workspace (the editor's `cwd`).

use std::path::PathBuf;

use toolhost_catalog::load_config;
use toolhost_config::model_choice::ModelFlags;
use toolhost_config::{Config, ConfigError, ConfigSources, MAIN_AGENT, Overrides};

/// The command line of `toolhost acp`.
#[derive(Clone, Debug)]
pub struct AcpLaunch {
    /// The folder `toolhost acp` started in (`--workspace`): whose configuration decides the
    /// provider `initialize` reports on before any session names a workspace.
    pub workspace: PathBuf,
    /// The home folder (`$HOME`).
    pub home: Option<PathBuf>,
    /// `--config FILE`.
    pub extra_file: Option<PathBuf>,
    /// `--mode`, `--allow`, `--deny`.
    pub overrides: Overrides,
    /// `--agent NAME`.
    pub agent: String,
    /// `--provider` and `--model`.
    pub model: ModelFlags,
}

impl AcpLaunch {
    /// Started in `workspace` with no flags, `$HOME` as the home folder.
    pub fn new(workspace: PathBuf) -> Self {
        Self {
            workspace,
            home: std::env::var_os("HOME").map(PathBuf::from),
            extra_file: None,
            overrides: Overrides::default(),
            agent: MAIN_AGENT.to_owned(),
            model: ModelFlags::default(),
        }
    }

    /// The configuration of `workspace`, as every command loads it: `--agent NAME` runs in its
    /// definition's `permissionMode` unless `--mode` names one.
    pub fn config_for(&self, workspace: PathBuf) -> Result<Config, ConfigError> {
        let mut config = load_config(&ConfigSources {
            home: self.home.clone(),
            workspace,
            extra_file: self.extra_file.clone(),
            overrides: self.overrides.clone(),
        })?;
        for warning in config.warnings() {
            tracing::warn!("{warning}");
        }
        toolhost_mcp::client::oauth::store::choose(config.mcp_oauth_store);
        if self.overrides.mode.is_none()
            && let Ok(agent) = config.agent(&self.agent)
            && let Some(mode) = agent.permission_mode
        {
            config.permissions.mode = mode;
        }
        Ok(config)
    }
}

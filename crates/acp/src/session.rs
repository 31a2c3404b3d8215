//! One ACP session: a [`ChatSession`] in the editor's workspace, with its approver, its update
//! translator and the token that cancels its running turn.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AvailableCommand, ClientCapabilities, CurrentModeUpdate, McpServer, SessionConfigOption,
    SessionConfigOptionValue, SessionNotification, SessionUpdate, StopReason,
};
use agent_client_protocol::{Client, Error};
use tokio_util::sync::CancellationToken;
use toolhost_agent::Permissions;
use toolhost_agent::agent_loop::{AgentEvent, AgentEventSink, RunOutcome, RunReport};
use toolhost_agent::assembly::AgentSetup;
use toolhost_agent::chat::ChatSession;
use toolhost_agent::session_record::{SessionChoice, SessionOpening};
use toolhost_catalog::skills::SkillSummary;
use toolhost_catalog::slash_commands::SlashCommands;
use toolhost_config::Config;
use toolhost_config::model_choice::{ModelFlags, choose_provider};
use toolhost_core::conversation::{Message, StopReason as ModelStop};
use toolhost_core::permission::{PermissionMode, PermissionPolicy};
use toolhost_core::{ContentBlock, SessionEvent, ToolRegistry};
use toolhost_session::views;
use toolhost_tools::editor_terminal::SessionTerminal;
use toolhost_tools::fs::SessionEditor;

use crate::approval::EditorApprover;
use crate::auth::MissingKey;
use crate::commands::{Invocation, available, invocation};
use crate::editor_files::ClientFiles;
use crate::editor_servers::join_editor_servers;
use crate::launch::AcpLaunch;
use crate::models::{ModelChoice, chosen, model_choices, model_option};
use crate::modes::mode_id;
use crate::prompt::leading_text;
use crate::requests::{internal, invalid_params, unknown_session};
use crate::terminals::ClientTerminals;
use crate::updates::UpdateTranslator;

/// What a session is opened with.
pub struct SessionRequest<'a> {
    /// How `toolhost acp` was started.
    pub launch: &'a AcpLaunch,
    /// The editor.
    pub connection: ConnectionTo<Client>,
    /// What the editor said it offers in `initialize`.
    pub client: &'a ClientCapabilities,
    /// The method (for errors).
    pub method: &'a str,
    /// The workspace.
    pub cwd: PathBuf,
    /// The editor's MCP servers.
    pub mcp_servers: &'a [McpServer],
    /// The stored session to go on with (`session/load`); `None`: a new one.
    pub resume: Option<String>,
}

/// A session open in this process.
pub struct AcpSession {
    /// Its id: the store's.
    pub id: String,
    chat: tokio::sync::Mutex<ChatSession>,
    connection: ConnectionTo<Client>,
    policy: Arc<PermissionPolicy>,
    translator: Arc<UpdateTranslator>,
    turn: Mutex<Option<CancellationToken>>,
    /// A mode set while a turn ran: its tools are offered from the next turn.
    pending_mode: Mutex<Option<PermissionMode>>,
    /// The workspace's configuration, which judges a model chosen in the editor.
    config: Config,
    /// The models the editor offers, and the one chosen.
    models: Vec<ModelChoice>,
    current_model: Mutex<ModelChoice>,
    /// A model chosen while a turn ran: asked from the next turn.
    pending_model: Mutex<Option<ModelChoice>>,
    mcp: Arc<toolhost_mcp::McpClients>,
    /// The slash commands the editor offers after `/` (with the skills and MCP prompts).
    commands: Arc<SlashCommands>,
    /// See [`Self::commands`].
    skills: Vec<SkillSummary>,
}

impl AcpSession {
    /// Opens the session `request` asks for, and the conversation it holds so far.
    pub async fn open(request: SessionRequest<'_>) -> Result<(Arc<Self>, Vec<Message>), Error> {
        let SessionRequest {
            launch,
            connection,
            client,
            method,
            cwd,
            mcp_servers,
            resume,
        } = request;
        if !cwd.is_absolute() || !cwd.is_dir() {
            return Err(invalid_params(
                format!(
                    "{method}: cwd: '{}' is not an absolute path to a folder",
                    cwd.display()
                ),
                "cwd",
            ));
        }
        let mut config = launch.config_for(cwd.clone()).map_err(|error| {
            internal(format!("the configuration of {}: {error}", cwd.display()))
        })?;
        let mut agent = config.agent(&launch.agent).map_err(internal)?;
        join_editor_servers(&mut config.mcp_servers, &mut agent.mcp_servers, mcp_servers);
        // The editor's stdio servers get Claude Code's settings `env` as the configured ones
        // did (a server's own variables win; the others already have it).
        config.spread_settings_env();
        let store_path = views::store_path(&config, launch.home.as_deref())
            .map_err(|error| tracing::warn!("this session is not kept: {error}"))
            .ok();
        let choice = match &resume {
            Some(id) => SessionChoice::Id(id.clone()),
            None => SessionChoice::New,
        };
        let opening = match &store_path {
            Some(path) => {
                Some(
                    SessionOpening::open(path, &choice, &cwd).map_err(|error| match &resume {
                        Some(id) if error.is_usage_error() => unknown_session(id),
                        _ => internal(error),
                    })?,
                )
            }
            None if resume.is_some() => {
                return Err(internal("no session store: set [sessions] path or $HOME"));
            }
            None => None,
        };
        let flags = match opening.as_ref().and_then(SessionOpening::model) {
            Some((provider, model))
                if launch.model.provider.is_none() && launch.model.model.is_none() =>
            {
                ModelFlags {
                    provider: Some(provider.clone()),
                    model: Some(model.clone()),
                }
            }
            _ => launch.model.clone(),
        };
        // A loaded session goes on in the mode it was last in, unless `--mode` names one.
        if launch.overrides.mode.is_none()
            && let Some(mode) = opening.as_ref().and_then(SessionOpening::mode)
        {
            config.permissions.mode = mode;
        }
        if let Some(missing) = MissingKey::of(&config, &flags) {
            return Err(missing.error());
        }
        let approver = Arc::new(EditorApprover::new(connection.clone(), cwd.clone()));
        let permissions = Permissions::from_config(&config, &cwd, Arc::clone(&approver) as _)
            .map_err(internal)?;
        let policy = Arc::clone(permissions.policy());
        let assembled = AgentSetup::new(&cwd, &config, &agent, &permissions)
            .home(launch.home.clone())
            .model(flags)
            .assemble()
            .await
            .map_err(internal)?;
        let mcp = Arc::clone(&assembled.tools.mcp);
        let commands = Arc::clone(&assembled.tools.commands);
        let skills = assembled.tools.skills.summaries();
        let kept = config.clone();
        let mut chat = ChatSession::new(assembled, permissions, config, &cwd, store_path, opening)
            .map_err(internal)?;
        let (provider, model) = chat.model();
        let current_model = ModelChoice::new(provider, model);
        let models = model_choices(&kept, &current_model);
        chat.open_now().map_err(internal)?;
        let id = chat.session_id().unwrap_or_else(unstored_id);
        let translator = Arc::new(UpdateTranslator::new(Arc::clone(chat.agent().registry())));
        approver.opened(&id, Arc::clone(&translator));
        if let Some(files) = ClientFiles::new(connection.clone(), &id, &client.fs) {
            chat.agent()
                .session()
                .state
                .get_or_default::<SessionEditor>()
                .set(Arc::new(files));
        }
        // The editor's terminal runs outside toolhost's sandbox: only when the configuration
        // asks for it.
        if client.terminal && kept.shell.editor_terminal == Some(true) {
            chat.agent()
                .session()
                .state
                .get_or_default::<SessionTerminal>()
                .set(Arc::new(ClientTerminals::new(connection.clone(), &id)));
        }
        chat.agent().session_event(SessionEvent::Start).await;
        let messages = chat.messages().to_vec();
        Ok((
            Arc::new(Self {
                id,
                chat: tokio::sync::Mutex::new(chat),
                connection,
                policy,
                translator,
                turn: Mutex::new(None),
                pending_mode: Mutex::new(None),
                config: kept,
                models,
                current_model: Mutex::new(current_model),
                pending_model: Mutex::new(None),
                mcp,
                commands,
                skills,
            }),
            messages,
        ))
    }

    /// What the editor offers after `/`: the slash commands, the skills and the MCP servers'
    /// prompts.
    pub async fn available_commands(&self) -> Vec<AvailableCommand> {
        available(&self.commands, &self.skills, &self.mcp.prompts().await)
    }

    /// The permission mode.
    pub fn mode(&self) -> PermissionMode {
        self.policy.mode()
    }

    /// The tools the session offers now (for the kinds and files of replayed calls).
    pub async fn registry(&self) -> Arc<ToolRegistry> {
        Arc::clone(self.chat.lock().await.agent().registry())
    }

    /// Sends `update` to the editor.
    pub fn notify(&self, update: SessionUpdate) {
        if let Err(error) = self
            .connection
            .send_notification(SessionNotification::new(self.id.clone(), update))
        {
            tracing::debug!("the editor is gone: {error}");
        }
    }

    /// Runs one turn on `content`: a slash command or skill when its text starts with one.
    pub async fn prompt(self: &Arc<Self>, content: Vec<ContentBlock>) -> Result<StopReason, Error> {
        let cancel = CancellationToken::new();
        {
            let mut turn = self.turn.lock().unwrap_or_else(PoisonError::into_inner);
            if turn.is_some() {
                return Err(Error::invalid_request().data(format!(
                    "session {} is answering a prompt already: wait for it, or send session/cancel",
                    self.id
                )));
            }
            *turn = Some(cancel.clone());
        }
        let ran = self.run_turn(content, cancel).await;
        *self.turn.lock().unwrap_or_else(PoisonError::into_inner) = None;
        stop_reason(&ran?)
    }

    /// The turn itself; [`Self::prompt`] clears the running turn however it ends.
    async fn run_turn(
        self: &Arc<Self>,
        content: Vec<ContentBlock>,
        cancel: CancellationToken,
    ) -> Result<RunReport, Error> {
        let mut chat = self.chat.lock().await;
        if let Some(mode) = self
            .pending_mode
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            self.switch_mode(&mut chat, mode)?;
        }
        if let Some(choice) = self
            .pending_model
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            chat.switch_model(&choice.words()).map_err(internal)?;
        }
        let session = Arc::clone(self);
        let events: AgentEventSink = Arc::new(move |event: AgentEvent| {
            for update in session.translator.updates(&event) {
                session.notify(update);
            }
        });
        match leading_text(&content).and_then(|text| invocation(text, &self.commands, &self.skills))
        {
            Some(Invocation::Command) => {
                let line = leading_text(&content).unwrap_or_default().trim().to_owned();
                match chat.run_command(&line, events, cancel).await {
                    Some(ran) => ran.map_err(internal),
                    None => Err(internal(format!("{line}: not a command"))),
                }
            }
            Some(Invocation::Skill(message)) => {
                let mut content = content;
                content[0] = ContentBlock::text(message);
                chat.send_content(content, events, cancel)
                    .await
                    .map_err(internal)
            }
            None => chat
                .send_content(content, events, cancel)
                .await
                .map_err(internal),
        }
    }

    /// `session/cancel`: the running turn stops (its model request and its tools' process
    /// trees); nothing when none runs.
    pub fn cancel(&self) {
        if let Some(turn) = self
            .turn
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
        {
            turn.cancel();
        }
    }

    /// `session/set_mode`: approvals follow at once; the tools the mode offers from the next
    /// turn (at once when no turn runs).
    pub fn set_mode(&self, mode: PermissionMode) -> Result<(), Error> {
        self.policy.set_mode(mode);
        match self.chat.try_lock() {
            Ok(mut chat) => self.switch_mode(&mut chat, mode)?,
            Err(_) => {
                *self
                    .pending_mode
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner) = Some(mode);
            }
        }
        self.notify(SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(
            mode_id(mode),
        )));
        Ok(())
    }

    /// The session's configuration options: the model choice.
    pub fn config_options(&self) -> Vec<SessionConfigOption> {
        let current = self
            .current_model
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        vec![model_option(&self.models, &current)]
    }

    /// `session/set_config_option`: the model chosen is asked from the next request (from the
    /// next turn when a turn runs). A model whose provider lacks its key is refused at once.
    pub fn set_config_option(
        &self,
        config_id: &str,
        value: &SessionConfigOptionValue,
    ) -> Result<Vec<SessionConfigOption>, Error> {
        let choice = chosen(config_id, value, &self.models)?;
        if let Some(missing) = MissingKey::of(&self.config, &choice.flags()) {
            return Err(missing.error());
        }
        let refused = |error: String| {
            invalid_params(
                format!("session/set_config_option: value: {error}"),
                "value",
            )
        };
        choose_provider(&self.config, &choice.flags(), &|name| {
            std::env::var(name).ok()
        })
        .map_err(|error| refused(error.to_string()))?;
        match self.chat.try_lock() {
            Ok(mut chat) => chat.switch_model(&choice.words()).map_err(refused)?,
            Err(_) => {
                *self
                    .pending_model
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner) = Some(choice.clone());
            }
        }
        *self
            .current_model
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = choice;
        Ok(self.config_options())
    }

    fn switch_mode(&self, chat: &mut ChatSession, mode: PermissionMode) -> Result<(), Error> {
        chat.switch_mode(mode).map_err(internal)?;
        self.translator
            .set_registry(Arc::clone(chat.agent().registry()));
        Ok(())
    }

    /// Ends the session: its sub-agents, its hooks' `SessionEnd`, its MCP servers.
    pub async fn close(&self) {
        self.cancel();
        let chat = self.chat.lock().await;
        chat.subagents().shutdown().await;
        chat.agent().session_event(SessionEvent::Shutdown).await;
        self.mcp.shutdown().await;
    }
}

/// How a turn ended, as ACP says it; a provider that failed for good is an error.
fn stop_reason(report: &RunReport) -> Result<StopReason, Error> {
    let last_stop = report
        .messages
        .iter()
        .rev()
        .find_map(|message| match message {
            Message::Assistant(answer) => Some(answer.stop_reason.clone()),
            _ => None,
        });
    match &report.outcome {
        RunOutcome::Cancelled => Ok(StopReason::Cancelled),
        RunOutcome::MaxIterations { .. } => Ok(StopReason::MaxTurnRequests),
        RunOutcome::Failed { error } => {
            Err(internal(format!("the model provider failed: {error}")))
        }
        RunOutcome::Answered { .. } | RunOutcome::Stopped { .. } => Ok(match last_stop {
            Some(ModelStop::MaxTokens) => StopReason::MaxTokens,
            Some(ModelStop::Refusal) => StopReason::Refusal,
            _ => StopReason::EndTurn,
        }),
    }
}

/// An id for a session the store cannot keep (no store): unique in this process.
fn unstored_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    format!("unstored-{}-{nanos:x}", std::process::id())
}

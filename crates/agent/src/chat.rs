//! An interactive session (`toolhost chat`), independent of how it is drawn: the conversation,
//! its session in the store, and the chat's own slash commands. The terminal front end reads
//! lines, hands them here, and draws the loop's events.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolhost_core::ToolRegistry;
use toolhost_core::conversation::Message;
use toolhost_core::permission::PermissionMode;
use toolhost_core::{CallOptions, ContentBlock, SessionEvent};
use toolhost_session::{EntryId, SessionStore, StoreError};

use crate::agent_loop::compaction::Compacted;
use crate::agent_loop::{AgentEventSink, AgentLoop, RunReport, Transcript};
use crate::assembly::AssembledAgent;
use crate::permissions::Permissions;
use crate::provider_connect::connect_provider;
use crate::session_record::{
    BranchTip, RecordedSession, SessionChoice, SessionChoiceError, SessionOpening, turn_context,
};
use crate::system_prompt::SystemPromptInputs;
use toolhost_catalog::slash_commands::SlashCommands;
use toolhost_config::Config;
use toolhost_config::model_choice::{ChosenProvider, ModelFlags, choose_provider, is_provider};
use toolhost_mcp_catalog::upstream_prompts::{expand_mcp_prompt_line, mcp_prompt_commands};
use toolhost_script::{ExtensionSession, ExtensionStore, Prompted};

/// The chat's own commands; any other `/name` is not one of them.
pub const CHAT_COMMANDS: [(&str, &str); 10] = [
    ("/help", "this list"),
    (
        "/model [PROVIDER] [MODEL]",
        "show the model, or switch to another model, provider, or both",
    ),
    (
        "/mode [MODE]",
        "show the permission mode, or switch (default, acceptEdits, plan, bypassPermissions)",
    ),
    (
        "/compact [INSTRUCTIONS]",
        "summarise the conversation so far into one message",
    ),
    (
        "/branch [N]",
        "list your messages, or go back to before message N (the old branch stays)",
    ),
    (
        "/tree [N]",
        "list the session's branches, or go on with branch N",
    ),
    ("/sessions", "the sessions of this workspace"),
    (
        "/resume ID",
        "switch to session ID (a unique prefix will do)",
    ),
    ("/clear", "start a new session"),
    ("/exit", "leave (Ctrl-D does too)"),
];

/// A line the user typed, read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChatInput {
    /// A message for the model.
    Message(String),
    /// `/help`.
    Help,
    /// `/model [PROVIDER] [MODEL]`.
    Model(Option<String>),
    /// `/mode [MODE]`.
    Mode(Option<String>),
    /// `/compact [INSTRUCTIONS]`.
    Compact(Option<String>),
    /// `/branch [N]`.
    Branch(Option<String>),
    /// `/tree [N]`.
    Tree(Option<String>),
    /// `/sessions`.
    Sessions,
    /// `/resume ID`.
    Resume(Option<String>),
    /// `/clear`.
    Clear,
    /// `/exit`.
    Exit,
    /// `/name` that is none of the chat's commands.
    Unknown(String),
    /// Nothing (a blank line).
    Empty,
}

impl ChatInput {
    /// Reads one line.
    pub fn parse(line: &str) -> Self {
        let line = line.trim();
        if line.is_empty() {
            return Self::Empty;
        }
        let Some(command) = line.strip_prefix('/') else {
            return Self::Message(line.to_owned());
        };
        let (name, rest) =
            command
                .split_once(char::is_whitespace)
                .map_or((command, None), |(name, rest)| {
                    let rest = rest.trim();
                    (name, (!rest.is_empty()).then(|| rest.to_owned()))
                });
        match name {
            "help" | "?" => Self::Help,
            "model" => Self::Model(rest),
            "mode" => Self::Mode(rest),
            "compact" => Self::Compact(rest),
            "branch" => Self::Branch(rest),
            "tree" => Self::Tree(rest),
            "sessions" => Self::Sessions,
            "resume" => Self::Resume(rest),
            "clear" | "new" => Self::Clear,
            "exit" | "quit" => Self::Exit,
            _ => Self::Unknown(name.to_owned()),
        }
    }
}

/// The chat's state between turns.
pub struct ChatSession {
    agent: AgentLoop,
    offered: Arc<ToolRegistry>,
    permissions: Permissions,
    provider: ChosenProvider,
    prompt: SystemPromptInputs,
    config: Config,
    workspace: PathBuf,
    store_path: Option<PathBuf>,
    /// Before the first message of a new session: the store, opened.
    opening: Option<SessionOpening>,
    recorded: Option<Arc<RecordedSession>>,
    /// A session opened before its first message ([`Self::open_now`]): titled after it.
    untitled: bool,
    messages: Vec<Message>,
    commands: Arc<SlashCommands>,
    /// The MCP servers, whose prompts are `/mcp__<server>__<prompt>` commands.
    mcp: Arc<toolhost_mcp::McpClients>,
    subagents: crate::subagents::SubAgents,
    extensions: Arc<ExtensionSession>,
}

impl ChatSession {
    /// A chat with `assembled`, kept in the store at `store_path` (none: nothing is kept),
    /// going on with the session `opening` found there (opened before the agent was
    /// assembled, so that a resumed session's model is the one asked). A resumed session's
    /// conversation is loaded at once; a new one is created with its first message.
    pub fn new(
        assembled: AssembledAgent,
        permissions: Permissions,
        config: Config,
        workspace: &Path,
        store_path: Option<PathBuf>,
        opening: Option<SessionOpening>,
    ) -> Result<Self, StoreError> {
        let resumed = opening.as_ref().is_some_and(SessionOpening::is_resumed);
        let mut agent = assembled.agent;
        // A person at a prompt wants it back when the model has answered: a background
        // child's result joins the conversation at the next turn instead (as in Claude
        // Code), and the front end shows the child's progress meanwhile.
        agent.set_waits_for_inbox(false);
        let mut chat = Self {
            commands: Arc::clone(&assembled.tools.commands),
            mcp: Arc::clone(&assembled.tools.mcp),
            subagents: assembled.tools.subagents.clone(),
            extensions: Arc::clone(&assembled.tools.extensions),
            agent,
            offered: assembled.offered,
            permissions,
            provider: assembled.provider,
            prompt: assembled.prompt,
            config,
            workspace: workspace.to_path_buf(),
            store_path,
            opening,
            recorded: None,
            untitled: false,
            messages: Vec::new(),
        };
        if resumed {
            chat.start_session("")?;
        }
        Ok(chat)
    }

    /// The loop (its provider, tools and prompt).
    pub fn agent(&self) -> &AgentLoop {
        &self.agent
    }

    /// The conversation so far.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The session's id, once it has one.
    pub fn session_id(&self) -> Option<String> {
        self.recorded
            .as_ref()
            .map(|recorded| recorded.id().to_string())
    }

    /// The sub-agents of the chat: stop them ([`crate::subagents::SubAgents::shutdown`])
    /// before the process exits.
    pub fn subagents(&self) -> &crate::subagents::SubAgents {
        &self.subagents
    }

    /// The provider's name and the model.
    pub fn model(&self) -> (&str, &str) {
        (&self.provider.entry.name, &self.provider.model)
    }

    /// The permission mode.
    pub fn mode(&self) -> PermissionMode {
        self.permissions.mode()
    }

    /// Creates the session in the store now, before its first message, so that it has an
    /// id to give (an editor's `session/new` answers with it); the first message titles it.
    /// A resumed session is open already.
    pub fn open_now(&mut self) -> Result<(), StoreError> {
        if self.recorded.is_none() && self.opening.is_some() {
            self.start_session("")?;
            self.untitled = true;
        }
        Ok(())
    }

    /// Sends `text` and runs the turn to its end.
    pub async fn send(
        &mut self,
        text: &str,
        events: AgentEventSink,
        cancel: CancellationToken,
    ) -> Result<RunReport, StoreError> {
        self.send_content(vec![ContentBlock::text(text)], events, cancel)
            .await
    }

    /// Sends a message of text and images and runs the turn to its end.
    pub async fn send_content(
        &mut self,
        content: Vec<ContentBlock>,
        events: AgentEventSink,
        cancel: CancellationToken,
    ) -> Result<RunReport, StoreError> {
        let text = content
            .iter()
            .filter_map(ContentBlock::as_text)
            .collect::<Vec<_>>()
            .join("\n");
        if self.recorded.is_none() && self.opening.is_some() {
            self.start_session(&text)?;
        }
        if std::mem::take(&mut self.untitled)
            && let Some(recorded) = &self.recorded
        {
            recorded.title_after(&text)?;
        }
        // pi extensions: started with the session, then the text through their `input`.
        let resumed = !self.messages.is_empty();
        let id = self.session_id().unwrap_or_default();
        self.extensions.set_cancel(cancel.clone());
        self.extensions
            .start_once(&id, &self.provider.model, self.agent.registry(), resumed)
            .await;
        let prompted = match self.extensions.prompt(&text, "interactive").await {
            Prompted::Send(prompted) => prompted,
            Prompted::Done => return Ok(RunReport::idle(&self.messages, None)),
            Prompted::Failed(error) => return Ok(RunReport::idle(&self.messages, Some(error))),
        };
        // A rewritten text replaces the text blocks; images and resources stay as they came.
        let content = if prompted == text {
            content
        } else {
            std::iter::once(ContentBlock::text(prompted))
                .chain(
                    content
                        .into_iter()
                        .filter(|block| block.as_text().is_none()),
                )
                .collect()
        };
        let message = Message::User { content };
        if let Some(recorded) = &self.recorded {
            recorded.record_message(&message)?;
        }
        let mut messages = self.messages.clone();
        messages.push(message);
        // Sub-agents' progress reaches the same reader, tagged with their run.
        self.subagents.set_events(Arc::clone(&events));
        let report = self.agent.run(messages, events, cancel).await;
        self.messages = report.messages.clone();
        if let Some(recorded) = &self.recorded {
            recorded.finish(&report.outcome)?;
        }
        Ok(report)
    }

    /// A line `/name args` that runs a slash command (`.claude/commands/name.md`, …): its
    /// expansion (files read and commands run through the tools' rules) is sent as the turn's
    /// message, offered only the command's `allowed-tools` and asked of its `model` for that
    /// turn. `None` when no command has that name.
    pub async fn run_command(
        &mut self,
        line: &str,
        events: AgentEventSink,
        cancel: CancellationToken,
    ) -> Option<Result<RunReport, String>> {
        // An extension's command (pi's registerCommand) first: what it sends is the turn.
        if self
            .extensions
            .extensions()
            .commands()
            .iter()
            .any(|command| {
                line.trim_start()
                    .strip_prefix('/')
                    .and_then(|rest| rest.split_whitespace().next())
                    == Some(command.name.as_str())
            })
        {
            return Some(
                self.send(line, events, cancel)
                    .await
                    .map_err(|error| error.to_string()),
            );
        }
        let registry = Arc::clone(self.agent.registry());
        // The files the expansion reads count as read by the conversation it joins.
        let options = CallOptions {
            cancel: cancel.child_token(),
            session: Arc::clone(self.agent.session()),
            ..CallOptions::default()
        };
        let (mcp, policy) = (Arc::clone(&self.mcp), Arc::clone(self.permissions.policy()));
        if let Some(expanded) = expand_mcp_prompt_line(line, &mcp, &policy).await {
            return Some(match expanded {
                Ok(text) => self
                    .send(&text, events, cancel)
                    .await
                    .map_err(|error| error.to_string()),
                Err(error) => Err(error),
            });
        }
        let turn = match self.commands.run_line(line, &registry, options).await? {
            Ok(turn) => turn,
            Err(error) => return Some(Err(error.to_string())),
        };
        let previous_model = self.provider.model.clone();
        if let Some(model) = &turn.model
            && let Err(error) = self.switch_model(model)
        {
            return Some(Err(error));
        }
        self.agent.set_registry(Arc::new(turn.tools(&registry)));
        let report = self.send(&turn.prompt, events, cancel).await;
        self.agent.set_registry(registry);
        if turn.model.is_some()
            && let Err(error) = self.switch_model(&previous_model)
        {
            return Some(Err(error));
        }
        Some(report.map_err(|error| error.to_string()))
    }

    /// The MCP servers' prompts as `/mcp__<server>__<prompt> [ARGS]` usage lines, each with
    /// its description (for `/help`).
    /// (Async without holding the session: the chat's state is not `Sync`.)
    pub fn mcp_prompt_commands(&self) -> impl Future<Output = Vec<(String, String)>> + use<> {
        let mcp = Arc::clone(&self.mcp);
        async move { mcp_prompt_commands(&mcp).await }
    }

    /// Tells the pi extensions the model changed from `previous` (`(provider, model)`) to the
    /// current one: `ctx.model`, then pi's `model_select` (`source: "set"`).
    /// (Async without holding the session: the chat's state is not `Sync`.)
    pub fn tell_model_select(
        &self,
        previous: (String, String),
    ) -> impl Future<Output = ()> + use<> {
        let extensions = Arc::clone(&self.extensions);
        let (provider, model) = (
            self.provider.entry.name.clone(),
            self.provider.model.clone(),
        );
        async move {
            let current = json!({ "provider": provider, "id": model, "name": model });
            extensions
                .extensions()
                .set_session(&json!({ "model": current }))
                .await;
            let payload = json!({
                "model": current,
                "previousModel": { "provider": previous.0, "id": previous.1, "name": previous.1 },
                "source": "set",
            });
            extensions.notify("model_select", &payload).await;
        }
    }

    /// `/model [PROVIDER] [MODEL]`: another model, provider, or both, for the turns to come
    /// (recorded, so a resume goes on with it). WebSearch keeps the provider the chat began
    /// with.
    pub fn switch_model(&mut self, choice: &str) -> Result<(), String> {
        let flags = self.model_flags(choice)?;
        let chosen = choose_provider(&self.config, &flags, &|name| std::env::var(name).ok())
            .map_err(|error| error.to_string())?;
        let provider = connect_provider(&chosen).map_err(|error| error.to_string())?;
        self.agent.set_provider(provider);
        self.subagents.set_provider(&chosen);
        if let Some(recorded) = &self.recorded {
            recorded
                .record_model_change(&chosen.entry.name, &chosen.model)
                .map_err(|error| error.to_string())?;
        }
        self.provider = chosen;
        Ok(())
    }

    /// What `/model` names: `PROVIDER MODEL`; a provider alone (with its configured model);
    /// or a model of the provider in use.
    fn model_flags(&self, choice: &str) -> Result<ModelFlags, String> {
        let words: Vec<&str> = choice.split_whitespace().collect();
        match words[..] {
            [provider, model] => Ok(ModelFlags {
                provider: Some(provider.to_owned()),
                model: Some(model.to_owned()),
            }),
            [name] if name != self.provider.entry.name && is_provider(&self.config, name) => {
                Ok(ModelFlags {
                    provider: Some(name.to_owned()),
                    model: self
                        .config
                        .providers
                        .get(name)
                        .and_then(|entry| entry.model.clone()),
                })
            }
            [model] => Ok(ModelFlags {
                provider: Some(self.provider.entry.name.clone()),
                model: Some(model.to_owned()),
            }),
            _ => Err(format!(
                "/model takes a model, a provider, or a provider and a model, not '{choice}'"
            )),
        }
    }

    /// `/mode MODE`: the permission mode for the calls to come, and the tools it offers
    /// (plan mode: the read-only ones) from the next turn.
    pub fn switch_mode(&mut self, mode: PermissionMode) -> Result<(), StoreError> {
        self.permissions.policy().set_mode(mode);
        self.agent
            .set_registry(Arc::new(self.offered.for_mode(mode)));
        if let Some(recorded) = &self.recorded {
            recorded.record_mode_change(mode)?;
        }
        Ok(())
    }

    /// `/compact [INSTRUCTIONS]`.
    pub async fn compact(
        &mut self,
        instructions: Option<&str>,
        events: &AgentEventSink,
        cancel: CancellationToken,
    ) -> Result<Compacted, String> {
        let compacted = self
            .agent
            .compact_now(&self.messages, instructions, events, cancel)
            .await
            .map_err(|error| error.to_string())?;
        self.messages = compacted.messages.clone();
        Ok(compacted)
    }

    /// The user's messages of the conversation, oldest first, as `/branch N` numbers them.
    pub fn branch_points(&self) -> Result<Vec<(EntryId, String)>, StoreError> {
        match &self.recorded {
            Some(recorded) => recorded.user_turns(),
            None => Ok(Vec::new()),
        }
    }

    /// `/branch N`: back to before the user's message number `n` (from 1); the conversation
    /// goes on from there on a new branch.
    pub async fn branch(&mut self, n: usize) -> Result<(), String> {
        let points = self.branch_points().map_err(|error| error.to_string())?;
        let (entry, _) = n
            .checked_sub(1)
            .and_then(|at| points.get(at))
            .ok_or_else(|| format!("there is no message {n}: /branch lists them"))?;
        let entry = *entry;
        refused_by_extensions(
            Arc::clone(&self.extensions),
            "session_before_fork",
            json!({ "entryId": entry.to_string() }),
            "/branch",
        )
        .await?;
        let recorded = self
            .recorded
            .as_ref()
            .ok_or("this chat keeps no session, so it cannot branch")?;
        self.messages = recorded
            .branch_before(entry)
            .map_err(|error| error.to_string())?;
        self.agent.session_event(SessionEvent::Branch).await;
        Ok(())
    }

    /// The branches of the session's tree, oldest first, as `/tree N` numbers them.
    pub fn branches(&self) -> Result<Vec<BranchTip>, StoreError> {
        match &self.recorded {
            Some(recorded) => recorded.branch_tips(),
            None => Ok(Vec::new()),
        }
    }

    /// `/tree N`: goes on with the branch number `n` (from 1) of the session's tree.
    pub async fn switch_branch(&mut self, n: usize) -> Result<(), String> {
        let branches = self.branches().map_err(|error| error.to_string())?;
        let branch = n
            .checked_sub(1)
            .and_then(|at| branches.get(at))
            .ok_or_else(|| format!("there is no branch {n}: /tree lists them"))?;
        let tip = branch.tip;
        refused_by_extensions(
            Arc::clone(&self.extensions),
            "session_before_tree",
            json!({ "targetId": tip.to_string() }),
            "/tree",
        )
        .await?;
        let recorded = self
            .recorded
            .as_ref()
            .ok_or("this chat keeps no session, so it has no tree")?;
        self.messages = recorded
            .switch_to_branch(tip)
            .map_err(|error| error.to_string())?;
        self.agent.session_event(SessionEvent::Tree).await;
        Ok(())
    }

    /// The sessions of this workspace, newest first.
    pub fn sessions(&self) -> Result<Vec<toolhost_session::Session>, StoreError> {
        let Some(path) = &self.store_path else {
            return Ok(Vec::new());
        };
        let store = SessionStore::open(path)?;
        let workspace =
            std::fs::canonicalize(&self.workspace).unwrap_or_else(|_| self.workspace.clone());
        store.list_in_workspace(&workspace, 20, 0)
    }

    /// `/resume ID`: switches to another session.
    pub async fn resume(&mut self, id: &str) -> Result<(), String> {
        refused_by_extensions(
            Arc::clone(&self.extensions),
            "session_before_switch",
            json!({ "reason": "resume", "targetSessionId": id }),
            "/resume",
        )
        .await?;
        let path = self
            .store_path
            .clone()
            .ok_or("this chat keeps no sessions")?;
        let opening =
            match SessionOpening::open(&path, &SessionChoice::Id(id.to_owned()), &self.workspace) {
                Ok(opening) => opening,
                // This chat's own claim: there is nothing to switch to.
                Err(SessionChoiceError::Store(StoreError::SessionRunning { session, .. }))
                    if self.recorded.as_ref().map(|recorded| recorded.id()) == Some(&session) =>
                {
                    return Err(format!("this chat is in the session {session} already"));
                }
                Err(error) => return Err(error.to_string()),
            };
        self.opening = Some(opening);
        self.start_session("").map_err(|error| error.to_string())?;
        self.agent
            .session_event_with(SessionEvent::Switch, json!({ "reason": "resume" }))
            .await;
        Ok(())
    }

    /// `/clear`: a new, empty session from the next message on — unless a pi extension's
    /// `session_before_switch` handler cancels it, as in pi's `/new`.
    pub async fn clear(&mut self) -> Result<(), String> {
        refused_by_extensions(
            Arc::clone(&self.extensions),
            "session_before_switch",
            json!({ "reason": "new" }),
            "/clear",
        )
        .await?;
        self.messages.clear();
        self.recorded = None;
        self.agent.set_transcript(None);
        if let Some(path) = &self.store_path {
            self.opening = Some(
                SessionOpening::open(path, &SessionChoice::New, &self.workspace)
                    .map_err(|error| error.to_string())?,
            );
        }
        self.agent
            .session_event_with(SessionEvent::Switch, json!({ "reason": "new" }))
            .await;
        Ok(())
    }

    fn start_session(&mut self, first_prompt: &str) -> Result<(), StoreError> {
        let Some(opening) = self.opening.take() else {
            return Ok(());
        };
        self.untitled = false;
        let context = turn_context(
            &self.provider.entry.name,
            &self.provider.model,
            self.permissions.mode(),
            self.provider.entry.max_output_tokens,
            &self.prompt,
        );
        let (recorded, messages) = opening.start(&self.workspace, first_prompt, context)?;
        let recorded = Arc::new(recorded);
        self.agent.set_session_id(recorded.id().to_string());
        self.agent
            .set_transcript(Some(Arc::clone(&recorded) as Arc<dyn Transcript>));
        self.extensions
            .set_recorded(Some(Arc::clone(&recorded) as Arc<dyn ExtensionStore>));
        self.recorded = Some(recorded);
        self.messages = messages;
        Ok(())
    }
}

/// A pi extension's `session_before_*` handler answering `{ cancel: true }` keeps `what` from
/// happening: the error says so. (It takes the extensions, not the chat: the chat's state is
/// not `Sync`.)
async fn refused_by_extensions(
    extensions: Arc<ExtensionSession>,
    event: &str,
    payload: Value,
    what: &str,
) -> Result<(), String> {
    if !extensions.extensions().listens_to(event) {
        return Ok(());
    }
    let cancelled = extensions.extensions().cancelled(event, &payload).await;
    extensions.apply_and_deliver().await;
    if cancelled {
        Err(format!("an extension's {event} handler cancelled {what}"))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_messages_or_the_chats_commands() {
        assert_eq!(
            ChatInput::parse("  hello  "),
            ChatInput::Message("hello".into())
        );
        assert_eq!(ChatInput::parse(""), ChatInput::Empty);
        assert_eq!(ChatInput::parse("/model"), ChatInput::Model(None));
        assert_eq!(
            ChatInput::parse("/compact keep the test names"),
            ChatInput::Compact(Some("keep the test names".into()))
        );
        assert_eq!(
            ChatInput::parse("/branch 2"),
            ChatInput::Branch(Some("2".into()))
        );
        assert_eq!(ChatInput::parse("/quit"), ChatInput::Exit);
        assert_eq!(
            ChatInput::parse("/frobnicate x"),
            ChatInput::Unknown("frobnicate".into())
        );
    }
}

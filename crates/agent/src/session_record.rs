//! A run kept in the session store: a new session, or one resumed where it stopped. The loop
//! records through [`Transcript`], so every message is committed before the model is asked
//! again; a process killed at any point loses at most the response in flight.

mod branches;
mod custom;

pub use branches::BranchTip;

use std::path::Path;
use std::sync::{Mutex, MutexGuard, PoisonError};

use toolhost_core::ContentBlock;
use toolhost_core::conversation::{Message, ToolCall, ToolResultMessage};
use toolhost_session::{
    Compaction, EntryKind, NewSession, PromptFile, PromptInputs, Resume, RunLock, SessionId,
    SessionStatus, SessionStore, StoreError, TurnContext,
};

use crate::agent_loop::{Recorded, RunOutcome, Transcript};
use crate::system_prompt::SystemPromptInputs;

/// The result given to a call that was running when the process stopped: the model needs a
/// result for every call before it can go on, and must not assume the call did nothing.
pub const INTERRUPTED_CALL_RESULT: &str = "Interrupted: toolhost stopped while this call ran, \
     so its result was lost. It may or may not have taken effect: check before you repeat it.";

/// Which session a run goes on with.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum SessionChoice {
    /// A new one.
    #[default]
    New,
    /// The one of this workspace that changed last (`--continue`).
    Latest,
    /// This one, by id or a unique prefix of it (`--resume ID`).
    Id(String),
}

/// Why the session for a run could not be had.
#[derive(Debug, thiserror::Error)]
pub enum SessionChoiceError {
    /// `--continue`, but the workspace has no session yet.
    #[error("no session to continue in {0}: start one without --continue")]
    NothingToContinue(std::path::PathBuf),
    /// The store refused (not found, ambiguous, unreadable, newer).
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl SessionChoiceError {
    /// Whether another run holds the session.
    pub fn is_running_elsewhere(&self) -> bool {
        matches!(self, Self::Store(StoreError::SessionRunning { .. }))
    }

    /// Whether the command line is at fault (an id that names no session, or several).
    pub fn is_usage_error(&self) -> bool {
        matches!(
            self,
            Self::NothingToContinue(_)
                | Self::Store(StoreError::SessionNotFound(_) | StoreError::AmbiguousPrefix { .. })
        )
    }
}

/// The session side of a run, before the agent is assembled: the store is open, and an
/// earlier session (`--continue`, `--resume`) is found, so that its provider and model can
/// choose the agent's. A new session is created only by [`SessionOpening::start`], once the
/// agent could be assembled: a run that fails to start leaves no empty session behind. An
/// earlier session is claimed for this run from the start: one that another process runs is
/// refused ([`StoreError::SessionRunning`]).
pub struct SessionOpening {
    store: SessionStore,
    earlier: Option<(SessionId, Resume, RunLock)>,
}

impl SessionOpening {
    /// Opens the store at `path` (creating its folder) and the session `choice` names in
    /// `workspace`.
    pub fn open(
        path: &Path,
        choice: &SessionChoice,
        workspace: &Path,
    ) -> Result<Self, SessionChoiceError> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| StoreError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        }
        let store = SessionStore::open(path)?;
        let earlier =
            match choice {
                SessionChoice::New => None,
                SessionChoice::Latest => Some(latest_in(&store, workspace)?.ok_or_else(|| {
                    SessionChoiceError::NothingToContinue(workspace.to_path_buf())
                })?),
                SessionChoice::Id(id) => Some(store.get(id)?.id),
            };
        let mut opening = Self {
            store,
            earlier: None,
        };
        if let Some(id) = earlier {
            let run = opening.store.claim_run(&id)?;
            let resume = opening.store.resume(&id)?;
            opening.earlier = Some((id, resume, run));
        }
        Ok(opening)
    }

    /// Whether it goes on with an earlier session.
    pub fn is_resumed(&self) -> bool {
        self.earlier.is_some()
    }

    /// The provider and model the earlier session was using at its leaf.
    pub fn model(&self) -> Option<&(String, String)> {
        self.earlier
            .as_ref()
            .and_then(|(_, resume, _)| resume.model.as_ref())
    }

    /// The permission mode the earlier session was in at its leaf (its last turn, or a mode
    /// change after it).
    pub fn mode(&self) -> Option<toolhost_core::permission::PermissionMode> {
        self.earlier.as_ref().and_then(|(_, resume, _)| resume.mode)
    }

    /// The session, created now when it is a new one (titled after `prompt`), with the turn
    /// context recorded when it changed; and the conversation so far (empty when new; with a
    /// result recorded for every call an earlier process left running).
    pub fn start(
        self,
        workspace: &Path,
        prompt: &str,
        context: TurnContext,
    ) -> Result<(RecordedSession, Vec<Message>), StoreError> {
        let Self { store, earlier } = self;
        match earlier {
            None => Ok((
                RecordedSession::create(store, workspace, prompt, context)?,
                Vec::new(),
            )),
            Some((id, mut resume, run)) => {
                let session = RecordedSession {
                    store: Mutex::new(store),
                    id,
                    _run: run,
                };
                session.answer_interrupted(&mut resume)?;
                session.record_turn_context(context, resume.turn_context.as_ref())?;
                Ok((session, resume.messages))
            }
        }
    }
}

/// How many sessions [`latest_in`] reads at a time.
const LATEST_PAGE: usize = 50;

/// The top-level session that changed last in `workspace`, if there is one: a sub-agent's
/// session is never what `--continue` means.
fn latest_in(store: &SessionStore, workspace: &Path) -> Result<Option<SessionId>, StoreError> {
    let workspace = canonical(workspace);
    let mut offset = 0;
    loop {
        let sessions = store.list_in_workspace(&workspace, LATEST_PAGE, offset)?;
        if let Some(session) = sessions.iter().find(|session| session.spawned_by.is_none()) {
            return Ok(Some(session.id.clone()));
        }
        if sessions.len() < LATEST_PAGE {
            return Ok(None);
        }
        offset += LATEST_PAGE;
    }
}

/// The workspace as sessions are stored and listed: its canonical path, so that
/// `--workspace ./x` and `--workspace /abs/x` find the same sessions.
fn canonical(workspace: &Path) -> std::path::PathBuf {
    std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf())
}

/// The longest title taken from a first prompt, in characters.
const TITLE_CHARS: usize = 80;

/// A session being run: its store, its id, and its claim on it (no other process goes on
/// with it while this one lives).
pub struct RecordedSession {
    store: Mutex<SessionStore>,
    id: SessionId,
    _run: RunLock,
}

impl RecordedSession {
    /// A new session in `workspace`, titled after its first prompt, created with its turn
    /// context as its first entry (one transaction: never an empty session).
    fn create(
        mut store: SessionStore,
        workspace: &Path,
        first_prompt: &str,
        context: TurnContext,
    ) -> Result<Self, StoreError> {
        let (session, _) = store.create_session_with(
            NewSession {
                title: Some(title_of(first_prompt)),
                workspace: Some(canonical(workspace)),
                ..NewSession::default()
            },
            &EntryKind::TurnContext(context),
        )?;
        Self::claimed(store, session.id)
    }

    /// A new session, claimed: nobody else knows its id yet, so the claim cannot fail on a
    /// run of someone else's.
    fn claimed(store: SessionStore, id: SessionId) -> Result<Self, StoreError> {
        let run = store.claim_run(&id)?;
        Ok(Self {
            store: Mutex::new(store),
            id,
            _run: run,
        })
    }

    /// A sub-agent's new session in the store at `path`, a child of `parent` spawned by its
    /// call `call_id`, titled `title`, with what its turns run with recorded first.
    pub fn create_child(
        path: &Path,
        workspace: &Path,
        parent: Option<&SessionId>,
        call_id: &str,
        title: &str,
        context: TurnContext,
    ) -> Result<Self, StoreError> {
        let mut store = SessionStore::open(path)?;
        let (session, _) = store.create_session_with(
            NewSession {
                title: Some(title_of(title)),
                workspace: Some(canonical(workspace)),
                parent: parent.cloned(),
                spawned_by_call: Some(call_id.to_owned()),
            },
            &EntryKind::TurnContext(context),
        )?;
        Self::claimed(store, session.id)
    }

    /// An existing session of the store at `path`, to go on with: the session and its
    /// conversation so far (with a result for every call left running). A session that
    /// another run holds is refused ([`StoreError::SessionRunning`]).
    pub fn reopen(
        path: &Path,
        id: &SessionId,
        context: TurnContext,
    ) -> Result<(Self, Vec<Message>), StoreError> {
        let store = SessionStore::open(path)?;
        let run = store.claim_run(id)?;
        let mut resume = store.resume(id)?;
        let session = Self {
            store: Mutex::new(store),
            id: id.clone(),
            _run: run,
        };
        session.answer_interrupted(&mut resume)?;
        session.record_turn_context(context, resume.turn_context.as_ref())?;
        Ok((session, resume.messages))
    }

    /// The session's id.
    pub fn id(&self) -> &SessionId {
        &self.id
    }

    /// Gives every call that an earlier process left running its [`INTERRUPTED_CALL_RESULT`],
    /// recorded, so that the conversation can go on.
    fn answer_interrupted(&self, resume: &mut Resume) -> Result<(), StoreError> {
        for call in std::mem::take(&mut resume.interrupted_calls) {
            let message = Message::ToolResult(interrupted(&call));
            self.append(&message_entry(&message, None))?;
            resume.messages.push(message);
        }
        Ok(())
    }

    /// Records what the coming turns run with, when it differs from what the session's leaf
    /// already says (a resumed run with the same model, tools and prompt adds nothing).
    fn record_turn_context(
        &self,
        context: TurnContext,
        previous: Option<&TurnContext>,
    ) -> Result<(), StoreError> {
        if previous == Some(&context) {
            return Ok(());
        }
        self.append(&EntryKind::TurnContext(context))
    }

    /// Records a message the caller adds (the user's prompt).
    pub fn record_message(&self, message: &Message) -> Result<(), StoreError> {
        self.append(&message_entry(message, None))
    }

    /// Titles the session after `prompt` (its first line, shortened), as a session created
    /// with its first prompt is titled: for a front end that opens the session before the
    /// user has said anything (an editor's `session/new`).
    pub fn title_after(&self, prompt: &str) -> Result<(), StoreError> {
        self.store().set_title(&self.id, &title_of(prompt))
    }

    /// Records that the model changed from here on.
    pub fn record_model_change(&self, provider: &str, model: &str) -> Result<(), StoreError> {
        self.append(&EntryKind::ModelChange {
            provider: provider.to_owned(),
            model: model.to_owned(),
        })
    }

    /// Records that the permission mode changed from here on.
    pub fn record_mode_change(
        &self,
        mode: toolhost_core::permission::PermissionMode,
    ) -> Result<(), StoreError> {
        self.append(&EntryKind::ModeChange { mode })
    }

    /// The user's messages on the path to the leaf, oldest first: where `/branch` can go back
    /// to.
    pub fn user_turns(&self) -> Result<Vec<(toolhost_session::EntryId, String)>, StoreError> {
        let path = self.store().conversation(&self.id)?;
        Ok(path
            .into_iter()
            .filter_map(|entry| match entry.kind {
                EntryKind::UserMessage { content } => {
                    let text = content
                        .iter()
                        .filter_map(ContentBlock::as_text)
                        .collect::<Vec<_>>()
                        .join(" ");
                    Some((entry.id, text))
                }
                _ => None,
            })
            .collect())
    }

    /// Moves the leaf to just before the user message `entry`: the next message starts a new
    /// branch there, and the old branch stays in the tree. The conversation to go on with.
    pub fn branch_before(
        &self,
        entry: toolhost_session::EntryId,
    ) -> Result<Vec<Message>, StoreError> {
        let path = self.store().conversation(&self.id)?;
        // The session's first entry is its turn context, so a user message always has a
        // parent to branch from.
        let parent = path
            .iter()
            .position(|on_path| on_path.id == entry)
            .and_then(|at| at.checked_sub(1))
            .map(|parent| path[parent].id)
            .ok_or(StoreError::EntryNotInSession {
                session: self.id.clone(),
                entry,
            })?;
        self.store().branch_from(&self.id, parent)?;
        Ok(self.store().resume(&self.id)?.messages)
    }

    /// Marks how the run ended.
    pub fn finish(&self, outcome: &RunOutcome) -> Result<(), StoreError> {
        let status = match outcome {
            RunOutcome::Answered { .. } | RunOutcome::Stopped { .. } => SessionStatus::Completed,
            RunOutcome::Cancelled => SessionStatus::Cancelled,
            RunOutcome::MaxIterations { .. } | RunOutcome::Failed { .. } => SessionStatus::Failed,
        };
        self.store().set_status(&self.id, status)
    }

    fn append(&self, kind: &EntryKind) -> Result<(), StoreError> {
        self.store().append_at_leaf(&self.id, kind).map(drop)
    }

    fn store(&self) -> MutexGuard<'_, SessionStore> {
        self.store.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The entry where the last `kept` messages of the conversation at the leaf begin.
    fn first_kept(&self, kept: usize) -> Result<Option<toolhost_session::EntryId>, StoreError> {
        if kept == 0 {
            return Ok(None);
        }
        let path = self.store().conversation(&self.id)?;
        Ok(path
            .iter()
            .rev()
            .filter(|entry| makes_a_message(&entry.kind))
            .nth(kept - 1)
            .map(|entry| entry.id))
    }
}

impl Transcript for RecordedSession {
    fn record(&self, entry: Recorded<'_>) -> Result<(), String> {
        let kind = match entry {
            Recorded::Message { message, details } => message_entry(message, details),
            Recorded::Compaction {
                summary,
                kept_messages,
                tokens_before,
                files_read,
                files_modified,
                usage,
            } => {
                self.store()
                    .add_usage(&self.id, usage)
                    .map_err(|error| error.to_string())?;
                EntryKind::Compaction(Compaction {
                    summary: summary.to_owned(),
                    first_kept: self.first_kept(kept_messages).map_err(|e| e.to_string())?,
                    tokens_before,
                    files_read: files_read.iter().map(Into::into).collect(),
                    files_modified: files_modified.iter().map(Into::into).collect(),
                })
            }
        };
        self.append(&kind).map_err(|error| error.to_string())
    }
}

/// What a turn runs with, for the store.
pub fn turn_context(
    provider: &str,
    model: &str,
    mode: toolhost_core::permission::PermissionMode,
    max_output_tokens: Option<u32>,
    prompt: &SystemPromptInputs,
) -> TurnContext {
    TurnContext {
        provider: provider.to_owned(),
        model: model.to_owned(),
        permission_mode: mode,
        tools: prompt.tools.clone(),
        max_output_tokens,
        system_prompt: PromptInputs {
            workspace: prompt.workspace.clone(),
            date: prompt.date.clone(),
            platform: prompt.platform.clone(),
            context_files: prompt
                .context_files
                .iter()
                .map(|file| PromptFile {
                    path: file.path.clone(),
                    text: file.text.clone(),
                    truncated: file.truncated,
                })
                .collect(),
            text: prompt.render(),
        },
    }
}

fn message_entry(message: &Message, details: Option<&serde_json::Value>) -> EntryKind {
    match message {
        Message::User { content } => EntryKind::UserMessage {
            content: content.clone(),
        },
        Message::Assistant(assistant) => EntryKind::AssistantMessage(assistant.clone()),
        Message::ToolResult(result) => EntryKind::ToolResult {
            message: result.clone(),
            details: details.cloned(),
        },
    }
}

/// Whether the entry is one of the messages a resume gives the model.
fn makes_a_message(kind: &EntryKind) -> bool {
    matches!(
        kind,
        EntryKind::UserMessage { .. }
            | EntryKind::AssistantMessage(_)
            | EntryKind::ToolResult { .. }
            | EntryKind::BranchSummary { .. }
    )
}

fn interrupted(call: &ToolCall) -> ToolResultMessage {
    ToolResultMessage {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        content: vec![ContentBlock::text(INTERRUPTED_CALL_RESULT)],
        is_error: true,
    }
}

/// The first line of a prompt, cut to [`TITLE_CHARS`].
fn title_of(prompt: &str) -> String {
    let line = prompt.trim().lines().next().unwrap_or_default().trim();
    let mut title: String = line.chars().take(TITLE_CHARS).collect();
    if line.chars().count() > TITLE_CHARS {
        title.push('…');
    }
    title
}

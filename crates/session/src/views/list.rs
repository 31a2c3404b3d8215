//! `toolhost sessions list`: the sessions, newest first, one line each.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::SystemTime;

use crate::{Session, SessionStatus, SessionStore};
use serde::Serialize;
use toolhost_core::conversation::Usage;

use super::{SessionsError, age, timestamp};
use toolhost_config::Config;
use toolhost_config::pricing::{dollars, thousands};
use toolhost_config::providers::pricing_for;

/// Which sessions to list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListScope {
    /// Those that ran in this workspace (as stored: its canonical root).
    Workspace(PathBuf),
    /// Every session of the store.
    All,
}

/// One session as `list` shows it (and `--json` prints it).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SessionSummary {
    /// Its id.
    pub id: String,
    /// Its title, once it has one.
    pub title: Option<String>,
    /// The workspace it ran in.
    pub workspace: Option<PathBuf>,
    /// When it was created (RFC 3339).
    pub created: String,
    /// When it last changed (RFC 3339).
    pub updated: String,
    /// How it stands.
    pub status: SessionStatus,
    /// Entries, every branch included.
    pub entries: u64,
    /// Tokens over its whole life, every branch included.
    pub usage: Usage,
    /// The provider and model of its latest turn.
    pub model: Option<ModelName>,
    /// Its tokens priced at that model, USD; `None` when the model has no known price.
    pub cost_usd: Option<f64>,
    /// The session that spawned it (a sub-agent's).
    pub parent: Option<String>,
    #[serde(skip)]
    pub(super) updated_at: SystemTime,
}

/// A provider and one of its models.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ModelName {
    /// The provider's name (`anthropic`, a `[providers.NAME]`).
    pub provider: String,
    /// The model.
    pub model: String,
}

/// The sessions of `scope`, most recently changed first, at most `limit`.
pub fn list(
    store: &SessionStore,
    config: &Config,
    scope: &ListScope,
    limit: usize,
) -> Result<Vec<SessionSummary>, SessionsError> {
    let sessions = match scope {
        ListScope::All => store.list(limit, 0)?,
        ListScope::Workspace(root) => store.list_in_workspace(root, limit, 0)?,
    };
    sessions
        .iter()
        .map(|session| summary(store, config, session))
        .collect()
}

/// `session` as `list` shows it: its totals priced at the model of its latest turn (`show`
/// prices each response at its own model).
pub fn summary(
    store: &SessionStore,
    config: &Config,
    session: &Session,
) -> Result<SessionSummary, SessionsError> {
    let model = store
        .latest_model(&session.id)?
        .map(|(provider, model)| ModelName { provider, model });
    let cost_usd = model.as_ref().and_then(|name| {
        pricing_for(config, &name.provider, &name.model).map(|pricing| pricing.cost(&session.usage))
    });
    Ok(SessionSummary {
        id: session.id.to_string(),
        title: session.title.clone(),
        workspace: session.workspace.clone(),
        created: timestamp(session.created_at),
        updated: timestamp(session.updated_at),
        status: session.status,
        entries: session.entry_count,
        usage: session.usage,
        model,
        cost_usd,
        parent: session
            .spawned_by
            .as_ref()
            .and_then(|spawned| spawned.session.as_ref())
            .map(ToString::to_string),
        updated_at: session.updated_at,
    })
}

/// The list as a table; `scope` says, when it is empty, where to look instead.
pub fn render_list(sessions: &[SessionSummary], scope: &ListScope, now: SystemTime) -> String {
    if sessions.is_empty() {
        return match scope {
            ListScope::All => "No sessions yet.\n".to_owned(),
            ListScope::Workspace(root) => format!(
                "No sessions in {}; `toolhost sessions list --all` lists every workspace's.\n",
                root.display()
            ),
        };
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<36}  {:>8}  {:<9}  {:>7}  {:>21}  {:>8}  TITLE",
        "ID", "UPDATED", "STATUS", "ENTRIES", "TOKENS IN / OUT", "COST"
    );
    for session in sessions {
        let tokens = format!(
            "{} / {}",
            thousands(session.usage.input_tokens),
            thousands(session.usage.output_tokens)
        );
        let cost = session.cost_usd.map_or_else(|| "-".to_owned(), dollars);
        let mut title = session.title.clone().unwrap_or_else(|| "(untitled)".into());
        if matches!(scope, ListScope::All)
            && let Some(workspace) = &session.workspace
        {
            title.push_str(&format!("  [{}]", workspace.display()));
        }
        let _ = writeln!(
            out,
            "{:<36}  {:>8}  {:<9}  {:>7}  {tokens:>21}  {cost:>8}  {title}",
            session.id,
            age(now, session.updated_at),
            session.status.as_str(),
            session.entries,
        );
    }
    out
}

//! The stored sessions as `toolhost sessions` shows them: where the store is, finding a
//! session by a prefix of its id, the list, one session's report (usage and cost per turn,
//! the branch tree, the last messages), and exports to JSON lines and Markdown.
//!
//! **Where the store is** ([`store_path`], the one place that decides it; `run` and `chat`
//! open the same file):
//!
//! 1. the variable `TOOLHOST_SESSIONS_DB` ([`SESSIONS_DB_ENV`]), when set and not empty;
//! 2. `[sessions] path = "…"` in the configuration (`~/` is the home folder, a relative path
//!    is resolved against the workspace);
//! 3. `~/.toolhost/sessions.db`.
//!
//! ```
//! use std::path::Path;
//! use toolhost_config::Config;
//! use toolhost_session::views::store_path_from;
//!
//! let path = store_path_from(&Config::default(), Some(Path::new("/home/ada")), None).unwrap();
//! assert_eq!(path, Path::new("/home/ada/.toolhost/sessions.db"));
//! ```

mod export;
mod list;
mod report;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::{Session, SessionStore, StoreError};

use toolhost_config::{Config, SESSIONS_DB_ENV};

pub use export::{ExportFormat, export, export_jsonl, export_markdown};
pub use list::{ListScope, SessionSummary, list, render_list, summary};
pub use report::{MessagePreview, SessionReport, Totals, TurnUsage, render_report, report};

/// How many sessions an ambiguous prefix lists.
const CANDIDATES_SHOWN: usize = 10;

/// What went wrong finding or reading sessions.
#[derive(Debug, thiserror::Error)]
pub enum SessionsError {
    /// Nothing says where the store is.
    #[error(
        "cannot tell where the session store is: HOME is not set; set {SESSIONS_DB_ENV} or \
         [sessions] path in the configuration"
    )]
    NoHome,
    /// No session has this id or prefix.
    #[error("no session {id} in {}; `toolhost sessions list --all` lists them", store.display())]
    NotFound {
        /// What was asked.
        id: String,
        /// The store's file.
        store: PathBuf,
    },
    /// Several sessions start with this prefix.
    #[error(
        "the session id prefix {prefix} matches {} sessions; give more of it:\n{}",
        candidates.len(),
        candidates.join("\n")
    )]
    Ambiguous {
        /// What was asked.
        prefix: String,
        /// One line per session: id, age, title.
        candidates: Vec<String>,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The session store's file: [`SESSIONS_DB_ENV`], else `[sessions] path`, else
/// `~/.toolhost/sessions.db` (see the module's documentation). Reads the variable from the
/// process's environment.
pub fn store_path(config: &Config, home: Option<&Path>) -> Result<PathBuf, SessionsError> {
    store_path_from(config, home, std::env::var_os(SESSIONS_DB_ENV))
}

/// [`store_path`] with the variable's value given.
pub fn store_path_from(
    config: &Config,
    home: Option<&Path>,
    variable: Option<OsString>,
) -> Result<PathBuf, SessionsError> {
    if let Some(path) = variable.filter(|value| !value.is_empty()) {
        return Ok(PathBuf::from(path));
    }
    if let Some(path) = &config.sessions.path {
        return Ok(path.clone());
    }
    home.map(|home| home.join(".toolhost").join("sessions.db"))
        .ok_or(SessionsError::NoHome)
}

/// Opens the store at `path` if there is one; `None` when the file does not exist, so that
/// reading commands do not create an empty store.
pub fn open_existing(path: &Path) -> Result<Option<SessionStore>, SessionsError> {
    if !path.exists() {
        return Ok(None);
    }
    Ok(Some(SessionStore::open(path)?))
}

/// The session whose id is `id_or_prefix` or starts with it; an unknown or ambiguous one is
/// an error listing what there is.
pub fn find(store: &SessionStore, id_or_prefix: &str) -> Result<Session, SessionsError> {
    match store.get(id_or_prefix) {
        Ok(session) => Ok(session),
        Err(StoreError::SessionNotFound(_)) => Err(SessionsError::NotFound {
            id: id_or_prefix.to_owned(),
            store: store.path().to_path_buf(),
        }),
        Err(StoreError::AmbiguousPrefix { .. }) => {
            let now = SystemTime::now();
            let matches = store.find_by_prefix(id_or_prefix, CANDIDATES_SHOWN + 1)?;
            let mut candidates: Vec<String> = matches
                .iter()
                .take(CANDIDATES_SHOWN)
                .map(|session| {
                    format!(
                        "  {}  {:>8}  {}",
                        session.id,
                        age(now, session.updated_at),
                        session.title.as_deref().unwrap_or("(untitled)")
                    )
                })
                .collect();
            if matches.len() > CANDIDATES_SHOWN {
                candidates.push("  …".to_owned());
            }
            Err(SessionsError::Ambiguous {
                prefix: id_or_prefix.to_owned(),
                candidates,
            })
        }
        Err(other) => Err(other.into()),
    }
}

/// `2026-12-01T10:00:00Z`.
pub fn timestamp(time: SystemTime) -> String {
    humantime::format_rfc3339_seconds(time).to_string()
}

/// How long before `now` `then` was, in one unit: `just now`, `5m ago`, `3h ago`, `12d ago`.
pub fn age(now: SystemTime, then: SystemTime) -> String {
    let seconds = now.duration_since(then).map_or(0, |since| since.as_secs());
    match seconds {
        0..60 => "just now".to_owned(),
        60..3_600 => format!("{}m ago", seconds / 60),
        3_600..86_400 => format!("{}h ago", seconds / 3_600),
        _ => format!("{}d ago", seconds / 86_400),
    }
}

/// The first line of `text`, at most `max` characters (cut with `…`).
pub(crate) fn first_line(text: &str, max: usize) -> String {
    let line = text.trim().lines().next().unwrap_or_default();
    match line.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None if text.trim().lines().nth(1).is_some() => format!("{line} …"),
        None => line.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::time::Duration;

    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_variable_wins_over_the_configuration_which_wins_over_the_home_folder() {
        let home = Path::new("/home/ada");
        let mut config = Config::default();
        assert_eq!(
            store_path_from(&config, Some(home), None).unwrap(),
            home.join(".toolhost/sessions.db")
        );
        config.sessions.path = Some(PathBuf::from("/data/s.db"));
        assert_eq!(
            store_path_from(&config, Some(home), Some(OsString::new())).unwrap(),
            Path::new("/data/s.db")
        );
        assert_eq!(
            store_path_from(&config, None, Some("/tmp/x.db".into())).unwrap(),
            Path::new("/tmp/x.db")
        );
        config.sessions.path = None;
        assert!(matches!(
            store_path_from(&config, None, None),
            Err(SessionsError::NoHome)
        ));
    }

    #[test]
    fn ages_read_in_one_unit() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(10 * 86_400);
        let ago = |seconds| age(now, now - Duration::from_secs(seconds));
        assert_eq!(
            [ago(5), ago(125), ago(7_300), ago(3 * 86_400)],
            ["just now", "2m ago", "2h ago", "3d ago"]
        );
    }

    #[test]
    fn first_lines_are_cut_and_say_so() {
        assert_eq!(first_line("  hello\nworld", 80), "hello …");
        assert_eq!(first_line("abcdef", 3), "abc…");
        assert_eq!(first_line("abc", 3), "abc");
    }
}

//! Full-text search over message text and tool results (SQLite FTS5).

use rusqlite::params;

use super::SessionStore;
use crate::{EntryId, SearchHit, SessionId, StoreError};

/// Words of context a snippet shows around the match.
const SNIPPET_WORDS: i64 = 16;

impl SessionStore {
    /// The entries, across all sessions, that hold every word of `text`, best match first.
    /// The words are matched as words (FTS5 syntax in `text` is taken literally).
    pub fn search(&self, text: &str, limit: usize) -> Result<Vec<SearchHit>, StoreError> {
        let query = fts_query(text);
        if query.is_empty() {
            return Ok(Vec::new());
        }
        let mut statement = self.connection.prepare_cached(
            "SELECT e.session_id, e.id, e.kind, snippet(entry_text, 0, '[', ']', '…', ?3) \
             FROM entry_text JOIN entries e ON e.id = entry_text.rowid \
             WHERE entry_text MATCH ?1 ORDER BY rank LIMIT ?2",
        )?;
        let hits = statement
            .query_map(
                params![
                    query,
                    i64::try_from(limit).unwrap_or(i64::MAX),
                    SNIPPET_WORDS
                ],
                |row| {
                    Ok(SearchHit {
                        session: SessionId::from(row.get::<_, String>(0)?),
                        entry: EntryId(row.get(1)?),
                        kind: row.get(2)?,
                        snippet: row.get(3)?,
                    })
                },
            )?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(hits)
    }
}

/// Each whitespace-separated word as an FTS5 string (`"..."`, quotes doubled), all required.
fn fts_query(text: &str) -> String {
    text.split_whitespace()
        .map(|word| format!("\"{}\"", word.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(" ")
}

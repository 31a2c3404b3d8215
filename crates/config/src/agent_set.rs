//! The agents of a configuration: the `[agents.NAME]` tables, read with the TOML files, and the
//! agents of Markdown files (Claude Code's sub-agents, a plugin's), read the first time an
//! agent is asked for.
//!
//! A Claude Code user may have hundreds of agent files; opening each one at start would cost a
//! command that never looks at them (`toolhost call`, `serve`'s `initialize`) most of its
//! start-up. So the files are read when something needs them (`spawn_agent`'s description,
//! `agents list`, `--agent NAME`), once per process, and a command that will need them can
//! start reading them on another thread at once ([`Agents::prefetch`]).

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};

use crate::agents::{AgentConfig, MAIN_AGENT};

/// Reads the agent files; runs at most once.
pub type AgentFileReader = Box<dyn FnOnce() -> BTreeMap<String, AgentConfig> + Send>;

/// The agents by name: a table wins over a file of the same name.
#[derive(Clone, Default)]
pub struct Agents {
    tables: BTreeMap<String, AgentConfig>,
    files: Option<Arc<LazyLock<BTreeMap<String, AgentConfig>, AgentFileReader>>>,
}

impl std::fmt::Debug for Agents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let files = self
            .files
            .as_ref()
            .map(|files| LazyLock::get(files).map_or("not read yet", |_| "read"));
        f.debug_struct("Agents")
            .field("tables", &self.tables)
            .field("files", &files)
            .finish()
    }
}

impl Agents {
    /// Adds (or replaces) an agent that is not read from a file: a table's, or one made by a
    /// program.
    pub fn insert(&mut self, name: String, agent: AgentConfig) {
        self.tables.insert(name, agent);
    }

    /// Has the agent files read by `reader` when an agent is first asked for (replacing an
    /// earlier reader). Its definitions come after the tables: a table of the same name wins.
    pub fn read_files_with(&mut self, reader: AgentFileReader) {
        self.files = Some(Arc::new(LazyLock::new(reader)));
    }

    /// Starts reading the agent files on a thread of their own, so that whoever asks for them
    /// next waits less (or not at all).
    pub fn prefetch(&self) {
        if let Some(files) = &self.files {
            crate::prefetch::prefetch(files, "agent-files");
        }
    }

    /// The agents `[agents.NAME]` tables define (the agent files are not read).
    pub fn tables(&self) -> &BTreeMap<String, AgentConfig> {
        &self.tables
    }

    /// The tables, to change in place (the agent files are not read).
    pub fn tables_mut(&mut self) -> impl Iterator<Item = &mut AgentConfig> {
        self.tables.values_mut()
    }

    fn files(&self) -> Option<&BTreeMap<String, AgentConfig>> {
        self.files.as_deref().map(|files| &**files)
    }

    /// The agent `name`.
    pub fn get(&self, name: &str) -> Option<&AgentConfig> {
        self.tables
            .get(name)
            .or_else(|| self.files().and_then(|files| files.get(name)))
    }

    /// Whether an agent is called `name`.
    pub fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Every agent with its name, sorted by name.
    pub fn iter(&self) -> std::vec::IntoIter<(&String, &AgentConfig)> {
        let mut all: Vec<(&String, &AgentConfig)> = self.tables.iter().collect();
        if let Some(files) = self.files() {
            all.extend(
                files
                    .iter()
                    .filter(|(name, _)| !self.tables.contains_key(*name)),
            );
            all.sort_by(|a, b| a.0.cmp(b.0));
        }
        all.into_iter()
    }

    /// Every name, sorted.
    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.iter().map(|(name, _)| name)
    }

    /// Every agent, sorted by name.
    pub fn values(&self) -> impl Iterator<Item = &AgentConfig> {
        self.iter().map(|(_, agent)| agent)
    }

    /// The agent `name` without reading the agent files when a table defines it or it is the
    /// implicit main agent that no table configures (a file does not define the main agent).
    pub(crate) fn main_or(&self, name: &str) -> Option<&AgentConfig> {
        if name == MAIN_AGENT {
            return self.tables.get(name);
        }
        self.get(name)
    }
}

impl<'a> IntoIterator for &'a Agents {
    type Item = (&'a String, &'a AgentConfig);
    type IntoIter = std::vec::IntoIter<(&'a String, &'a AgentConfig)>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn agent(name: &str, description: &str) -> AgentConfig {
        let mut agent = AgentConfig::named(name, format!("{name}.md:1"));
        agent.description = Some(description.to_owned());
        agent
    }

    #[test]
    fn files_are_read_once_when_first_asked_for_and_a_table_wins() {
        static READS: AtomicUsize = AtomicUsize::new(0);
        let mut agents = Agents::default();
        agents.insert("reviewer".into(), agent("reviewer", "from the table"));
        agents.read_files_with(Box::new(|| {
            READS.fetch_add(1, Ordering::SeqCst);
            BTreeMap::from([
                ("reviewer".into(), agent("reviewer", "from a file")),
                ("planner".into(), agent("planner", "from a file")),
            ])
        }));
        assert_eq!(agents.tables().len(), 1);
        assert!(agents.main_or(MAIN_AGENT).is_none());
        assert_eq!(
            READS.load(Ordering::SeqCst),
            0,
            "nothing asked for a file yet"
        );
        let copy = agents.clone();
        assert_eq!(
            agents.get("reviewer").unwrap().description.as_deref(),
            Some("from the table")
        );
        assert_eq!(
            copy.keys().cloned().collect::<Vec<_>>(),
            ["planner", "reviewer"]
        );
        assert!(copy.contains_key("planner"));
        assert_eq!(
            READS.load(Ordering::SeqCst),
            1,
            "read once, shared by clones"
        );
    }
}

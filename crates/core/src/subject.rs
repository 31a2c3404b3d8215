//! What `Tool(specifier)` permission rules match a call against.

use serde::{Deserialize, Serialize};

/// The part of a call that permission rules with a specifier look at, as the tool itself
/// understands its arguments: a shell tool knows its simple commands, a file tool its paths,
/// a web tool its domain. Core knows none of these; the tool reports them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PermissionSubject {
    /// Nothing a specifier could match: only bare `Tool` rules apply.
    #[default]
    None,
    /// A shell command, split into its simple commands (`a && b | c` gives three).
    Shell(ShellSubject),
    /// Files the call reads or writes, relative to the workspace root when inside it,
    /// absolute otherwise.
    Paths(Vec<String>),
    /// The host a web call reaches.
    Domain(String),
}

/// A shell command as the command policy analysed it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShellSubject {
    /// The argv of every simple command, in order, as far as it is known statically.
    pub commands: Vec<Vec<String>>,
    /// `false` when some part could not be parsed or resolved statically: a prefix rule can
    /// then never auto-allow the command.
    pub fully_analysed: bool,
    /// Why the command policy refuses the command outright, whatever the rules say.
    pub denied: Option<String>,
    /// Risks worth telling the person who approves (sudo, `curl | sh`, `rm -r`, ...).
    pub warnings: Vec<String>,
    /// Paths outside the workspace that the command mentions.
    pub outside_workspace: Vec<String>,
}

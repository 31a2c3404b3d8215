//! What `Tool(specifier)` permission rules match a call against.

use serde::{Deserialize, Serialize};

/// The part of a call that permission rules with a specifier look at, as the tool itself
/// understands its arguments: a shell tool knows its simple commands, a file tool its paths,
/// a web tool its domain. Core knows none of these; the tool reports them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum PermissionSubject {
    /// Nothing a specifier could match: only bare `Tool` rules apply.
    #[default]
    None,
    /// A shell command, split into its simple commands (`a && b | c` gives three).
    Shell(ShellSubject),
    /// Files or folders the call reads or writes. A tool reports each path in every form a
    /// rule could name it by: as the call spelled it and, when a symlink leads elsewhere, as
    /// it resolves; each of those absolute and (inside the workspace) relative.
    Paths(Vec<SubjectPath>),
    /// The host a web call reaches.
    Domain(String),
    /// The MCP server whose data a call reaches (the resource tools, which serve every
    /// server): `mcp__server` rules name the call as they name that server's own tools, and
    /// `Tool(server)` rules name it by the server's name.
    McpServer(McpServerSubject),
}

impl PermissionSubject {
    /// Whether the tool reported nothing.
    pub fn is_none(&self) -> bool {
        matches!(self, Self::None)
    }
}

/// An MCP server as rules name it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct McpServerSubject {
    /// The server's configured name.
    pub name: String,
    /// The server part of its tools' names (`mcp__<segment>__tool`), which `mcp__server`
    /// rules are written with.
    pub segment: String,
}

/// One path a call touches, in the two forms path rules are written in.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SubjectPath {
    /// The absolute path, normalised: no `.` or `..` parts, no trailing `/`.
    pub absolute: String,
    /// The path relative to the workspace root (`src/lib.rs`, `.` for the root itself), when
    /// it lies inside the workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relative: Option<String>,
}

impl SubjectPath {
    /// A path inside the workspace rooted at `root` (absolute), at `relative` from it.
    pub fn in_workspace(root: &str, relative: &str) -> Self {
        let relative = relative.trim_start_matches("./").trim_end_matches('/');
        let relative = if relative.is_empty() { "." } else { relative };
        let absolute = if relative == "." {
            root.to_owned()
        } else {
            format!("{}/{relative}", root.trim_end_matches('/'))
        };
        Self {
            absolute,
            relative: Some(relative.to_owned()),
        }
    }

    /// A path outside the workspace: only rules written with an absolute path (`//…`, `~/…`)
    /// can name it.
    pub fn outside(absolute: impl Into<String>) -> Self {
        Self {
            absolute: absolute.into(),
            relative: None,
        }
    }

    /// How the path is shown to a person: relative when inside the workspace.
    pub fn display(&self) -> &str {
        self.relative.as_deref().unwrap_or(&self.absolute)
    }
}

/// The paths a running call may still reach, for tools that find paths as they go (Grep and
/// Glob walking a folder, ListDir listing one). The permission system judged the call on the
/// folder it names; this says which of the files found inside rules refuse, so that the walk
/// skips them and nothing of a denied file reaches the result.
pub trait PathFilter: Send + Sync {
    /// Whether the call may read or report `path`.
    fn allows(&self, path: &SubjectPath) -> bool;

    /// Whether the call may read or report what `server` holds (a resource tool listing every
    /// server's resources skips a server that rules refuse).
    fn allows_mcp_server(&self, _server: &McpServerSubject) -> bool {
        true
    }

    /// Whether [`Self::allows`] may refuse some path (a walk builds subjects only then).
    fn filters_paths(&self) -> bool {
        true
    }
}

/// Which subjects the user allowed by name, for tools that refuse something by default unless
/// a rule names it outright (a web tool reaching a loopback or private address). Only allow
/// rules with a specifier count: a bare `Tool` rule, the safe set or a permissive mode allow
/// the call, not what it would otherwise refuse.
pub trait ExplicitAllow: Send + Sync {
    /// Whether an allow rule with a specifier, for the running tool, matches `subject`.
    fn allows_explicitly(&self, subject: &PermissionSubject) -> bool;
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub denied: Option<String>,
    /// Risks worth telling the person who approves (sudo, `curl | sh`, `rm -r`, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Paths outside the workspace that the command mentions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outside_workspace: Vec<String>,
}

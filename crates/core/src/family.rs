//! What a tool does, in the terms permission rules and the agent loop reason about.

use serde::{Deserialize, Serialize};

/// The kind of access a tool's calls are, declared by the crate that defines the tool.
///
/// Rules name families by the rule names users already write (Claude Code's): `Read(…)`
/// covers every reading tool, `Edit(…)` every editing tool, `Bash(…)` every tool that runs
/// shell commands, `WebFetch(…)` every tool that reaches a host. A new tool joins a family by
/// declaring it on its spec ([`crate::ToolSpec::with_family`]); nothing here lists tools.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PermissionFamily {
    /// Reads files or folders and reports the paths it reads ([`crate::PermissionSubject::Paths`]).
    Read,
    /// Creates or changes files and reports the paths it changes.
    Edit,
    /// Runs shell commands and reports them ([`crate::PermissionSubject::Shell`]).
    Shell,
    /// Reaches a host over the network and reports it ([`crate::PermissionSubject::Domain`]).
    Network,
    /// Reads what MCP servers hold on behalf of every server (the resource tools) and reports
    /// the server a call reaches ([`crate::PermissionSubject::McpServer`]), which `mcp__server`
    /// rules then name. No rule name of its own.
    McpData,
    /// Anything else: only rules naming the tool itself apply.
    #[default]
    Other,
}

impl PermissionFamily {
    /// Every family that has a rule name.
    const NAMED: [Self; 4] = [Self::Read, Self::Edit, Self::Shell, Self::Network];

    /// The rule name that covers every tool of the family: `Read`, `Edit`, `Bash`,
    /// `WebFetch`; `None` for [`Self::Other`].
    pub fn rule_name(self) -> Option<&'static str> {
        match self {
            Self::Read => Some("Read"),
            Self::Edit => Some("Edit"),
            Self::Shell => Some("Bash"),
            Self::Network => Some("WebFetch"),
            Self::McpData | Self::Other => None,
        }
    }

    /// The family a rule name stands for (`Read` → [`Self::Read`]), if it stands for one.
    pub fn from_rule_name(name: &str) -> Option<Self> {
        Self::NAMED
            .into_iter()
            .find(|family| family.rule_name() == Some(name))
    }

    /// Whether the family's calls touch paths (reading or editing).
    pub fn touches_paths(self) -> bool {
        matches!(self, Self::Read | Self::Edit)
    }
}

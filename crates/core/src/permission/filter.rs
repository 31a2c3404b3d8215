//! Filtered registries (R16, R18): plan mode, an agent's `allowedTools`, a slash command's
//! `allowed-tools`, and what a sub-agent inherits.

use crate::registry::ToolRegistry;
use crate::spec::ToolSpec;

use super::mode::PermissionMode;
use super::rule::{PermissionRule, RuleParseError};

impl ToolRegistry {
    /// The registry the model sees in `mode`: in plan mode only read-only tools (R16), in
    /// every other mode all of them. Shares this registry's tools and pipeline.
    pub fn for_mode(&self, mode: PermissionMode) -> Self {
        match mode {
            PermissionMode::Plan => self.filter(|spec| spec.annotations.read_only),
            _ => self.share_all(),
        }
    }

    /// The tools a sub-agent inherits from this (its parent's) registry whatever its own
    /// tool list says (R18): see [`is_inherited_by_subagent`].
    pub fn inherited_by_subagent(&self) -> Self {
        self.filter(is_inherited_by_subagent)
    }
}

/// Whether a sub-agent inherits the tool from its parent (R18): the tools that say so
/// ([`ToolSpec::inherited_by_subagents`]: skills, slash commands) and every MCP tool.
pub fn is_inherited_by_subagent(spec: &ToolSpec) -> bool {
    spec.inherited_by_subagents || spec.origin.mcp_server().is_some()
}

/// A list of tools as agent configs (`allowedTools`) and slash commands (`allowed-tools`)
/// write it: tool names, `mcp__server`, `mcp__*`, and rules with specifiers such as
/// `Bash(git add:*)`.
///
/// ```
/// use toolhost_core::permission::ToolSelection;
///
/// use toolhost_core::{PermissionFamily, ToolSpec};
///
/// let selection = ToolSelection::parse_list("Read, Bash(git add:*), Bash(git status:*)").unwrap();
/// let grep = ToolSpec::new("Grep", "Searches files.").with_family(PermissionFamily::Read);
/// assert!(selection.names_tool(&grep)); // Read covers the reading tools
/// assert_eq!(selection.rules().len(), 3);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolSelection {
    rules: Vec<PermissionRule>,
}

impl ToolSelection {
    /// From a list of entries (`["Read", "Bash(git status)"]`).
    pub fn parse<I, S>(entries: I) -> Result<Self, RuleParseError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let rules = entries
            .into_iter()
            .map(|entry| PermissionRule::parse(entry.as_ref()))
            .collect::<Result<_, _>>()?;
        Ok(Self { rules })
    }

    /// From one comma-separated line, as in a slash command's front matter
    /// (`allowed-tools: Bash(git add:*), Read`); commas inside parentheses are kept.
    pub fn parse_list(line: &str) -> Result<Self, RuleParseError> {
        let mut entries = Vec::new();
        let mut depth = 0usize;
        let mut start = 0;
        for (index, c) in line.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                ',' if depth == 0 => {
                    entries.push(&line[start..index]);
                    start = index + 1;
                }
                _ => {}
            }
        }
        entries.push(&line[start..]);
        Self::parse(entries.into_iter().filter(|entry| !entry.trim().is_empty()))
    }

    /// The entries as rules. A slash command's entries also allow those calls without asking
    /// while it runs: add them to the allow list of that turn's policy.
    pub fn rules(&self) -> &[PermissionRule] {
        &self.rules
    }

    /// Whether some entry names this tool.
    pub fn names_tool(&self, spec: &ToolSpec) -> bool {
        self.rules.iter().any(|rule| rule.names_tool(spec))
    }

    /// The registry with only the tools some entry names (R16); `Bash(git add:*)` keeps
    /// `Bash`, whose calls the rules then narrow.
    pub fn apply(&self, registry: &ToolRegistry) -> ToolRegistry {
        registry.filter(|spec| self.names_tool(spec))
    }

    /// [`Self::apply`] for a sub-agent: its own selection plus what it inherits from its
    /// parent (R18).
    pub fn apply_for_subagent(&self, parent: &ToolRegistry) -> ToolRegistry {
        parent.filter(|spec| self.names_tool(spec) || is_inherited_by_subagent(spec))
    }
}

//! The paths inside a folder that rules refuse, for tools that walk or list it.

use crate::spec::ToolSpec;
use crate::subject::{PathFilter, SubjectPath};

use super::decision::RuleSet;
use super::matching::path_rule_matches;
use super::mode::PermissionMode;
use super::rule::PermissionRule;

/// Refuses the paths that a `deny` rule (or, outside `bypassPermissions`, an `ask` rule)
/// naming the tool matches: nobody can be asked about each file of a walk, so a path that
/// would ask is skipped too.
#[derive(Debug)]
pub(crate) struct RulePathFilter {
    refusing: Vec<PermissionRule>,
}

impl RulePathFilter {
    /// The filter for calls of `spec`, or `None` when no rule could refuse a path of it.
    pub(crate) fn for_tool(rules: &RuleSet, mode: PermissionMode, spec: &ToolSpec) -> Option<Self> {
        let ask: &[PermissionRule] = match mode {
            PermissionMode::BypassPermissions => &[],
            _ => &rules.ask,
        };
        let refusing: Vec<PermissionRule> = rules
            .deny
            .iter()
            .chain(ask)
            .filter(|rule| rule.has_path_pattern() && rule.names_tool(spec))
            .cloned()
            .collect();
        (!refusing.is_empty()).then_some(Self { refusing })
    }
}

impl PathFilter for RulePathFilter {
    fn allows(&self, path: &SubjectPath) -> bool {
        !self
            .refusing
            .iter()
            .any(|rule| path_rule_matches(rule, path))
    }
}

//! The paths inside a folder that rules refuse, for tools that walk or list it.

use crate::family::PermissionFamily;
use crate::spec::ToolSpec;
use crate::subject::{McpServerSubject, PathFilter, PermissionSubject, SubjectPath};

use super::decision::RuleSet;
use super::matching::{path_rule_matches, server_rule_matches};
use super::mode::PermissionMode;
use super::rule::PermissionRule;

/// Refuses the paths that a `deny` rule (or, outside `bypassPermissions`, an `ask` rule)
/// naming the tool matches: nobody can be asked about each file of a walk, so a path that
/// would ask is skipped too.
#[derive(Debug)]
pub(crate) struct RulePathFilter {
    refusing: Vec<PermissionRule>,
    /// `mcp__server` rules, and rules with a specifier naming the tool: what refuses an MCP
    /// server whose data the call finds (a resource listing over every server).
    refusing_servers: Vec<PermissionRule>,
}

impl RulePathFilter {
    /// The filter for calls of `spec`, or `None` when no rule could refuse a path or a server
    /// of it.
    pub(crate) fn for_tool(rules: &RuleSet, mode: PermissionMode, spec: &ToolSpec) -> Option<Self> {
        let ask: &[PermissionRule] = match mode {
            PermissionMode::BypassPermissions => &[],
            _ => &rules.ask,
        };
        let refusing_rules = || rules.deny.iter().chain(ask);
        let refusing: Vec<PermissionRule> = refusing_rules()
            .filter(|rule| rule.has_path_pattern() && rule.names_tool(spec))
            .cloned()
            .collect();
        let refusing_servers: Vec<PermissionRule> = if spec.family == PermissionFamily::McpData {
            refusing_rules()
                .filter(|rule| {
                    (rule.names_mcp_server() && !rule.has_specifier())
                        || (rule.has_specifier() && rule.names_tool(spec))
                })
                .cloned()
                .collect()
        } else {
            Vec::new()
        };
        (!refusing.is_empty() || !refusing_servers.is_empty()).then_some(Self {
            refusing,
            refusing_servers,
        })
    }
}

impl PathFilter for RulePathFilter {
    fn allows(&self, path: &SubjectPath) -> bool {
        !self
            .refusing
            .iter()
            .any(|rule| path_rule_matches(rule, path))
    }

    fn filters_paths(&self) -> bool {
        !self.refusing.is_empty()
    }

    fn allows_mcp_server(&self, server: &McpServerSubject) -> bool {
        let subject = PermissionSubject::McpServer(server.clone());
        !self
            .refusing_servers
            .iter()
            .any(|rule| rule.names_server_of(&subject) || server_rule_matches(rule, server))
    }
}

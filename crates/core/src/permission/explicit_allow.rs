//! The allow rules that name a tool's subjects outright, for tools that refuse something by
//! default unless the user named it.

use crate::spec::ToolSpec;
use crate::subject::{ExplicitAllow, PermissionSubject};

use super::matching::covering;
use super::rule::PermissionRule;

/// The allow rules (configured and remembered for the session) that have a specifier and
/// name the tool: `WebFetch(domain:localhost)` counts, `WebFetch` alone does not, since a
/// bare rule says "let it run", not "let it reach this".
#[derive(Debug)]
pub(crate) struct RuleExplicitAllow {
    spec: ToolSpec,
    rules: Vec<PermissionRule>,
}

impl RuleExplicitAllow {
    /// The rules for calls of `spec` among `allow`, or `None` when none names it.
    pub(crate) fn for_tool<'r>(
        allow: impl IntoIterator<Item = &'r PermissionRule>,
        spec: &ToolSpec,
    ) -> Option<Self> {
        let rules: Vec<PermissionRule> = allow
            .into_iter()
            .filter(|rule| rule.has_specifier() && rule.names_tool(spec))
            .cloned()
            .collect();
        (!rules.is_empty()).then(|| Self {
            spec: spec.clone(),
            rules,
        })
    }
}

impl ExplicitAllow for RuleExplicitAllow {
    fn allows_explicitly(&self, subject: &PermissionSubject) -> bool {
        let rules: Vec<&PermissionRule> = self.rules.iter().collect();
        covering(&rules, &self.spec, subject).is_some()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::family::PermissionFamily;

    fn allows(rules: &[&str], host: &str) -> bool {
        let spec =
            ToolSpec::new("Fetcher", "Reaches hosts.").with_family(PermissionFamily::Network);
        let rules: Vec<PermissionRule> = rules
            .iter()
            .map(|rule| PermissionRule::parse(rule).unwrap())
            .collect();
        RuleExplicitAllow::for_tool(&rules, &spec)
            .is_some_and(|allow| allow.allows_explicitly(&PermissionSubject::Domain(host.into())))
    }

    #[test]
    fn only_a_rule_naming_the_host_allows_it_explicitly() {
        assert!(allows(&["WebFetch(domain:localhost)"], "localhost"));
        assert!(allows(&["Fetcher(domain:example.com)"], "api.example.com"));
        assert!(!allows(&["WebFetch(domain:localhost)"], "127.0.0.1"));
        assert!(!allows(&["WebFetch", "Fetcher"], "localhost"));
        assert!(!allows(&["Read(domain:localhost)"], "localhost"));
    }
}

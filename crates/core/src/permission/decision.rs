//! The decision procedure: mode, rules and sensitivity turned into allow, ask or deny.

use serde::{Deserialize, Serialize};

use crate::spec::{Sensitivity, ToolSpec};
use crate::subject::PermissionSubject;

use super::hook::HookDecision;
use super::matching::{covering, first_matching};
use super::mode::PermissionMode;
use super::rule::PermissionRule;

/// The three rule lists, evaluated deny first, then ask, then allow.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RuleSet {
    /// Rules that refuse a call, whatever the mode.
    pub deny: Vec<PermissionRule>,
    /// Rules that make a call ask, even when it would be allowed otherwise.
    pub ask: Vec<PermissionRule>,
    /// Rules that let a call run without asking.
    pub allow: Vec<PermissionRule>,
}

impl RuleSet {
    /// No rules.
    pub fn new() -> Self {
        Self::default()
    }

    /// The list of that kind.
    pub fn list(&self, list: RuleList) -> &[PermissionRule] {
        match list {
            RuleList::Allow => &self.allow,
            RuleList::Ask => &self.ask,
            RuleList::Deny => &self.deny,
        }
    }

    /// Adds a rule to a list.
    pub fn push(&mut self, list: RuleList, rule: PermissionRule) {
        match list {
            RuleList::Allow => self.allow.push(rule),
            RuleList::Ask => self.ask.push(rule),
            RuleList::Deny => self.deny.push(rule),
        }
    }
}

/// One of the three rule lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleList {
    /// `allow`.
    Allow,
    /// `ask`.
    Ask,
    /// `deny`.
    Deny,
}

impl RuleList {
    /// The name of the list in configuration files.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Ask => "ask",
            Self::Deny => "deny",
        }
    }
}

/// What happens to a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// It runs.
    Allow,
    /// A person is asked first.
    Ask,
    /// It is refused.
    Deny,
}

/// A rule as the audit trail records it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleReference {
    /// The rule, normalised.
    pub rule: String,
    /// Where it was written, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
}

impl From<&PermissionRule> for RuleReference {
    fn from(rule: &PermissionRule) -> Self {
        Self {
            rule: rule.as_str().to_owned(),
            origin: rule.origin().map(str::to_owned),
        }
    }
}

/// What made a decision: the audit trail's `by` field.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DecisionSource {
    /// The shell command policy's deny list (holds in every mode).
    CommandPolicy {
        /// Why the policy refuses the command.
        reason: String,
    },
    /// Rules of one list (allow may need several rules to cover a compound command).
    Rules {
        /// Which list.
        list: RuleList,
        /// The rules that matched.
        rules: Vec<RuleReference>,
    },
    /// The permission mode.
    Mode {
        /// The mode.
        mode: PermissionMode,
    },
    /// The tool is in the safe set and never asks (R17).
    SafeTool,
    /// The tool's sensitivity: it asks unless a mode or rule allows it.
    Sensitivity {
        /// The tool's effective sensitivity.
        sensitivity: Sensitivity,
    },
    /// A PreToolUse hook.
    Hook {
        /// What the hook said.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// A person (or the non-interactive approver) answered.
    Approver {
        /// The answer.
        answer: super::approver::AnswerKind,
        /// The message given with a refusal.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
}

/// The outcome of the decision procedure for one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evaluation {
    /// Allow, ask or deny.
    pub decision: Decision,
    /// What made the decision.
    pub source: DecisionSource,
    /// Why, in a sentence for the model or the person asked.
    pub reason: String,
}

/// The sensitivity the permission system applies: foreign tools (MCP servers' and custom
/// modules') always ask (R29), whatever they declare; built-in tools are taken at their word.
pub fn effective_sensitivity(spec: &ToolSpec) -> Sensitivity {
    if spec.origin.is_foreign() {
        Sensitivity::Sensitive
    } else {
        spec.sensitivity
    }
}

/// Everything the decision procedure looks at.
#[derive(Clone, Copy, Debug)]
pub struct DecisionInput<'a> {
    /// The mode.
    pub mode: PermissionMode,
    /// The configured rules.
    pub rules: &'a RuleSet,
    /// Rules remembered from "allow for this session" answers.
    pub session_allow: &'a [PermissionRule],
    /// The tool's spec.
    pub spec: &'a ToolSpec,
    /// What the tool says rules should match.
    pub subject: &'a PermissionSubject,
    /// What a PreToolUse hook decided, when one did.
    pub hook: Option<HookDecision>,
}

/// The decision procedure, in order:
///
/// 1. the shell command policy's deny list refuses;
/// 2. a matching `deny` rule refuses;
/// 3. a hook that says `deny` refuses;
/// 4. in `plan` mode, a tool that is not read-only is refused;
/// 5. in `bypassPermissions` mode, everything else runs;
/// 6. a hook that says `ask`, or a matching `ask` rule, asks;
/// 7. a hook that says `allow` allows;
/// 8. `allow` rules (and rules allowed for the session) that cover every part of the call
///    allow it;
/// 9. safe tools run; in `acceptEdits`, edit tools run;
/// 10. everything else asks.
pub fn evaluate(input: DecisionInput<'_>) -> Evaluation {
    let DecisionInput {
        mode,
        rules,
        session_allow,
        spec,
        subject,
        hook,
    } = input;
    let tool = spec.name.as_str();
    if let PermissionSubject::Shell(shell) = subject
        && let Some(reason) = &shell.denied
    {
        return Evaluation {
            decision: Decision::Deny,
            reason: format!("The command is refused by the command policy: {reason}"),
            source: DecisionSource::CommandPolicy {
                reason: reason.clone(),
            },
        };
    }
    if let Some(rule) = first_matching(&rules.deny, spec, subject) {
        return rule_evaluation(Decision::Deny, RuleList::Deny, vec![rule], tool);
    }
    if hook == Some(HookDecision::Deny) {
        return hook_evaluation(Decision::Deny, tool);
    }
    if mode == PermissionMode::Plan && !spec.annotations.read_only {
        return Evaluation {
            decision: Decision::Deny,
            reason: format!(
                "'{tool}' is not read-only, and plan mode only runs read-only tools. Finish the \
                 plan; the user leaves plan mode to carry it out."
            ),
            source: DecisionSource::Mode { mode },
        };
    }
    if mode == PermissionMode::BypassPermissions {
        return mode_allows(mode, tool);
    }
    if hook == Some(HookDecision::Ask) {
        return hook_evaluation(Decision::Ask, tool);
    }
    if let Some(rule) = first_matching(&rules.ask, spec, subject) {
        return rule_evaluation(Decision::Ask, RuleList::Ask, vec![rule], tool);
    }
    if hook == Some(HookDecision::Allow) {
        return hook_evaluation(Decision::Allow, tool);
    }
    let allow: Vec<&PermissionRule> = rules.allow.iter().chain(session_allow).collect();
    if let Some(used) = covering(&allow, spec, subject) {
        return rule_evaluation(Decision::Allow, RuleList::Allow, used, tool);
    }
    let sensitivity = effective_sensitivity(spec);
    match (sensitivity, mode) {
        (Sensitivity::Safe, _) => Evaluation {
            decision: Decision::Allow,
            reason: format!("'{tool}' is a safe tool and never asks."),
            source: DecisionSource::SafeTool,
        },
        (Sensitivity::Edit, PermissionMode::AcceptEdits) => mode_allows(mode, tool),
        (sensitivity, _) => Evaluation {
            decision: Decision::Ask,
            reason: match sensitivity {
                Sensitivity::Edit => format!("'{tool}' changes files."),
                _ => format!("'{tool}' needs confirmation before it runs."),
            },
            source: DecisionSource::Sensitivity { sensitivity },
        },
    }
}

fn rule_evaluation(
    decision: Decision,
    list: RuleList,
    rules: Vec<&PermissionRule>,
    tool: &str,
) -> Evaluation {
    let named = rules
        .iter()
        .map(|rule| match rule.origin() {
            Some(origin) => format!("'{rule}' ({origin})"),
            None => format!("'{rule}'"),
        })
        .collect::<Vec<_>>()
        .join(", ");
    let reason = match decision {
        Decision::Deny => format!(
            "Calling '{tool}' this way is denied by the permission rule {named}. Do not retry \
             it; find another way or ask the user."
        ),
        Decision::Ask => format!("The permission rule {named} asks before this call."),
        Decision::Allow => format!("Allowed by the permission rule {named}."),
    };
    Evaluation {
        decision,
        reason,
        source: DecisionSource::Rules {
            list,
            rules: rules.into_iter().map(RuleReference::from).collect(),
        },
    }
}

fn hook_evaluation(decision: Decision, tool: &str) -> Evaluation {
    let reason = match decision {
        Decision::Deny => format!("A PreToolUse hook refused the call of '{tool}'."),
        Decision::Ask => format!("A PreToolUse hook asks before '{tool}' runs."),
        Decision::Allow => format!("A PreToolUse hook allowed '{tool}'."),
    };
    Evaluation {
        decision,
        reason,
        source: DecisionSource::Hook { reason: None },
    }
}

fn mode_allows(mode: PermissionMode, tool: &str) -> Evaluation {
    Evaluation {
        decision: Decision::Allow,
        reason: format!("'{tool}' runs without asking in {mode} mode."),
        source: DecisionSource::Mode { mode },
    }
}

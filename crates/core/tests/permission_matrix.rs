//! The decision procedure over every mode × sensitivity × rule kind (R17, R37).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use pretty_assertions::assert_eq;
use support::{paths, spec_like};
use toolhost_core::permission::{
    Decision, DecisionInput, PermissionMode, PermissionRule, RuleList, RuleSet, evaluate,
};
use toolhost_core::{PermissionSubject, Sensitivity, ShellSubject, ToolAnnotations, ToolSpec};

/// One tool per sensitivity, with a subject and a specifier rule that matches it.
struct Case {
    spec: ToolSpec,
    subject: PermissionSubject,
    specifier_rule: &'static str,
}

fn cases() -> Vec<Case> {
    let git_status = PermissionSubject::Shell(ShellSubject {
        commands: vec![vec!["git".into(), "status".into()]],
        fully_analysed: true,
        ..ShellSubject::default()
    });
    vec![
        Case {
            spec: spec_like("Read")
                .with_sensitivity(Sensitivity::Safe)
                .with_annotations(ToolAnnotations::READ_ONLY),
            subject: paths(&["src/lib.rs"]),
            specifier_rule: "Read(src/**)",
        },
        Case {
            spec: spec_like("Write").with_sensitivity(Sensitivity::Edit),
            subject: paths(&["src/lib.rs"]),
            specifier_rule: "Edit(**/*.rs)",
        },
        Case {
            spec: spec_like("Bash"),
            subject: git_status,
            specifier_rule: "Bash(git status)",
        },
        // An MCP tool is sensitive whatever its server declares (R29).
        Case {
            spec: spec_like("mcp__srv__lookup")
                .with_sensitivity(Sensitivity::Safe)
                .with_annotations(ToolAnnotations::READ_ONLY),
            subject: PermissionSubject::None,
            specifier_rule: "mcp__srv",
        },
    ]
}

#[derive(Clone, Copy, Debug)]
enum RuleKind {
    None,
    AllowTool,
    AskTool,
    DenyTool,
    AllowSpecifier,
    AskSpecifier,
    DenySpecifier,
}

fn rules_for(kind: RuleKind, case: &Case) -> RuleSet {
    let mut rules = RuleSet::new();
    let (list, text) = match kind {
        RuleKind::None => return rules,
        RuleKind::AllowTool => (RuleList::Allow, case.spec.name.as_str()),
        RuleKind::AskTool => (RuleList::Ask, case.spec.name.as_str()),
        RuleKind::DenyTool => (RuleList::Deny, case.spec.name.as_str()),
        RuleKind::AllowSpecifier => (RuleList::Allow, case.specifier_rule),
        RuleKind::AskSpecifier => (RuleList::Ask, case.specifier_rule),
        RuleKind::DenySpecifier => (RuleList::Deny, case.specifier_rule),
    };
    rules.push(list, PermissionRule::parse(text).unwrap());
    rules
}

fn letter(decision: Decision) -> char {
    match decision {
        Decision::Allow => 'A',
        Decision::Ask => '?',
        Decision::Deny => 'D',
    }
}

/// Columns: Read (safe, read-only), Write (edit), Bash (sensitive), mcp__srv__lookup (MCP,
/// declared safe and read-only). A = allow, ? = ask, D = deny.
const EXPECTED: [(PermissionMode, [(RuleKind, &str); 7]); 4] = [
    (
        PermissionMode::Default,
        [
            (RuleKind::None, "A???"),
            (RuleKind::AllowTool, "AAAA"),
            (RuleKind::AskTool, "????"),
            (RuleKind::DenyTool, "DDDD"),
            (RuleKind::AllowSpecifier, "AAAA"),
            (RuleKind::AskSpecifier, "????"),
            (RuleKind::DenySpecifier, "DDDD"),
        ],
    ),
    (
        PermissionMode::AcceptEdits,
        [
            (RuleKind::None, "AA??"),
            (RuleKind::AllowTool, "AAAA"),
            (RuleKind::AskTool, "????"),
            (RuleKind::DenyTool, "DDDD"),
            (RuleKind::AllowSpecifier, "AAAA"),
            (RuleKind::AskSpecifier, "????"),
            (RuleKind::DenySpecifier, "DDDD"),
        ],
    ),
    (
        PermissionMode::Plan,
        [
            (RuleKind::None, "ADD?"),
            (RuleKind::AllowTool, "ADDA"),
            (RuleKind::AskTool, "?DD?"),
            (RuleKind::DenyTool, "DDDD"),
            (RuleKind::AllowSpecifier, "ADDA"),
            (RuleKind::AskSpecifier, "?DD?"),
            (RuleKind::DenySpecifier, "DDDD"),
        ],
    ),
    (
        PermissionMode::BypassPermissions,
        [
            (RuleKind::None, "AAAA"),
            (RuleKind::AllowTool, "AAAA"),
            (RuleKind::AskTool, "AAAA"),
            (RuleKind::DenyTool, "DDDD"),
            (RuleKind::AllowSpecifier, "AAAA"),
            (RuleKind::AskSpecifier, "AAAA"),
            (RuleKind::DenySpecifier, "DDDD"),
        ],
    ),
];

#[test]
fn every_mode_sensitivity_and_rule_kind_decides_as_documented() {
    let cases = cases();
    let mut actual = Vec::new();
    let mut expected = Vec::new();
    for (mode, rows) in EXPECTED {
        for (kind, want) in rows {
            let got: String = cases
                .iter()
                .map(|case| {
                    let rules = rules_for(kind, case);
                    letter(
                        evaluate(DecisionInput {
                            mode,
                            rules: &rules,
                            session_allow: &[],
                            spec: &case.spec,
                            subject: &case.subject,
                            hook: None,
                        })
                        .decision,
                    )
                })
                .collect();
            actual.push(format!("{mode:>17} {kind:?}: {got}"));
            expected.push(format!("{mode:>17} {kind:?}: {want}"));
        }
    }
    assert_eq!(actual.join("\n"), expected.join("\n"));
}

#[test]
fn the_shell_deny_list_holds_even_in_bypass_mode_and_against_allow_rules() {
    let spec = spec_like("Bash");
    let subject = PermissionSubject::Shell(ShellSubject {
        commands: vec![vec!["rm".into(), "-rf".into(), "/".into()]],
        fully_analysed: true,
        denied: Some("recursive delete of /".into()),
        ..ShellSubject::default()
    });
    let mut rules = RuleSet::new();
    rules.push(RuleList::Allow, PermissionRule::parse("Bash").unwrap());
    for mode in PermissionMode::ALL {
        let evaluation = evaluate(DecisionInput {
            mode,
            rules: &rules,
            session_allow: &[],
            spec: &spec,
            subject: &subject,
            hook: None,
        });
        assert_eq!(evaluation.decision, Decision::Deny, "{mode}");
        assert!(evaluation.reason.contains("recursive delete of /"));
    }
}

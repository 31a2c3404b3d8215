//! Permission subjects and specs for core's permission tests: core knows no tool, so these
//! stand in for what the tools crate and the MCP client report. The test tools live in
//! `toolhost_test_support::test_tools`.

#![allow(dead_code)]

use toolhost_core::ToolSpec;

/// A path as a file tool reports it, in a workspace at `/w`: relative paths inside it,
/// absolute ones outside it.
pub fn path(text: &str) -> toolhost_core::SubjectPath {
    if text.starts_with('/') {
        toolhost_core::SubjectPath::outside(text)
    } else {
        toolhost_core::SubjectPath::in_workspace("/w", text)
    }
}

/// The subject of a file tool's call on these paths (see [`path`]).
pub fn paths(texts: &[&str]) -> toolhost_core::PermissionSubject {
    toolhost_core::PermissionSubject::Paths(texts.iter().map(|text| path(text)).collect())
}

/// A spec named like a built-in, in the family the built-in declares (the tools crate sets
/// these; core knows no tool), or an MCP tool's origin for `mcp__<server>__<tool>`.
pub fn spec_like(name: &str) -> ToolSpec {
    use toolhost_core::{PermissionFamily, ToolOrigin};
    let spec = ToolSpec::new(name, "a tool");
    match name {
        "Read" | "Grep" | "Glob" | "ListDir" => spec.with_family(PermissionFamily::Read),
        "Write" | "Edit" => spec.with_family(PermissionFamily::Edit),
        "Bash" => spec.with_family(PermissionFamily::Shell),
        "WebFetch" => spec.with_family(PermissionFamily::Network),
        _ => match name
            .strip_prefix("mcp__")
            .and_then(|rest| rest.split_once("__"))
        {
            Some((server, _)) => spec.with_origin(ToolOrigin::mcp(server)),
            None => spec,
        },
    }
}

/// The rules `texts`, all in `list`.
#[allow(clippy::unwrap_used)]
pub fn rules(
    list: toolhost_core::permission::RuleList,
    texts: &[&str],
) -> toolhost_core::permission::RuleSet {
    let mut set = toolhost_core::permission::RuleSet::new();
    for text in texts {
        set.push(
            list,
            toolhost_core::permission::PermissionRule::parse(text).unwrap(),
        );
    }
    set
}

/// The decision in the default mode on a call of a tool named `tool` (see [`spec_like`]).
pub fn decide(
    tool: &str,
    rules: &toolhost_core::permission::RuleSet,
    subject: toolhost_core::PermissionSubject,
) -> toolhost_core::permission::Decision {
    use toolhost_core::permission::{DecisionInput, PermissionMode, evaluate};
    let spec = spec_like(tool);
    evaluate(DecisionInput {
        mode: PermissionMode::Default,
        rules,
        session_allow: &[],
        spec: &spec,
        subject: &subject,
        hook: None,
    })
    .decision
}

//! Matching rules against a call: its tool name and the subject the tool reports.
//!
//! Deny and ask rules match a call when they match **any** part of it (one simple command of
//! a compound shell command, one of the paths); allow rules must cover **every** part, each
//! part by some allow rule, before a call is allowed without asking.

use crate::spec::ToolSpec;
use crate::subject::{McpServerSubject, PermissionSubject, ShellSubject, SubjectPath};

use super::rule::{CommandPattern, PathPattern, PermissionRule, Specifier};

/// The first rule that matches any part of the call.
pub(crate) fn first_matching<'r>(
    rules: impl IntoIterator<Item = &'r PermissionRule>,
    spec: &ToolSpec,
    subject: &PermissionSubject,
) -> Option<&'r PermissionRule> {
    rules
        .into_iter()
        .find(|rule| rule.names_call(spec, subject) && matches_any_part(rule, subject))
}

/// The rules that together cover every part of the call, or `None` when some part is not
/// covered. A bare rule (`Bash`) covers the whole call on its own.
pub(crate) fn covering<'r>(
    rules: &[&'r PermissionRule],
    spec: &ToolSpec,
    subject: &PermissionSubject,
) -> Option<Vec<&'r PermissionRule>> {
    let candidates: Vec<&PermissionRule> = rules
        .iter()
        .copied()
        .filter(|rule| rule.names_call(spec, subject))
        .collect();
    if let Some(bare) = candidates.iter().find(|rule| !rule.has_specifier()) {
        return Some(vec![*bare]);
    }
    let mut used: Vec<&PermissionRule> = Vec::new();
    let mut cover = |found: Option<&&'r PermissionRule>| -> bool {
        let Some(rule) = found else { return false };
        if !used.iter().any(|seen| std::ptr::eq(*seen, *rule)) {
            used.push(rule);
        }
        true
    };
    let covered = match subject {
        PermissionSubject::None => false,
        PermissionSubject::Shell(shell) => {
            shell_can_be_auto_allowed(shell)
                && shell.commands.iter().all(|argv| {
                    cover(
                        candidates
                            .iter()
                            .find(|rule| command_rule_matches(rule, argv, Reading::Allow)),
                    )
                })
        }
        PermissionSubject::Paths(paths) => {
            !paths.is_empty()
                && paths
                    .iter()
                    .all(|path| cover(candidates.iter().find(|rule| path_rule_matches(rule, path))))
        }
        PermissionSubject::Domain(host) => cover(
            candidates
                .iter()
                .find(|rule| domain_rule_matches(rule, host)),
        ),
        PermissionSubject::McpServer(server) => cover(
            candidates
                .iter()
                .find(|rule| server_rule_matches(rule, server)),
        ),
    };
    covered.then_some(used)
}

/// A specifier rule may only auto-allow a shell command that was analysed completely, runs
/// something, and stays inside the workspace.
fn shell_can_be_auto_allowed(shell: &ShellSubject) -> bool {
    shell.fully_analysed && !shell.commands.is_empty() && shell.outside_workspace.is_empty()
}

fn matches_any_part(rule: &PermissionRule, subject: &PermissionSubject) -> bool {
    if !rule.has_specifier() {
        return true;
    }
    match subject {
        PermissionSubject::None => false,
        PermissionSubject::Shell(shell) => shell
            .commands
            .iter()
            .any(|argv| command_rule_matches(rule, argv, Reading::Refuse)),
        PermissionSubject::Paths(paths) => paths.iter().any(|path| path_rule_matches(rule, path)),
        PermissionSubject::Domain(host) => domain_rule_matches(rule, host),
        PermissionSubject::McpServer(server) => server_rule_matches(rule, server),
    }
}

/// `read_mcp_resource(docs)`: the specifier is the server's configured name (or the part of
/// its tools' names, `mcp__docs`).
pub(crate) fn server_rule_matches(rule: &PermissionRule, server: &McpServerSubject) -> bool {
    match rule.specifier() {
        Some(Specifier::Pattern { command, .. }) => {
            !command.prefix
                && matches!(command.words.as_slice(), [word] if *word == server.name || *word == server.segment)
        }
        _ => false,
    }
}

/// Whether a rule is read to let a command through or to stop it: the two differ only on
/// what is conservative.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reading {
    Allow,
    Refuse,
}

fn command_rule_matches(rule: &PermissionRule, argv: &[String], reading: Reading) -> bool {
    match rule.specifier() {
        Some(Specifier::Pattern { command, .. }) => command_matches(command, argv, reading),
        _ => false,
    }
}

/// Whether a path rule matches a path in any of its forms.
pub(crate) fn path_rule_matches(rule: &PermissionRule, path: &SubjectPath) -> bool {
    match rule.specifier() {
        Some(Specifier::Pattern {
            paths: Some(pattern),
            ..
        }) => path_matches(pattern, path),
        _ => false,
    }
}

fn domain_rule_matches(rule: &PermissionRule, host: &str) -> bool {
    let Some(Specifier::Domain {
        host: rule_host,
        subdomains_only,
    }) = rule.specifier()
    else {
        return false;
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let is_subdomain = host
        .strip_suffix(rule_host.as_str())
        .is_some_and(|rest| rest.ends_with('.'));
    is_subdomain || (!subdomains_only && host == *rule_host)
}

/// Word by word: `git status` matches exactly `["git", "status"]`; `git status:*` matches
/// argv starting with those two words. Leading `NAME=value` assignments could change what
/// the program does (`PAGER=sh git log`): an allow rule never matches such a command, while
/// deny and ask rules look past them (`X=1 rm -rf x` is still `rm`).
fn command_matches(pattern: &CommandPattern, argv: &[String], reading: Reading) -> bool {
    let assignments = argv.iter().take_while(|word| is_assignment(word)).count();
    if assignments > 0 && reading == Reading::Allow {
        return false;
    }
    let argv = &argv[assignments..];
    if pattern.prefix {
        argv.len() >= pattern.words.len()
            && argv
                .iter()
                .zip(&pattern.words)
                .all(|(word, want)| word == want)
    } else {
        argv == pattern.words.as_slice()
    }
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name
                .bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_')
    })
}

/// An absolute pattern looks at the absolute form, a relative one at the form relative to the
/// workspace (a path outside it has none, so relative rules never name it).
fn path_matches(pattern: &PathPattern, path: &SubjectPath) -> bool {
    if pattern.absolute {
        pattern.set.is_match(&path.absolute)
    } else {
        path.relative
            .as_deref()
            .is_some_and(|relative| pattern.set.is_match(relative))
    }
}

//! Approvals: asking a person about a call, and the rules an approval can be remembered as.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::session::SessionInfo;
use crate::subject::PermissionSubject;

use super::rule::PermissionRule;

/// A call waiting for a person's answer.
#[derive(Clone, Debug, PartialEq)]
pub struct ApprovalRequest {
    /// The id of the call, as its caller gave it (an editor shows the question on that call).
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// The arguments it would run with.
    pub args: Value,
    /// Why it asks.
    pub reason: String,
    /// Risks to point out (sudo, `curl | sh`, paths outside the workspace, …).
    pub warnings: Vec<String>,
    /// The rules "allow for this session" would remember; also what to put in an allow list
    /// to stop being asked.
    pub suggested_rules: Vec<PermissionRule>,
    /// The session the call belongs to, so an approver serving several clients (the MCP
    /// server) knows whom to ask.
    pub session: SessionInfo,
}

/// A person's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApprovalAnswer {
    /// Run this call only.
    AllowOnce,
    /// Run it, and remember the suggested rules as allow rules for the rest of the session.
    AllowForSession,
    /// Refuse; the message goes back to the model.
    Deny {
        /// What the model should know (what to do instead).
        message: String,
    },
}

impl ApprovalAnswer {
    /// The kind of answer, as the audit trail records it.
    pub fn kind(&self) -> AnswerKind {
        match self {
            Self::AllowOnce => AnswerKind::AllowOnce,
            Self::AllowForSession => AnswerKind::AllowForSession,
            Self::Deny { .. } => AnswerKind::Deny,
        }
    }
}

/// [`ApprovalAnswer`] without its message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerKind {
    /// Allowed once.
    AllowOnce,
    /// Allowed for the session.
    AllowForSession,
    /// Refused.
    Deny,
}

/// Asks a person whether a call may run: a terminal prompt, an MCP elicitation, a chat UI.
#[async_trait::async_trait]
pub trait Approver: Send + Sync {
    /// Waits for the answer. The pipeline stops waiting when the call is cancelled.
    async fn approve(&self, request: &ApprovalRequest) -> ApprovalAnswer;

    /// Whether it asks a person (`true`, the default) or answers by itself, as
    /// [`NonInteractiveApprover`] does. Where nobody can be asked (a call through the MCP
    /// bridge, from inside a Bash command), [`PermissionPolicy::without_asking`] keeps an
    /// approver that does not ask and refuses instead of asking one that does.
    ///
    /// [`PermissionPolicy::without_asking`]: super::PermissionPolicy::without_asking
    fn is_interactive(&self) -> bool {
        true
    }
}

/// The approver when nobody can be asked: approves everything (`--yes`) or refuses with a
/// message that says exactly how to allow the call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NonInteractiveApprover {
    approve_all: bool,
}

impl NonInteractiveApprover {
    /// Approves every call that asks (the `--yes` flag).
    pub fn approving() -> Self {
        Self { approve_all: true }
    }

    /// Refuses every call that asks, explaining how to allow it.
    pub fn refusing() -> Self {
        Self { approve_all: false }
    }
}

#[async_trait::async_trait]
impl Approver for NonInteractiveApprover {
    async fn approve(&self, request: &ApprovalRequest) -> ApprovalAnswer {
        if self.approve_all {
            ApprovalAnswer::AllowOnce
        } else {
            ApprovalAnswer::Deny {
                message: refusal_message(request),
            }
        }
    }

    fn is_interactive(&self) -> bool {
        false
    }
}

/// "X needs approval and nobody can be asked; to allow it …", naming the exact flag and
/// configuration line.
pub fn refusal_message(request: &ApprovalRequest) -> String {
    let rules: Vec<String> = if request.suggested_rules.is_empty() {
        vec![request.tool.clone()]
    } else {
        request
            .suggested_rules
            .iter()
            .map(ToString::to_string)
            .collect()
    };
    let flags = rules
        .iter()
        .map(|rule| format!("--allow '{rule}'"))
        .collect::<Vec<_>>()
        .join(" ");
    let list = rules
        .iter()
        .map(|rule| format!("\"{}\"", rule.replace('\\', "\\\\").replace('"', "\\\"")))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "{} The call was not run: it needs the user's approval and nobody can be asked here. \
         To allow it, the user can re-run with `--yes`, pass `{flags}`, or add \
         `allow = [{list}]` under `[permissions]` in .toolhost/config.toml.",
        request.reason
    )
}

/// The rules that would allow this call and as little else as practical: per simple command
/// `Bash(git status:*)` (program and subcommand) or the exact command; per path the exact
/// path; the domain; the bare tool when the tool reports nothing.
pub fn suggested_rules(tool: &str, subject: &PermissionSubject) -> Vec<PermissionRule> {
    let texts: Vec<String> = match subject {
        PermissionSubject::None => vec![tool.to_owned()],
        PermissionSubject::Shell(shell) => shell
            .commands
            .iter()
            .filter_map(|argv| command_rule(tool, argv))
            .collect(),
        PermissionSubject::Paths(paths) => paths
            .iter()
            .map(|path| match &path.relative {
                Some(relative) => format!("{tool}(/{})", escape_glob(relative)),
                None => format!("{tool}(/{})", escape_glob(&path.absolute)),
            })
            .collect(),
        PermissionSubject::Domain(host) => vec![format!("{tool}(domain:{host})")],
        PermissionSubject::McpServer(server) => vec![format!("{tool}({})", server.name)],
    };
    let mut rules: Vec<PermissionRule> = Vec::new();
    for text in texts {
        if let Ok(rule) = PermissionRule::parse(&text)
            && !rules.contains(&rule)
        {
            rules.push(rule);
        }
    }
    rules
}

fn command_rule(tool: &str, argv: &[String]) -> Option<String> {
    let expressible = |word: &String| {
        !word.is_empty() && !word.contains(|c: char| c.is_whitespace() || c == '(' || c == ')')
    };
    if argv.is_empty() || !argv.iter().all(expressible) {
        return None;
    }
    let subcommand = argv.get(1).filter(|word| {
        word.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == ':')
            && !word.starts_with('-')
    });
    Some(match subcommand {
        Some(subcommand) => format!("{tool}({} {subcommand}:*)", argv[0]),
        None => format!("{tool}({})", argv.join(" ")),
    })
}

fn escape_glob(path: &str) -> String {
    let mut escaped = String::with_capacity(path.len());
    for c in path.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

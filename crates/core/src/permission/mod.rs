//! The permission model (R16–R18, R37): modes, rules, the decision procedure, approvals,
//! PreToolUse hooks, the audit trail, and filtered registries.
//!
//! Everything here is pure policy: configuration files, hook commands and the audit file live
//! in `toolhost-agent`, the terminal prompt in the `toolhost` binary.
//!
//! A call is decided in this order ([`evaluate`]): the shell command policy's deny list, `deny`
//! rules, a hook's `deny`, plan mode (read-only tools only), `bypassPermissions` (everything
//! else runs), a hook's `ask` and `ask` rules, a hook's `allow`, `allow` rules (which must
//! cover every simple command of a compound shell command and every path), the safe set and
//! `acceptEdits`; whatever is left asks the [`Approver`].
//!
//! Rules are `Tool` or `Tool(specifier)`:
//!
//! | rule | matches |
//! |---|---|
//! | `Bash(git status)` | a simple command that is exactly `git status` |
//! | `Bash(npm run test:*)` | a simple command whose words start with `npm run test` |
//! | `Read(src/**)`, `Edit(**/*.rs)`, `Write(/docs/*.md)` | paths, gitignore-style, relative to the workspace; `//abs/**` and `~/…` for absolute paths |
//! | `WebFetch(domain:example.com)` | that host and its subdomains (`domain:*.example.com`: subdomains only) |
//! | `mcp__github`, `mcp__github__create_issue`, `mcp__*` | an MCP server's tools, one MCP tool, every MCP tool |
//!
//! Core names no tool. A rule names tools by name, and by what each tool declares on its
//! [`crate::ToolSpec`]: `Read(…)`, `Edit(…)`, `Bash(…)` and `WebFetch(…)` cover every tool of
//! that [`crate::PermissionFamily`], `mcp__server` every tool whose [`crate::ToolOrigin`] is
//! that server. A tool reports what its call touches as a [`crate::PermissionSubject`].

mod approver;
mod audit;
mod decision;
mod explicit_allow;
mod filter;
mod hook;
mod matching;
mod mode;
mod path_filter;
mod policy;
mod rule;

pub use approver::{
    AnswerKind, ApprovalAnswer, ApprovalRequest, Approver, NonInteractiveApprover, refusal_message,
    suggested_rules,
};
pub use audit::{AuditEntry, AuditError, AuditSink, arguments_digest};
pub use decision::{
    Decision, DecisionInput, DecisionSource, Evaluation, RuleList, RuleReference, RuleSet,
    effective_sensitivity, evaluate,
};
pub use filter::{ToolSelection, is_inherited_by_subagent};
pub use hook::{HookCall, HookDecision, HookVerdict, PreToolUseHook};
pub use mode::{PermissionMode, UnknownMode};
pub use policy::{PermissionPolicy, PermissionPolicyBuilder, SESSION_ORIGIN};
pub use rule::{PermissionRule, RuleParseError};

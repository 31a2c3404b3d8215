//! [`PermissionPolicy`]: the permission system as the pipeline's [`Authorizer`].

use std::sync::{Arc, PoisonError, RwLock};
use std::time::SystemTime;

use serde_json::Value;

use crate::family::PermissionFamily;
use crate::pipeline::authorize::{Amendment, Authorization, Authorizer, CallRequest};
use crate::session::SessionInfo;
use crate::spec::{Sensitivity, ToolSpec};
use crate::subject::{ExplicitAllow, PathFilter, PermissionSubject};

use super::approver::{
    ApprovalAnswer, ApprovalRequest, Approver, NonInteractiveApprover, suggested_rules,
};
use super::audit::{AuditEntry, AuditSink, arguments_digest};
use super::decision::{
    Decision, DecisionInput, DecisionSource, Evaluation, RuleList, RuleSet, effective_sensitivity,
    evaluate,
};
use super::explicit_allow::RuleExplicitAllow;
use super::hook::{HookCall, HookVerdict, PreToolUseHook};
use super::mode::PermissionMode;
use super::path_filter::RulePathFilter;
use super::rule::PermissionRule;

/// Where rules remembered from "allow for this session" answers say they came from.
pub const SESSION_ORIGIN: &str = "allowed for this session";

/// The permission system of one session: mode, rules, PreToolUse hook, approver and audit
/// trail, installed in a registry with [`crate::ToolRegistryBuilder::authorizer`].
///
/// ```
/// use std::sync::Arc;
/// use toolhost_core::permission::{PermissionMode, PermissionPolicy, PermissionRule, RuleList};
/// use toolhost_core::ToolRegistry;
///
/// let policy = PermissionPolicy::builder()
///     .mode(PermissionMode::AcceptEdits)
///     .rule(RuleList::Allow, PermissionRule::parse("Bash(git status)").unwrap())
///     .rule(RuleList::Deny, PermissionRule::parse("Read(**/.env)").unwrap())
///     .build();
/// let registry = ToolRegistry::builder().authorizer(Arc::new(policy)).build();
/// # drop(registry);
/// ```
pub struct PermissionPolicy {
    /// Shared with the policies [`Self::without_asking`] makes, and switchable (`/mode`).
    mode: Arc<RwLock<PermissionMode>>,
    rules: RuleSet,
    /// Shared with the policies [`Self::without_asking`] makes.
    session_allow: Arc<RwLock<Vec<PermissionRule>>>,
    approver: Arc<dyn Approver>,
    pre_tool_use: Option<Arc<dyn PreToolUseHook>>,
    audit: Option<Arc<dyn AuditSink>>,
}

impl std::fmt::Debug for PermissionPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PermissionPolicy")
            .field("mode", &self.mode())
            .field("rules", &self.rules)
            .field("session_allow", &self.session_rules())
            .field("pre_tool_use", &self.pre_tool_use.is_some())
            .field("audit", &self.audit.is_some())
            .finish_non_exhaustive()
    }
}

impl PermissionPolicy {
    /// A builder: `default` mode, no rules, the refusing [`NonInteractiveApprover`], no hook,
    /// no audit trail.
    pub fn builder() -> PermissionPolicyBuilder {
        PermissionPolicyBuilder::default()
    }

    /// The mode.
    pub fn mode(&self) -> PermissionMode {
        *self.mode.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Switches the mode for every call from now on (this policy and those
    /// [`Self::without_asking`] made). The tools a model is offered for a mode
    /// (`registry.for_mode`) are the caller's to change.
    pub fn set_mode(&self, mode: PermissionMode) {
        *self.mode.write().unwrap_or_else(PoisonError::into_inner) = mode;
    }

    /// The same policy (mode, rules, rules allowed for the session, hook, audit trail) for
    /// calls where nobody can be asked, such as those reaching the MCP bridge from inside a
    /// Bash command: a call that would ask a person is refused with
    /// [`refusal_message`](super::approver::refusal_message) instead. An approver that asks
    /// nobody ([`Approver::is_interactive`] is `false`, as with `--yes`) is kept.
    pub fn without_asking(&self) -> Self {
        let approver: Arc<dyn Approver> = if self.approver.is_interactive() {
            Arc::new(NonInteractiveApprover::refusing())
        } else {
            Arc::clone(&self.approver)
        };
        Self {
            mode: Arc::clone(&self.mode),
            rules: self.rules.clone(),
            session_allow: Arc::clone(&self.session_allow),
            approver,
            pre_tool_use: self.pre_tool_use.clone(),
            audit: self.audit.clone(),
        }
    }

    /// The configured rules.
    pub fn rules(&self) -> &RuleSet {
        &self.rules
    }

    /// The rules remembered from "allow for this session" answers.
    pub fn session_rules(&self) -> Vec<PermissionRule> {
        self.session_allow
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The decision procedure alone (no hook, approver or audit): what would happen to a
    /// call of `spec` on `subject`.
    pub fn evaluate(
        &self,
        spec: &ToolSpec,
        subject: &PermissionSubject,
        hook: Option<super::hook::HookDecision>,
    ) -> Evaluation {
        let session_allow = self.session_rules();
        evaluate(DecisionInput {
            mode: self.mode(),
            rules: &self.rules,
            session_allow: &session_allow,
            spec,
            subject,
            hook,
        })
    }

    async fn decide(&self, request: CallRequest<'_>) -> Authorization {
        let verdict = match &self.pre_tool_use {
            Some(hook) => {
                hook.before(HookCall {
                    call_id: request.call_id,
                    tool: &request.spec.name,
                    args: request.args,
                    session: request.session,
                    mode: self.mode(),
                })
                .await
            }
            None => HookVerdict::default(),
        };
        let HookVerdict {
            decision: hook_decision,
            reason: hook_reason,
            updated_args,
            context,
        } = verdict;
        // A rewrite is judged as the call that will run: its own subject, its own digest.
        let rewritten_subject = updated_args
            .as_ref()
            .map(|args| request.subject_of.subject(args));
        let args = updated_args.as_ref().unwrap_or(request.args);
        let subject = rewritten_subject.as_ref().unwrap_or(request.subject);

        let mut evaluation = self.evaluate(request.spec, subject, hook_decision);
        if let DecisionSource::Hook { reason } = &mut evaluation.source {
            reason.clone_from(&hook_reason);
            if let Some(text) = &hook_reason {
                evaluation.reason = format!("{} {text}", evaluation.reason);
            }
        }
        let mut asked = false;
        if evaluation.decision == Decision::Ask {
            asked = true;
            evaluation = self
                .ask(
                    request.call_id,
                    request.spec,
                    args,
                    subject,
                    request.session,
                    evaluation,
                )
                .await;
        }
        // The entry (its digest above all) is only worth building for a trail that keeps it.
        if let Some(audit) = &self.audit {
            let entry = AuditEntry {
                time: SystemTime::now(),
                call_id: request.call_id.to_owned(),
                session_id: request.session.session_id.clone(),
                tool: request.spec.name.clone(),
                arguments_sha256: arguments_digest(args),
                mode: self.mode(),
                decision: evaluation.decision,
                asked,
                by: evaluation.source.clone(),
                subject: subject.clone(),
            };
            if let Err(error) = audit.record(&entry) {
                tracing::error!(tool = %entry.tool, "{error}");
                return Authorization::Deny {
                    reason: format!("The call was not run: {error}. Tell the user."),
                };
            }
        }
        match evaluation.decision {
            Decision::Allow if updated_args.is_none() && context.is_none() => Authorization::Allow,
            Decision::Allow => Authorization::AllowAmended(Amendment {
                args: updated_args,
                context,
            }),
            Decision::Deny | Decision::Ask => Authorization::Deny {
                reason: evaluation.reason,
            },
        }
    }

    async fn ask(
        &self,
        call_id: &str,
        spec: &ToolSpec,
        args: &Value,
        subject: &PermissionSubject,
        session: &SessionInfo,
        evaluation: Evaluation,
    ) -> Evaluation {
        let mut warnings = Vec::new();
        if let PermissionSubject::Shell(shell) = subject {
            warnings.extend(shell.warnings.iter().cloned());
            if !shell.fully_analysed {
                warnings.push(
                    "the command could not be analysed completely; read it carefully".to_owned(),
                );
            }
            warnings.extend(
                shell
                    .outside_workspace
                    .iter()
                    .map(|path| format!("reaches outside the workspace: {path}")),
            );
        }
        let request = ApprovalRequest {
            call_id: call_id.to_owned(),
            tool: spec.name.clone(),
            args: args.clone(),
            reason: evaluation.reason,
            warnings,
            suggested_rules: suggested_rules(&spec.name, subject),
            session: session.clone(),
        };
        let answer = self.approver.approve(&request).await;
        let source = DecisionSource::Approver {
            answer: answer.kind(),
            message: match &answer {
                ApprovalAnswer::Deny { message } => Some(message.clone()),
                _ => None,
            },
        };
        match answer {
            ApprovalAnswer::AllowOnce => Evaluation {
                decision: Decision::Allow,
                reason: "The user allowed this call.".to_owned(),
                source,
            },
            ApprovalAnswer::AllowForSession => {
                let mut remembered = self
                    .session_allow
                    .write()
                    .unwrap_or_else(PoisonError::into_inner);
                let new_rules: Vec<PermissionRule> = if request.suggested_rules.is_empty() {
                    PermissionRule::parse(&spec.name).into_iter().collect()
                } else {
                    request.suggested_rules
                };
                for rule in new_rules {
                    if !remembered.contains(&rule) {
                        remembered.push(rule.with_origin(SESSION_ORIGIN));
                    }
                }
                Evaluation {
                    decision: Decision::Allow,
                    reason: "The user allowed this for the session.".to_owned(),
                    source,
                }
            }
            ApprovalAnswer::Deny { message } => Evaluation {
                decision: Decision::Deny,
                reason: message,
                source,
            },
        }
    }
}

#[async_trait::async_trait]
impl Authorizer for PermissionPolicy {
    async fn authorize(&self, request: CallRequest<'_>) -> Authorization {
        self.decide(request).await
    }

    fn without_asking(&self) -> Option<Arc<dyn Authorizer>> {
        Some(Arc::new(PermissionPolicy::without_asking(self)))
    }

    /// The subject matters when a rule with a specifier could name the call (or an
    /// `mcp__server` rule, a resource call reaching that server), when the call
    /// may ask (the suggested rules come from it), for a shell tool (the deny list lives in
    /// it) and for the audit trail. A safe Read with no path rules skips resolving its path
    /// twice.
    fn wants_subject(&self, spec: &ToolSpec) -> bool {
        // `mcp__server` rules name the calls of the resource tools that reach that server.
        let reaches_servers = spec.family == PermissionFamily::McpData;
        let names = |rule: &PermissionRule| {
            (rule.has_specifier() && rule.names_tool(spec))
                || (reaches_servers && rule.names_mcp_server())
        };
        self.audit.is_some()
            || spec.family == PermissionFamily::Shell
            || effective_sensitivity(spec) != Sensitivity::Safe
            || self.pre_tool_use.is_some()
            || [&self.rules.deny, &self.rules.ask, &self.rules.allow]
                .into_iter()
                .flatten()
                .any(names)
            || self
                .session_allow
                .read()
                .unwrap_or_else(PoisonError::into_inner)
                .iter()
                .any(names)
    }

    fn path_filter(&self, spec: &ToolSpec) -> Option<Arc<dyn PathFilter>> {
        RulePathFilter::for_tool(&self.rules, self.mode(), spec)
            .map(|filter| Arc::new(filter) as Arc<dyn PathFilter>)
    }

    fn explicit_allow(&self, spec: &ToolSpec) -> Option<Arc<dyn ExplicitAllow>> {
        let session_allow = self.session_rules();
        RuleExplicitAllow::for_tool(self.rules.allow.iter().chain(&session_allow), spec)
            .map(|allow| Arc::new(allow) as Arc<dyn ExplicitAllow>)
    }
}

/// Builds a [`PermissionPolicy`].
pub struct PermissionPolicyBuilder {
    mode: PermissionMode,
    rules: RuleSet,
    approver: Arc<dyn Approver>,
    pre_tool_use: Option<Arc<dyn PreToolUseHook>>,
    audit: Option<Arc<dyn AuditSink>>,
}

impl Default for PermissionPolicyBuilder {
    fn default() -> Self {
        Self {
            mode: PermissionMode::Default,
            rules: RuleSet::default(),
            approver: Arc::new(NonInteractiveApprover::refusing()),
            pre_tool_use: None,
            audit: None,
        }
    }
}

impl PermissionPolicyBuilder {
    /// The mode.
    #[must_use]
    pub fn mode(mut self, mode: PermissionMode) -> Self {
        self.mode = mode;
        self
    }

    /// Adds one rule to a list.
    #[must_use]
    pub fn rule(mut self, list: RuleList, rule: PermissionRule) -> Self {
        self.rules.push(list, rule);
        self
    }

    /// Replaces all rules.
    #[must_use]
    pub fn rules(mut self, rules: RuleSet) -> Self {
        self.rules = rules;
        self
    }

    /// Who is asked when a call asks.
    #[must_use]
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = approver;
        self
    }

    /// The PreToolUse hook run before every decision.
    #[must_use]
    pub fn pre_tool_use(mut self, hook: Arc<dyn PreToolUseHook>) -> Self {
        self.pre_tool_use = Some(hook);
        self
    }

    /// Where every decision is recorded.
    #[must_use]
    pub fn audit(mut self, sink: Arc<dyn AuditSink>) -> Self {
        self.audit = Some(sink);
        self
    }

    /// The policy.
    pub fn build(self) -> PermissionPolicy {
        PermissionPolicy {
            mode: Arc::new(RwLock::new(self.mode)),
            rules: self.rules,
            session_allow: Arc::new(RwLock::new(Vec::new())),
            approver: self.approver,
            pre_tool_use: self.pre_tool_use,
            audit: self.audit,
        }
    }
}

//! The permission system assembled from the configuration: the policy, its hooks and its
//! audit trail, ready to install in a registry.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use toolhost_core::permission::{
    Approver, PermissionMode, PermissionPolicy, PermissionRule, RuleList,
};
use toolhost_core::{ResultHandler, ToolRegistryBuilder};

use crate::audit_file::{AuditFileError, JsonLinesAudit};
use toolhost_config::{Config, HooksConfig};
use toolhost_hooks::{PostToolUseHooks, PreToolUseHooks};

/// The permission system of one session.
#[derive(Clone)]
pub struct Permissions {
    policy: Arc<PermissionPolicy>,
    post_tool_use: Option<Arc<PostToolUseHooks>>,
    /// What a sub-agent's policy is made of besides its mode and rules.
    approver: Arc<dyn Approver>,
    pre_tool_use: Option<Arc<PreToolUseHooks>>,
    audit: Option<Arc<JsonLinesAudit>>,
    /// Where hooks run (a sub-agent's own hooks too).
    workspace: PathBuf,
}

impl std::fmt::Debug for Permissions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Permissions")
            .field("policy", &self.policy)
            .field("post_tool_use", &self.post_tool_use.is_some())
            .finish_non_exhaustive()
    }
}

impl Permissions {
    /// The policy for `config` in `workspace`, asking `approver`. Fails when the audit log
    /// cannot be opened.
    pub fn from_config(
        config: &Config,
        workspace: &Path,
        approver: Arc<dyn Approver>,
    ) -> Result<Self, AuditFileError> {
        let mode = config.permissions.mode;
        let pre_tool_use = (!config.hooks.pre_tool_use.is_empty()).then(|| {
            Arc::new(PreToolUseHooks::new(
                config.hooks.pre_tool_use.clone(),
                workspace,
            ))
        });
        let audit = match &config.permissions.audit_log {
            Some(path) => Some(Arc::new(JsonLinesAudit::open(path)?)),
            None => None,
        };
        let policy = Self::policy_of(
            mode,
            config.permissions.rules.clone(),
            &approver,
            pre_tool_use.as_ref(),
            audit.as_ref(),
        );
        let policy = Arc::new(policy);
        let post_tool_use = (!config.hooks.post_tool_use.is_empty()).then(|| {
            Arc::new(PostToolUseHooks::new(
                config.hooks.post_tool_use.clone(),
                workspace,
                Arc::clone(&policy),
            ))
        });
        Ok(Self {
            policy,
            post_tool_use,
            approver,
            pre_tool_use,
            audit,
            workspace: workspace.to_path_buf(),
        })
    }

    fn policy_of(
        mode: PermissionMode,
        rules: toolhost_core::permission::RuleSet,
        approver: &Arc<dyn Approver>,
        pre_tool_use: Option<&Arc<PreToolUseHooks>>,
        audit: Option<&Arc<JsonLinesAudit>>,
    ) -> PermissionPolicy {
        let mut policy = PermissionPolicy::builder()
            .mode(mode)
            .rules(rules)
            .approver(Arc::clone(approver));
        if let Some(hooks) = pre_tool_use {
            policy = policy.pre_tool_use(Arc::clone(hooks) as _);
        }
        if let Some(audit) = audit {
            policy = policy.audit(Arc::clone(audit) as _);
        }
        policy.build()
    }

    /// The permission system of a sub-agent: the same rules (those allowed for this session
    /// included), hooks, approver and audit trail, in `mode` — never looser than this one's
    /// (see [`stricter_mode`]) — with `deny` added, and the definition's own `hooks` after
    /// this one's (they run only while the sub-agent runs). Every hook runs in `folder` when
    /// given (the sub-agent's git worktree), in this one's workspace otherwise.
    pub fn for_child(
        &self,
        mode: PermissionMode,
        deny: &[PermissionRule],
        hooks: &HooksConfig,
        folder: Option<&Path>,
    ) -> Self {
        let workspace = folder.unwrap_or(&self.workspace);
        let mut rules = self.policy.rules().clone();
        for rule in self.policy.session_rules() {
            rules.push(RuleList::Allow, rule);
        }
        for rule in deny {
            rules.push(RuleList::Deny, rule.clone());
        }
        let mode = stricter_mode(self.mode(), mode);
        let own = &hooks.pre_tool_use;
        let pre_tool_use = match &self.pre_tool_use {
            Some(parent) if folder.is_none() && own.is_empty() => Some(Arc::clone(parent)),
            Some(parent) => Some(Arc::new(parent.with_more(own.clone(), workspace))),
            None if own.is_empty() => None,
            None => Some(Arc::new(PreToolUseHooks::new(own.clone(), workspace))),
        };
        let policy = Self::policy_of(
            mode,
            rules,
            &self.approver,
            pre_tool_use.as_ref(),
            self.audit.as_ref(),
        );
        let policy = Arc::new(policy);
        // The child's hooks tell the child's mode.
        let post_tool_use = match &self.post_tool_use {
            Some(parent) => Some(Arc::new(parent.with_more(
                hooks.post_tool_use.clone(),
                Arc::clone(&policy),
                workspace,
            ))),
            None if !hooks.post_tool_use.is_empty() => Some(Arc::new(PostToolUseHooks::new(
                hooks.post_tool_use.clone(),
                workspace,
                Arc::clone(&policy),
            ))),
            None => None,
        };
        Self {
            post_tool_use,
            policy,
            approver: Arc::clone(&self.approver),
            pre_tool_use,
            audit: self.audit.clone(),
            workspace: workspace.to_path_buf(),
        }
    }

    /// Installs the policy as the registry's authoriser and the PostToolUse hooks as a result
    /// handler.
    pub fn install(&self, builder: ToolRegistryBuilder) -> ToolRegistryBuilder {
        let builder = builder.authorizer(self.policy.clone());
        match &self.post_tool_use {
            Some(hooks) => builder.result_handler(hooks.clone()),
            None => builder,
        }
    }

    /// The PostToolUse hooks as a result handler, when any are configured: for a registry
    /// that [`Self::install`] does not build (the provider bridge).
    pub fn result_handler(&self) -> Option<Arc<dyn ResultHandler>> {
        self.post_tool_use
            .clone()
            .map(|hooks| hooks as Arc<dyn ResultHandler>)
    }

    /// The policy.
    pub fn policy(&self) -> &Arc<PermissionPolicy> {
        &self.policy
    }

    /// The mode; the registry the model sees should be `registry.for_mode(mode)`.
    pub fn mode(&self) -> PermissionMode {
        self.policy.mode()
    }
}

/// How strict a mode is: plan (nothing changes) > default (asks) > acceptEdits (edits run) >
/// bypassPermissions (nothing asks).
fn strictness(mode: PermissionMode) -> u8 {
    match mode {
        PermissionMode::Plan => 3,
        PermissionMode::Default => 2,
        PermissionMode::AcceptEdits => 1,
        PermissionMode::BypassPermissions => 0,
    }
}

/// The mode a sub-agent runs in when its parent runs in `parent` and it asks for `asked`:
/// the stricter of the two, so a child is never looser than its parent.
pub fn stricter_mode(parent: PermissionMode, asked: PermissionMode) -> PermissionMode {
    if strictness(asked) >= strictness(parent) {
        asked
    } else {
        parent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_mode_is_never_looser_than_its_parents() {
        use PermissionMode::*;
        assert_eq!(stricter_mode(Default, BypassPermissions), Default);
        assert_eq!(stricter_mode(Plan, AcceptEdits), Plan);
        assert_eq!(stricter_mode(AcceptEdits, Plan), Plan);
        assert_eq!(stricter_mode(BypassPermissions, AcceptEdits), AcceptEdits);
    }
}

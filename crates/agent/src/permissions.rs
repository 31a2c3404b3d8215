//! The permission system assembled from the configuration: the policy, its hooks and its
//! audit trail, ready to install in a registry.

use std::path::Path;
use std::sync::Arc;

use toolhost_core::permission::{Approver, PermissionMode, PermissionPolicy};
use toolhost_core::{ResultHandler, ToolRegistryBuilder};

use crate::audit_file::{AuditFileError, JsonLinesAudit};
use crate::config::Config;
use crate::hooks::{PostToolUseHooks, PreToolUseHooks};

/// The permission system of one session.
#[derive(Clone, Debug)]
pub struct Permissions {
    policy: Arc<PermissionPolicy>,
    post_tool_use: Option<Arc<PostToolUseHooks>>,
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
        let mut policy = PermissionPolicy::builder()
            .mode(mode)
            .rules(config.permissions.rules.clone())
            .approver(approver);
        if !config.hooks.pre_tool_use.is_empty() {
            policy = policy.pre_tool_use(Arc::new(PreToolUseHooks::new(
                config.hooks.pre_tool_use.clone(),
                workspace,
            )));
        }
        if let Some(path) = &config.permissions.audit_log {
            policy = policy.audit(Arc::new(JsonLinesAudit::open(path)?));
        }
        let policy = Arc::new(policy.build());
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
        })
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

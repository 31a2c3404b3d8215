//! pi's tool events in the one pipeline: `tool_call` handlers run in the authorisation step,
//! before the permission policy, so that a call they rewrite is judged as rewritten and a call
//! they block never reaches the rules; `tool_result` handlers are a result handler.

use std::sync::{Arc, OnceLock};

use crate::{Extensions, ToolCallVerdict, pi_tool_name};
use serde_json::{Value, json};
use toolhost_core::{
    Amendment, Authorization, Authorizer, CallRequest, ExplicitAllow, PathFilter, ResultHandler,
    ToolOutput, ToolSpec,
};

/// The extensions of a tool set, set once they are loaded: the registry that runs their
/// handlers is built before them.
#[derive(Debug, Default)]
pub struct ExtensionSlot(OnceLock<Arc<Extensions>>);

impl ExtensionSlot {
    /// Sets the extensions (once; a second set is ignored).
    pub fn set(&self, extensions: Arc<Extensions>) {
        let _ = self.0.set(extensions);
    }

    /// The extensions, once loaded.
    pub fn get(&self) -> Option<&Arc<Extensions>> {
        self.0.get()
    }

    /// The extensions when one of them listens to `event`.
    fn listening(&self, event: &str) -> Option<&Arc<Extensions>> {
        self.get().filter(|extensions| extensions.listens_to(event))
    }
}

/// The registry's authoriser: the `tool_call` handlers, then `inner` (the permission policy)
/// on the call as they left it.
pub struct ExtensionGate {
    /// The permission policy.
    pub inner: Arc<dyn Authorizer>,
    /// The extensions whose handlers run first.
    pub slot: Arc<ExtensionSlot>,
}

#[async_trait::async_trait]
impl Authorizer for ExtensionGate {
    async fn authorize(&self, request: CallRequest<'_>) -> Authorization {
        let Some(extensions) = self.slot.listening("tool_call") else {
            let decision = self.inner.authorize(request).await;
            started(&self.slot, &request, request.args).await;
            return decision;
        };
        let rewritten = match extensions
            .tool_call(&request.spec.name, request.call_id, request.args)
            .await
        {
            ToolCallVerdict::Block(reason) => {
                return Authorization::Deny {
                    reason: format!("An extension blocked this call: {reason}"),
                };
            }
            ToolCallVerdict::Proceed => None,
            ToolCallVerdict::Rewrite(args) => Some(args),
        };
        let Some(args) = rewritten else {
            let decision = self.inner.authorize(request).await;
            started(&self.slot, &request, request.args).await;
            return decision;
        };
        // The rewritten call is the one the rules judge: its own subject.
        let subject = request.subject_of.subject(&args);
        let decision = self
            .inner
            .authorize(CallRequest {
                args: &args,
                subject: &subject,
                ..request
            })
            .await;
        let decision = match decision {
            Authorization::Allow => Authorization::AllowAmended(Amendment {
                args: Some(args),
                context: None,
            }),
            Authorization::AllowAmended(amendment) => Authorization::AllowAmended(Amendment {
                args: Some(amendment.args.unwrap_or(args)),
                context: amendment.context,
            }),
            deny @ Authorization::Deny { .. } => return deny,
        };
        if let Authorization::AllowAmended(Amendment {
            args: Some(args), ..
        }) = &decision
        {
            started(&self.slot, &request, args).await;
        }
        decision
    }

    fn wants_subject(&self, spec: &ToolSpec) -> bool {
        self.inner.wants_subject(spec)
    }

    fn path_filter(&self, spec: &ToolSpec) -> Option<Arc<dyn PathFilter>> {
        self.inner.path_filter(spec)
    }

    fn explicit_allow(&self, spec: &ToolSpec) -> Option<Arc<dyn ExplicitAllow>> {
        self.inner.explicit_allow(spec)
    }

    fn without_asking(&self) -> Option<Arc<dyn Authorizer>> {
        self.inner.without_asking()
    }
}

/// `tool_execution_start`, for a call about to run with `args`.
async fn started(slot: &ExtensionSlot, request: &CallRequest<'_>, args: &Value) {
    if let Some(extensions) = slot.listening("tool_execution_start") {
        extensions
            .notify(
                "tool_execution_start",
                &json!({
                    "toolCallId": request.call_id,
                    "toolName": pi_tool_name(&request.spec.name),
                    "args": args,
                }),
            )
            .await;
    }
}

/// The `tool_result` handlers (and `tool_execution_end`) as a result handler.
pub struct ExtensionResults {
    /// The extensions.
    pub slot: Arc<ExtensionSlot>,
}

#[async_trait::async_trait]
impl ResultHandler for ExtensionResults {
    async fn handle(&self, request: CallRequest<'_>, output: &mut ToolOutput) {
        if let Some(extensions) = self.slot.listening("tool_result") {
            let change = extensions
                .tool_result(
                    &request.spec.name,
                    request.call_id,
                    request.args,
                    &output.content,
                    output.details.as_ref(),
                    output.is_error,
                )
                .await;
            if let Some(content) = change.content {
                output.content = content;
            }
            if let Some(details) = change.details {
                output.details = (!details.is_null()).then_some(details);
            }
            if let Some(is_error) = change.is_error {
                output.is_error = is_error;
            }
        }
        if let Some(extensions) = self.slot.listening("tool_execution_end") {
            extensions
                .notify(
                    "tool_execution_end",
                    &json!({
                        "toolCallId": request.call_id,
                        "toolName": pi_tool_name(&request.spec.name),
                        "result": { "content": output.content, "details": output.details },
                        "isError": output.is_error,
                    }),
                )
                .await;
        }
    }
}

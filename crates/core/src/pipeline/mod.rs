//! The one execution pipeline: lookup → coerce → validate → authorise → execute → result
//! handlers → truncate → hint. [`crate::ToolRegistry`] owns it; nothing runs a tool around it.

pub mod authorize;
pub mod coerce;
pub mod hint;
mod lookup;
pub mod result_handler;
pub mod truncate;
pub(crate) mod validate;

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Instant;

use futures::FutureExt as _;
use serde_json::Value;

use crate::content::{ContentBlock, ToolCallResult, ToolOutput};
use crate::context::{CallOptions, ToolContext};
use crate::registered_tool::RegisteredTool;
use crate::session::SessionInfo;
use crate::subject::PermissionSubject;
use authorize::{Amendment, Authorization, Authorizer, CallRequest};
use result_handler::ResultHandler;

pub(crate) use lookup::unknown_tool_message;

/// The settings every call of one registry shares.
pub(crate) struct Pipeline {
    pub(crate) max_chars: usize,
    pub(crate) authorizer: Arc<dyn Authorizer>,
    pub(crate) result_handlers: Vec<Arc<dyn ResultHandler>>,
}

impl Pipeline {
    /// Runs one call of a tool that was found, through every remaining step.
    pub(crate) async fn run(
        &self,
        entry: &RegisteredTool,
        call_id: &str,
        tool_name: &str,
        mut args: Value,
        options: CallOptions,
    ) -> ToolCallResult {
        let started = Instant::now();
        let spec = entry.spec();
        spec.rename_aliases(&mut args);
        coerce::coerce_arguments(&spec.parameters, &mut args);
        let output = match entry.validator.check(&spec.name, &spec.parameters, &args) {
            Err(message) => ToolOutput::error(message),
            Ok(()) => {
                self.authorize_and_execute(entry, call_id, args, options)
                    .await
            }
        };
        let max_chars = spec.max_result_chars.unwrap_or(self.max_chars);
        self.finish(call_id, tool_name, output, max_chars, started)
    }

    /// A result for a call that never reached a tool (an unknown name).
    pub(crate) fn reject(&self, call_id: &str, tool_name: &str, message: String) -> ToolCallResult {
        self.finish(
            call_id,
            tool_name,
            ToolOutput::error(message),
            self.max_chars,
            Instant::now(),
        )
    }

    async fn authorize_and_execute(
        &self,
        entry: &RegisteredTool,
        call_id: &str,
        args: Value,
        options: CallOptions,
    ) -> ToolOutput {
        let cancel = options.cancel.clone();
        let session = Arc::clone(&options.session);
        let authorized = tokio::select! {
            biased;
            () = cancel.cancelled() => return cancelled_output(&entry.spec().name),
            authorized = self.authorize(entry, call_id, args, &session) => authorized,
        };
        let Authorized {
            args,
            subject,
            context,
        } = match authorized {
            Ok(authorized) => authorized,
            Err(refusal) => return refusal,
        };

        // Handlers see the arguments after the call; clone them only when someone will look.
        let kept_args = (!self.result_handlers.is_empty()).then(|| args.clone());
        let ctx = ToolContext::new(call_id, options)
            .with_path_filter(self.authorizer.path_filter(entry.spec()))
            .with_explicit_allow(self.authorizer.explicit_allow(entry.spec()))
            .with_authorizer(Some(Arc::clone(&self.authorizer)));
        let mut output = tokio::select! {
            biased;
            () = cancel.cancelled() => cancelled_output(&entry.spec().name),
            output = run_tool(entry, args, ctx) => output,
        };
        // A cancelled call is over: its result handlers (PostToolUse hooks) do not run, and
        // one that is running when the cancellation comes is dropped (a hook command's process
        // group with it), so that Ctrl-C never waits for a hook.
        if let Some(args) = kept_args.filter(|_| !cancel.is_cancelled()) {
            let request = call_request(entry, call_id, &args, &session, &subject);
            let handled = async {
                for handler in &self.result_handlers {
                    handler.handle(request, &mut output).await;
                }
            };
            let finished = tokio::select! {
                biased;
                () = cancel.cancelled() => false,
                () = handled => true,
            };
            if !finished {
                output = cancelled_output(&entry.spec().name);
            }
        }
        if let Some(context) = context {
            output.content.push(ContentBlock::text(context));
        }
        output
    }

    /// Asks the authorizer; a rewrite of the arguments (a PreToolUse hook's) is coerced and
    /// validated again, since the tool must only ever see valid arguments.
    async fn authorize(
        &self,
        entry: &RegisteredTool,
        call_id: &str,
        args: Value,
        session: &SessionInfo,
    ) -> Result<Authorized, ToolOutput> {
        // Working out the subject may mean parsing a shell command: only when it is looked at.
        let subject_of = |args: &Value| {
            if self.authorizer.wants_subject(entry.spec()) {
                entry.tool.permission_subject(args)
            } else {
                PermissionSubject::None
            }
        };
        let subject = subject_of(&args);
        let request = call_request(entry, call_id, &args, session, &subject);
        match self.authorizer.authorize(request).await {
            Authorization::Allow => Ok(Authorized {
                args,
                subject,
                context: None,
            }),
            Authorization::Deny { reason } => Err(ToolOutput::error(reason)),
            Authorization::AllowAmended(Amendment {
                args: None,
                context,
            }) => Ok(Authorized {
                args,
                subject,
                context,
            }),
            Authorization::AllowAmended(Amendment {
                args: Some(mut rewritten),
                context,
            }) => {
                let spec = entry.spec();
                coerce::coerce_arguments(&spec.parameters, &mut rewritten);
                entry
                    .validator
                    .check(&spec.name, &spec.parameters, &rewritten)
                    .map_err(|message| {
                        ToolOutput::error(format!(
                            "The arguments were rewritten before the call (by a PreToolUse hook) \
                             and are no longer valid, so '{}' did not run: {message}",
                            spec.name
                        ))
                    })?;
                Ok(Authorized {
                    subject: subject_of(&rewritten),
                    args: rewritten,
                    context,
                })
            }
        }
    }

    fn finish(
        &self,
        call_id: &str,
        tool_name: &str,
        output: ToolOutput,
        max_chars: usize,
        started: Instant,
    ) -> ToolCallResult {
        let ToolOutput {
            mut content,
            details,
            is_error,
        } = output;
        let truncated = truncate::truncate_content(&mut content, max_chars);
        if is_error {
            hint::append_error_hint(&mut content);
        }
        ToolCallResult {
            tool_call_id: call_id.to_owned(),
            tool_name: tool_name.to_owned(),
            content,
            details,
            is_error,
            truncated,
            duration: started.elapsed(),
        }
    }
}

/// A call the authorizer let through: the arguments to run with (possibly rewritten), what
/// rules matched them, and context to append to the result.
struct Authorized {
    args: Value,
    subject: PermissionSubject,
    context: Option<String>,
}

fn call_request<'a>(
    entry: &'a RegisteredTool,
    call_id: &'a str,
    args: &'a Value,
    session: &'a SessionInfo,
    subject: &'a PermissionSubject,
) -> CallRequest<'a> {
    CallRequest {
        call_id,
        spec: entry.spec(),
        args,
        session,
        subject,
        subject_of: entry,
    }
}

/// Runs the tool; an error or a panic becomes an error output (R3).
async fn run_tool(entry: &RegisteredTool, args: Value, ctx: ToolContext) -> ToolOutput {
    match AssertUnwindSafe(entry.tool.execute(args, ctx))
        .catch_unwind()
        .await
    {
        Ok(Ok(output)) => output,
        Ok(Err(error)) => ToolOutput {
            details: error.details,
            ..ToolOutput::error(error.message)
        },
        Err(panic) => ToolOutput::error(format!(
            "Tool '{}' crashed: {}",
            entry.spec().name,
            panic_message(panic.as_ref())
        )),
    }
}

fn cancelled_output(tool: &str) -> ToolOutput {
    ToolOutput::error(format!("Tool '{tool}' was cancelled before it finished."))
}

fn panic_message(panic: &(dyn Any + Send)) -> String {
    if let Some(message) = panic.downcast_ref::<&str>() {
        (*message).to_owned()
    } else if let Some(message) = panic.downcast_ref::<String>() {
        message.clone()
    } else {
        "panic with a non-text payload".to_owned()
    }
}

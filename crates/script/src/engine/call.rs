//! Running a tool's `execute`, `onSession` and render hooks inside its engine.

use std::time::Duration;

use rquickjs::{Ctx, Function, Object, Promise};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolhost_core::{ContentBlock, SessionEvent, SessionInfo, ToolContext, ToolUpdate};

use super::Engine;
use super::errors::{Describer, clear_stale_exception};
use crate::render_tree::RenderTree;

/// How a call ended, before it becomes a tool result.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum CallEnd {
    /// `execute` settled: `{content, details, isError}` or the message it threw.
    Settled(Result<ExecuteResult, String>),
    /// The call ran past its time limit.
    TimedOut(Duration),
    /// The call was cancelled; the tool's own last word, if it settled within the grace.
    Cancelled(Option<String>),
}

/// What `execute` returned, normalised by `api.js`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ExecuteResult {
    pub content: Vec<ContentBlock>,
    #[serde(default)]
    pub details: Option<Value>,
    #[serde(default)]
    pub is_error: bool,
}

/// What `api.js` answers: `{ok}`, or `{error, name, stack}` of what it caught.
#[derive(Deserialize)]
pub(crate) struct Envelope<T> {
    pub ok: Option<T>,
    pub error: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub stack: Option<String>,
}

impl<T> Envelope<T> {
    /// The error, described with where it was thrown.
    pub(crate) fn failure(&self, describer: &Describer) -> Option<String> {
        self.error
            .as_ref()
            .map(|message| describer.parts(self.name.as_deref(), message, self.stack.as_deref()))
    }
}

fn open<T: for<'de> Deserialize<'de>>(json: &str, describer: &Describer) -> Result<T, String> {
    let envelope: Envelope<T> = serde_json::from_str(json)
        .map_err(|error| format!("the tool's answer could not be read: {error}"))?;
    if let Some(error) = envelope.failure(describer) {
        return Err(error);
    }
    envelope
        .ok
        .ok_or_else(|| "the tool answered nothing".to_owned())
}

#[derive(Deserialize)]
struct UpdateJson {
    content: Vec<ContentBlock>,
    details: Option<Value>,
    progress: Option<f64>,
    total: Option<f64>,
}

fn context_json(ctx: &ToolContext, cwd: &str) -> String {
    json!({
        "cwd": cwd,
        "sessionId": ctx.session().session_id,
        "model": ctx.session().model,
    })
    .to_string()
}

fn start_call<'js>(
    js: &Ctx<'js>,
    index: u32,
    params: String,
    context: String,
    tool_ctx: &ToolContext,
) -> rquickjs::Result<(Promise<'js>, Function<'js>)> {
    let api: Object = js.globals().get("__toolhost_api")?;
    let call_execute: Function = api.get("callExecute")?;
    let updates = tool_ctx.clone();
    let send_update = Function::new(js.clone(), move |json: String| {
        if let Ok(update) = serde_json::from_str::<UpdateJson>(&json) {
            updates.on_update(ToolUpdate {
                content: update.content,
                details: update.details,
                progress: update.progress,
                total: update.total,
            });
        }
    })?;
    let aborter = tool_ctx.clone();
    let request_abort = Function::new(js.clone(), move || aborter.abort())?;
    let handle: Object = call_execute.call((
        index,
        tool_ctx.call_id().to_owned(),
        params,
        context,
        send_update,
        request_abort,
    ))?;
    Ok((handle.get("promise")?, handle.get("abort")?))
}

impl Engine {
    /// Runs `execute` of tool `index` to its end: settled, timed out or cancelled.
    pub(crate) async fn execute(
        &self,
        index: u32,
        args: Value,
        tool_ctx: ToolContext,
        cancel: CancellationToken,
    ) -> CallEnd {
        let limits = *self.host.limits();
        let deadline = self.clock.enter(limits.call_time_limit);
        let clock = std::sync::Arc::clone(&self.clock);
        let cwd = self.host.cwd().to_string_lossy().into_owned();
        let params = args.to_string();
        let context = context_json(&tool_ctx, &cwd);
        let describer = self.describer.clone();
        // Until the call is over, `exec` and file access ask its caller's authoriser.
        let _caller = self.host.enter_call(&self.module, &tool_ctx);
        self.context
            .async_with(async move |js| {
                clear_stale_exception(&js);
                let (promise, abort) = match start_call(&js, index, params, context, &tool_ctx) {
                    Ok(started) => started,
                    Err(error) => {
                        let message = describer.error(&js, error);
                        return if clock.expired() {
                            CallEnd::TimedOut(limits.call_time_limit)
                        } else {
                            CallEnd::Settled(Err(message))
                        };
                    }
                };
                let mut settled = promise.into_future::<String>();
                let timer = tokio::time::sleep(limits.call_time_limit);
                tokio::pin!(timer);
                let interrupted = tokio::select! {
                    biased;
                    outcome = &mut settled => {
                        return match outcome {
                            Ok(json) => CallEnd::Settled(open(&json, &describer)),
                            Err(error) => {
                                // Always caught, so that no exception stays pending in the
                                // context for the next call to trip over.
                                let message = describer.error(&js, error);
                                if clock.expired() {
                                    CallEnd::TimedOut(limits.call_time_limit)
                                } else {
                                    CallEnd::Settled(Err(message))
                                }
                            }
                        };
                    }
                    () = cancel.cancelled() => "the call was cancelled",
                    () = &mut timer => "the call ran out of time",
                };
                // The tool hears about it through its signal and gets a short grace to settle;
                // its abort listeners run under a deadline of their own.
                drop(deadline);
                let _grace = clock.enter(limits.abort_grace);
                let _ = abort.call::<_, ()>((interrupted,));
                let last_word =
                    match tokio::time::timeout(limits.abort_grace, &mut settled).await {
                        Ok(Ok(json)) => Some(json),
                        Ok(Err(error)) => {
                            Some(json!({ "error": describer.error(&js, error) }).to_string())
                        }
                        Err(_) => None,
                    }
                    .map(|json| {
                        match open::<ExecuteResult>(&json, &describer) {
                            Ok(result) => result
                                .content
                                .iter()
                                .filter_map(ContentBlock::as_text)
                                .collect::<Vec<_>>()
                                .join("\n"),
                            Err(message) => message,
                        }
                    });
                if cancel.is_cancelled() {
                    CallEnd::Cancelled(last_word)
                } else {
                    CallEnd::TimedOut(limits.call_time_limit)
                }
            })
            .await
    }

    /// Runs `onSession` of tool `index`; `Err` carries what it threw.
    pub(crate) async fn on_session(
        &self,
        index: u32,
        event: &SessionEvent,
        session: &SessionInfo,
    ) -> Result<(), String> {
        let limit = self.host.limits().hook_time_limit;
        let _deadline = self.clock.enter(limit);
        let event = serde_json::to_string(event).unwrap_or_else(|_| "{}".to_owned());
        let context = json!({
            "cwd": self.host.cwd().to_string_lossy(),
            "sessionId": session.session_id,
            "model": session.model,
        })
        .to_string();
        let describer = self.describer.clone();
        let json = self
            .context
            .async_with(async move |js| {
                clear_stale_exception(&js);
                let run = async {
                    let api: Object = js.globals().get("__toolhost_api")?;
                    let call: Function = api.get("callSession")?;
                    call.call::<_, Promise>((index, event, context))?
                        .into_future::<String>()
                        .await
                };
                tokio::select! {
                    outcome = run => outcome.map_err(|error| describer.error(&js, error)),
                    () = tokio::time::sleep(limit) => Err(format!("onSession took longer than {} s", limit.as_secs_f64())),
                }
            })
            .await?;
        // `{"ok": null}`: only an error matters.
        let envelope: Envelope<Value> = serde_json::from_str(&json)
            .map_err(|error| format!("the tool's answer could not be read: {error}"))?;
        envelope.failure(&self.describer).map_or(Ok(()), Err)
    }

    /// Runs a render hook (`renderCall` or `renderResult`) with these arguments; its lines.
    pub(crate) async fn render(
        &self,
        index: u32,
        hook: &'static str,
        args: Value,
    ) -> Result<RenderTree, String> {
        let _deadline = self.clock.enter(self.host.limits().hook_time_limit);
        let args = args.to_string();
        let describer = self.describer.clone();
        let json = self
            .context
            .async_with(async move |js| {
                clear_stale_exception(&js);
                let run = || -> rquickjs::Result<String> {
                    let api: Object = js.globals().get("__toolhost_api")?;
                    let call: Function = api.get("callRender")?;
                    call.call((index, hook, args))
                };
                run().map_err(|error| describer.error(&js, error))
            })
            .await?;
        open::<RenderTree>(&json, &self.describer)
    }

    /// Applies or discards the pending action `id` this engine's tools registered; what its
    /// `apply` (or `reject`) returned, as text.
    pub(crate) async fn resolve(&self, id: u32, apply: bool) -> Result<Option<String>, String> {
        let limit = self.host.limits().hook_time_limit;
        let _deadline = self.clock.enter(limit);
        let describer = self.describer.clone();
        let json = self
            .context
            .async_with(async move |js| {
                clear_stale_exception(&js);
                let run = async {
                    let api: Object = js.globals().get("__toolhost_api")?;
                    let call: Function = api.get("callResolve")?;
                    call.call::<_, Promise>((id, apply))?
                        .into_future::<String>()
                        .await
                };
                tokio::select! {
                    outcome = run => outcome.map_err(|error| describer.error(&js, error)),
                    () = tokio::time::sleep(limit) => Err(format!("resolving the action took longer than {} s", limit.as_secs_f64())),
                }
            })
            .await?;
        let envelope: Envelope<String> = serde_json::from_str(&json)
            .map_err(|error| format!("the tool's answer could not be read: {error}"))?;
        match envelope.failure(&self.describer) {
            Some(error) => Err(error),
            None => Ok(envelope.ok),
        }
    }
}

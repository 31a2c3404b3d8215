//! Running a pi extension's side of the engine: its event handlers (`pi.on`), its commands
//! (`pi.registerCommand`) and the session state it reads (`ctx.sessionManager`, `ctx.model`).

use std::time::Duration;

use rquickjs::{Function, Object, Promise};
use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::call::Envelope;
use super::errors::clear_stale_exception;
use super::{Engine, ToolDescriptor};

/// A command an extension registered.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct CommandInfo {
    /// Its name, without the slash.
    pub name: String,
    /// What it does.
    #[serde(default)]
    pub description: String,
}

/// What an extension registered since the engine was last asked.
#[derive(Clone, Debug, Default, Deserialize)]
pub(crate) struct Registered {
    #[serde(default)]
    pub tools: Vec<ToolDescriptor>,
    #[serde(default)]
    pub commands: Vec<CommandInfo>,
    #[serde(default)]
    pub events: Vec<String>,
}

/// What an event's handlers in one engine came to.
#[derive(Debug, Deserialize)]
pub(crate) struct Emitted {
    /// The combined answer (the shape depends on the event; `null` for a notification).
    #[serde(default)]
    pub result: Value,
    /// Handlers that threw, each described.
    #[serde(default)]
    pub errors: Vec<String>,
    /// What the handlers registered meanwhile.
    #[serde(default)]
    pub registered: Registered,
}

#[derive(Deserialize)]
struct CommandDone {
    #[serde(default)]
    registered: Registered,
}

impl Engine {
    /// Runs the handlers of `event` with this payload, under `limit`.
    pub(crate) async fn emit(
        &self,
        event: &str,
        payload: &Value,
        limit: Duration,
    ) -> Result<Emitted, String> {
        let json = self
            .run_api(
                "callEmit",
                (event.to_owned(), payload.to_string(), self.run_number()),
                limit,
                &format!("the {event} handlers"),
            )
            .await?;
        self.open_envelope(&json)
    }

    /// Runs the handler of the command `/name` with `args`.
    pub(crate) async fn run_command(
        &self,
        name: &str,
        args: &str,
        limit: Duration,
    ) -> Result<Registered, String> {
        let json = self
            .run_api(
                "callCommand",
                (name.to_owned(), args.to_owned(), self.run_number()),
                limit,
                &format!("the command /{name}"),
            )
            .await?;
        self.open_envelope::<CommandDone>(&json)
            .map(|done| done.registered)
    }

    /// Tells the extension what its session is now (`{id, name, entries, model, usage,
    /// tools, systemPrompt}`, each optional).
    pub(crate) async fn set_session(&self, update: &Value) -> Result<(), String> {
        let limit = self.host.limits().hook_time_limit;
        let json = self
            .run_api("callSetSession", (update.to_string(),), limit, "setSession")
            .await?;
        self.open_envelope::<Value>(&json).map(|_| ())
    }

    fn open_envelope<T: for<'de> Deserialize<'de>>(&self, json: &str) -> Result<T, String> {
        let envelope: Envelope<T> = serde_json::from_str(json)
            .map_err(|error| format!("the extension's answer could not be read: {error}"))?;
        if let Some(error) = envelope.failure(&self.describer) {
            return Err(error);
        }
        envelope
            .ok
            .ok_or_else(|| "the extension answered nothing".to_owned())
    }

    /// The number of the run in progress, for `ctx.signal` (`None` between runs).
    fn run_number(&self) -> Option<u32> {
        self.host.run_in_progress().map(|(number, _)| number)
    }

    /// Calls `__toolhost_api[function](args…)` (which may return a promise of JSON text) under
    /// `limit`, synchronous work included.
    pub(super) async fn run_api<A>(
        &self,
        function: &'static str,
        args: A,
        limit: Duration,
        what: &str,
    ) -> Result<String, String>
    where
        A: for<'js> rquickjs::function::IntoArgs<'js> + Send + 'static,
    {
        let _deadline = self.clock.enter(limit);
        let describer = self.describer.clone();
        let clock = std::sync::Arc::clone(&self.clock);
        let run_cancel = self.host.run_in_progress().map(|(_, cancel)| cancel);
        let outcome = self
            .context
            .async_with(async move |js| {
                clear_stale_exception(&js);
                let run = async {
                    let api: Object = js.globals().get("__toolhost_api")?;
                    let call: Function = api.get(function)?;
                    call.call::<_, Promise>(args)?.into_future::<String>().await
                };
                tokio::pin!(run);
                let timeout = tokio::time::sleep(limit);
                tokio::pin!(timeout);
                let mut told = false;
                loop {
                    tokio::select! {
                        outcome = &mut run => {
                            break outcome.map_err(|error| describer.error(&js, error)).map(Some);
                        }
                        () = &mut timeout => break Ok(None),
                        // The run was cancelled: `ctx.signal` aborts, and the handler has the
                        // rest of its time to settle.
                        () = cancelled(run_cancel.as_ref()), if !told => {
                            told = true;
                            abort_run(&js);
                        }
                    }
                }
            })
            .await;
        match outcome {
            Ok(Some(json)) => Ok(json),
            Ok(None) => Err(format!("{what} took longer than {} s", limit.as_secs_f64())),
            Err(_) if clock.expired() => {
                Err(format!("{what} took longer than {} s", limit.as_secs_f64()))
            }
            Err(message) => Err(message),
        }
    }
}

/// Until `cancel` (if any) is cancelled.
async fn cancelled(cancel: Option<&CancellationToken>) {
    match cancel {
        Some(cancel) => cancel.cancelled().await,
        None => std::future::pending().await,
    }
}

/// Aborts the extension's `ctx.signal` (see `js/extension.js`).
fn abort_run(js: &rquickjs::Ctx<'_>) {
    let aborted = js
        .globals()
        .get::<_, Object>("__toolhost_api")
        .and_then(|api| api.get::<_, Function>("abortRun"))
        .and_then(|abort| abort.call::<_, ()>(()));
    if aborted.is_err() {
        clear_stale_exception(js);
    }
}

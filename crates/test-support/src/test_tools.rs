//! Tools a test registers, each exercising one part of the tool contract: argument coercion
//! ([`Echo`]), errors with details ([`Failing`]), panics ([`Panicking`]), cancellation
//! ([`WaitsForCancel`], and [`Sleep`], which ignores it), streamed updates ([`Streaming`]),
//! aborting the agent operation ([`Aborting`]), output limits ([`Lines`]) and session events
//! ([`Listener`]).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolhost_core::{
    SessionEvent, SessionInfo, ToolAnnotations, ToolContext, ToolError, ToolOutput, ToolSpec,
    ToolUpdate, TypedTool,
};

/// Parameters with every kind the coercion step handles.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct EchoParams {
    /// Text to echo.
    pub text: String,
    /// Repeat count.
    #[schemars(range(min = 1, max = 10))]
    pub count: Option<u32>,
    /// Uppercase the text.
    pub shout: Option<bool>,
    /// Nested options.
    pub options: Option<EchoOptions>,
    /// Labels.
    pub tags: Option<Vec<String>>,
    /// A ratio.
    pub ratio: Option<f64>,
}

/// Nested options.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct EchoOptions {
    /// Separator between repetitions.
    pub separator: String,
}

/// Echoes its text; details carry the parsed arguments so tests see what the tool got.
pub struct Echo;

impl TypedTool for Echo {
    type Params = EchoParams;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new("Echo", "Echoes text.")
            .with_label("Echo text")
            .with_annotations(ToolAnnotations::READ_ONLY)
    }

    async fn run(&self, params: EchoParams, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let separator = params.options.as_ref().map_or("", |o| o.separator.as_str());
        let text = if params.shout == Some(true) {
            params.text.to_uppercase()
        } else {
            params.text.clone()
        };
        let repeated = vec![text; params.count.unwrap_or(1) as usize].join(separator);
        Ok(ToolOutput::text(repeated).with_details(json!({
            "count": params.count,
            "shout": params.shout,
            "tags": params.tags,
            "ratio": params.ratio,
        })))
    }
}

/// Parameters of tools that take none.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct NoParams {}

/// Always fails with a message.
pub struct Failing;

impl TypedTool for Failing {
    type Params = NoParams;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new("Failing", "Always fails.")
    }

    async fn run(&self, _params: NoParams, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        Err(ToolError::new("disk on fire").with_details(json!({"code": 7})))
    }
}

/// Panics inside execute.
pub struct Panicking;

impl TypedTool for Panicking {
    type Params = NoParams;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new("Panicking", "Panics.")
    }

    async fn run(&self, _params: NoParams, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        panic!("index out of bounds in a tool")
    }
}

/// Waits until cancelled, then records that it saw the cancellation.
pub struct WaitsForCancel {
    /// Counts the calls that saw their cancellation.
    pub saw_cancel: Arc<AtomicUsize>,
}

impl TypedTool for WaitsForCancel {
    type Params = NoParams;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new("Wait", "Waits for cancellation.")
    }

    async fn run(&self, _params: NoParams, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        ctx.cancellation().cancelled().await;
        self.saw_cancel.fetch_add(1, Ordering::SeqCst);
        Ok(ToolOutput::text("finished after cancel"))
    }
}

/// Parameters of the sleeping tool.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SleepParams {
    /// How long to sleep.
    pub millis: u64,
}

/// Sleeps, ignoring cancellation (a badly behaved tool).
pub struct Sleep;

impl TypedTool for Sleep {
    type Params = SleepParams;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new("Sleep", "Sleeps.")
    }

    async fn run(&self, params: SleepParams, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        tokio::time::sleep(Duration::from_millis(params.millis)).await;
        Ok(ToolOutput::text(format!("slept {}", params.millis)))
    }
}

/// Streams three updates, then returns.
pub struct Streaming;

impl TypedTool for Streaming {
    type Params = NoParams;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new("Streaming", "Streams updates.")
    }

    async fn run(&self, _params: NoParams, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        for step in 1..=3 {
            ctx.on_update(ToolUpdate::text(format!("step {step}")));
        }
        Ok(ToolOutput::text("done"))
    }
}

/// Asks the agent operation to abort.
pub struct Aborting;

impl TypedTool for Aborting {
    type Params = NoParams;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new("Aborting", "Aborts the agent operation.")
    }

    async fn run(&self, _params: NoParams, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        ctx.abort();
        Ok(ToolOutput::text(format!("aborting call {}", ctx.call_id())))
    }
}

/// Parameters of the big-output tool.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct LinesParams {
    /// How many lines to print.
    pub lines: usize,
    /// Whether to report the output as an error.
    pub fail: Option<bool>,
}

/// Prints numbered lines.
pub struct Lines;

impl TypedTool for Lines {
    type Params = LinesParams;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new("Lines", "Prints numbered lines.")
    }

    async fn run(&self, params: LinesParams, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let text: String = (1..=params.lines).map(|n| format!("line {n}\n")).collect();
        if params.fail == Some(true) {
            return Err(ToolError::new(text));
        }
        Ok(ToolOutput::text(text))
    }
}

/// Records session events; fails on `shutdown` when told to.
pub struct Listener {
    /// The tool's name.
    pub name: &'static str,
    /// What it heard, as `EVENT@SESSION` (`-` without a session id).
    pub heard: Arc<Mutex<Vec<String>>>,
    /// Whether `shutdown` fails with "could not flush state".
    pub fail_on_shutdown: bool,
}

impl TypedTool for Listener {
    type Params = NoParams;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new(self.name, "Listens to session events.")
    }

    async fn run(&self, _params: NoParams, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text("listening"))
    }

    async fn on_session(
        &self,
        event: &SessionEvent,
        session: &SessionInfo,
    ) -> Result<(), ToolError> {
        self.heard
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(format!(
                "{}@{}",
                event.name(),
                session.session_id.as_deref().unwrap_or("-")
            ));
        if self.fail_on_shutdown && *event == SessionEvent::Shutdown {
            return Err(ToolError::new("could not flush state"));
        }
        Ok(())
    }
}

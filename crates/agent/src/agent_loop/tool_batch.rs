//! Running the tool calls of one response: concurrently where the tools' specs say it is safe,
//! in order otherwise, with the results always in call order.
//!
//! The rule reads each tool's spec, never its name: calls to read-only tools (and calls that
//! are refused before running: an unknown tool, arguments that are not JSON) run together;
//! any other call — a write, a shell command, an MCP tool that may change something — waits
//! for every call before it, and every call after it waits for it. So two writes to one path
//! or two shell commands keep the order the model gave them.

use std::sync::Arc;

use futures::future::join_all;
use tokio_util::sync::CancellationToken;
use toolhost_core::conversation::ToolCall;
use toolhost_core::{CallOptions, SessionInfo, ToolCallResult, ToolRegistry, UpdateSink};

use super::events::{AgentEvent, AgentEventSink};

/// One call's result and whether its tool asked to end the run.
pub(crate) struct Finished {
    pub(crate) result: ToolCallResult,
    pub(crate) stopped_run: bool,
}

/// Runs `calls` through `registry`'s pipeline; see the module doc for the order.
pub(crate) async fn run_tool_calls(
    registry: &ToolRegistry,
    calls: &[ToolCall],
    session: &Arc<SessionInfo>,
    events: &AgentEventSink,
    cancel: &CancellationToken,
) -> Vec<Finished> {
    let mut finished = Vec::with_capacity(calls.len());
    let mut group: Vec<&ToolCall> = Vec::new();
    for call in calls {
        if runs_alongside_others(registry, call) {
            group.push(call);
            continue;
        }
        finished.extend(run_group(registry, &group, session, events, cancel).await);
        group.clear();
        finished.extend(run_group(registry, &[call], session, events, cancel).await);
    }
    finished.extend(run_group(registry, &group, session, events, cancel).await);
    finished
}

/// Whether the call may run at the same time as its neighbours.
fn runs_alongside_others(registry: &ToolRegistry, call: &ToolCall) -> bool {
    call.parsed_arguments().is_err()
        || registry
            .spec(&call.name)
            .is_none_or(|spec| spec.annotations.read_only)
}

async fn run_group(
    registry: &ToolRegistry,
    group: &[&ToolCall],
    session: &Arc<SessionInfo>,
    events: &AgentEventSink,
    cancel: &CancellationToken,
) -> Vec<Finished> {
    join_all(
        group
            .iter()
            .map(|call| run_one(registry, call, session, events, cancel)),
    )
    .await
}

async fn run_one(
    registry: &ToolRegistry,
    call: &ToolCall,
    session: &Arc<SessionInfo>,
    events: &AgentEventSink,
    cancel: &CancellationToken,
) -> Finished {
    events(AgentEvent::ToolCallStart { call: call.clone() });
    let abort = CancellationToken::new();
    let result = match call.parsed_arguments() {
        Err(problem) => registry.reject_call(&call.id, &call.name, problem),
        Ok(args) => {
            let options = CallOptions {
                on_update: Some(update_sink(&call.id, events)),
                cancel: cancel.child_token(),
                abort: abort.clone(),
                session: Arc::clone(session),
            };
            registry
                .execute_with(&call.id, &call.name, args, options)
                .await
        }
    };
    events(AgentEvent::ToolCallEnd {
        result: result.clone(),
    });
    Finished {
        result,
        stopped_run: abort.is_cancelled(),
    }
}

fn update_sink(call_id: &str, events: &AgentEventSink) -> UpdateSink {
    let call_id = call_id.to_owned();
    let events = Arc::clone(events);
    Arc::new(move |update| {
        events(AgentEvent::ToolCallUpdate {
            call_id: call_id.clone(),
            update,
        });
    })
}

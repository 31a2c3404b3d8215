//! Running the tool calls of one response: concurrently where the tools' specs say it is safe,
//! in order otherwise, with the results always in call order.
//!
//! The rule reads each tool's spec, never its name: calls to read-only tools (and calls that
//! are refused before running: an unknown tool, arguments that are not JSON) run together;
//! any other call — a write, a shell command, an MCP tool that may change something — waits
//! for every call before it, and every call after it waits for it. So two writes to one path
//! or two shell commands keep the order the model gave them.
//!
//! Identical calls in one response run once (see [`run_tool_calls`]).

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::Arc;

use futures::future::join_all;
use tokio_util::sync::CancellationToken;
use toolhost_core::conversation::ToolCall;
use toolhost_core::{
    CallOptions, ContentBlock, SessionInfo, ToolCallResult, ToolRegistry, UpdateSink,
};

use super::events::{AgentEvent, AgentEventSink};

/// One call's result and whether its tool asked to end the run.
pub(crate) struct Finished {
    pub(crate) result: ToolCallResult,
    pub(crate) stopped_run: bool,
    /// The call this one repeats within its response, which ran in its place.
    pub(crate) duplicate_of: Option<String>,
}

/// Runs `calls` through `registry`'s pipeline; see the module doc for the order. A call
/// identical to an earlier one of the same response (same tool, same arguments) is not run:
/// it gets that call's result, with a note (small models write one call ten times over).
pub(crate) async fn run_tool_calls(
    registry: &ToolRegistry,
    calls: &[ToolCall],
    session: &Arc<SessionInfo>,
    events: &AgentEventSink,
    cancel: &CancellationToken,
) -> Vec<Finished> {
    let originals = first_identical(calls);
    let unique: Vec<&ToolCall> = calls
        .iter()
        .zip(&originals)
        .filter(|(_, original)| original.is_none())
        .map(|(call, _)| call)
        .collect();
    let mut ran = run_in_order(registry, &unique, session, events, cancel)
        .await
        .into_iter();
    let mut finished: Vec<Finished> = Vec::with_capacity(calls.len());
    let mut told = false;
    for (call, original) in calls.iter().zip(originals) {
        match original {
            None => {
                if let Some(done) = ran.next() {
                    finished.push(done);
                }
            }
            Some(index) => {
                let first = &calls[index];
                let repeats = calls.len() - unique.len();
                let mut result = finished[index].result.clone();
                result.tool_call_id.clone_from(&call.id);
                result.content.push(ContentBlock::text(if told {
                    format!(
                        "[The same call as {}: its result, not run again.]",
                        first.id
                    )
                } else {
                    told = true;
                    format!(
                        "[This call is identical to call {} of this response, so it was not \
                         run again: its result is repeated here ({repeats} repeated call{} in \
                         this response). Make each call once.]",
                        first.id,
                        if repeats == 1 { "" } else { "s" }
                    )
                }));
                events(AgentEvent::ToolCallStart { call: call.clone() });
                events(AgentEvent::ToolCallEnd {
                    result: result.clone(),
                });
                finished.push(Finished {
                    result,
                    stopped_run: false,
                    duplicate_of: Some(first.id.clone()),
                });
            }
        }
    }
    finished
}

/// For each call, the index of the first earlier call identical to it (same tool, same
/// parsed arguments), if any. Calls whose arguments do not parse are never merged.
fn first_identical(calls: &[ToolCall]) -> Vec<Option<usize>> {
    let mut seen: HashMap<(&str, String), usize> = HashMap::new();
    calls
        .iter()
        .enumerate()
        .map(|(index, call)| {
            let arguments = call.parsed_arguments().ok()?.to_string();
            match seen.entry((call.name.as_str(), arguments)) {
                Entry::Occupied(first) => Some(*first.get()),
                Entry::Vacant(slot) => {
                    slot.insert(index);
                    None
                }
            }
        })
        .collect()
}

/// Runs `calls` in groups: see the module doc.
async fn run_in_order(
    registry: &ToolRegistry,
    calls: &[&ToolCall],
    session: &Arc<SessionInfo>,
    events: &AgentEventSink,
    cancel: &CancellationToken,
) -> Vec<Finished> {
    let mut finished = Vec::with_capacity(calls.len());
    let mut group: Vec<&ToolCall> = Vec::new();
    for &call in calls {
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
        duplicate_of: None,
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

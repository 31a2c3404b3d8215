//! What `toolhost run` prints: the loop's events read as text, one JSON object, or one JSON
//! event per line in the shape of Claude Code's headless mode (so existing wrappers work).

use std::io::Write as _;
use std::sync::Mutex;
use std::time::Duration;
use toolhost_tui::text::{arguments_line, first_line_cut as one_line};

use clap::ValueEnum;
use serde_json::{Value, json};
use toolhost_agent::agent_loop::{AgentEvent, RunOutcome};
use toolhost_config::pricing::{Pricing, usage_summary};
use toolhost_core::ContentBlock;
use toolhost_core::conversation::{AssistantMessage, AssistantPart, StopReason, Usage};

/// `--output-format`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// The final answer on stdout, progress on stderr.
    #[default]
    Text,
    /// One JSON object when the run ends: result, usage, turns, duration, session id.
    Json,
    /// One JSON event per line: init, assistant messages, tool results, the result.
    StreamJson,
}

/// What the run was, for the `init` event and the result.
pub struct RunInfo {
    /// The session id.
    pub session_id: String,
    /// The workspace.
    pub cwd: String,
    /// The permission mode as written in configuration (`acceptEdits`).
    pub permission_mode: String,
    /// The model's prices, when known: the result's cost.
    pub pricing: Option<Pricing>,
}

/// Writes the events of one run in one format.
pub struct EventWriter {
    format: OutputFormat,
    info: RunInfo,
    progress: bool,
    stdout: Mutex<std::io::Stdout>,
}

impl EventWriter {
    /// A writer for `format`; `progress` shows tool calls on stderr in text mode.
    pub fn new(format: OutputFormat, info: RunInfo, progress: bool) -> Self {
        Self {
            format,
            info,
            progress,
            stdout: Mutex::new(std::io::stdout()),
        }
    }

    /// Hears one event.
    pub fn event(&self, event: &AgentEvent) {
        match self.format {
            OutputFormat::StreamJson => {
                if let Some(line) = self.stream_json(event) {
                    self.print_line(&line);
                }
            }
            OutputFormat::Text if self.progress => text_progress(event),
            OutputFormat::Text | OutputFormat::Json => {}
        }
    }

    /// Prints the end of the run: the answer (text), the result object (json); stream-json
    /// printed it with the `run_end` event.
    pub fn finish(&self, outcome: &RunOutcome, turns: usize, usage: Usage, times: RunTimes) {
        match self.format {
            OutputFormat::Text => match outcome {
                outcome if outcome.is_success() => {
                    let text = outcome.text();
                    let mut stdout = self.lock();
                    let _ = stdout.write_all(text.as_bytes());
                    if !text.ends_with('\n') {
                        let _ = stdout.write_all(b"\n");
                    }
                    let _ = stdout.flush();
                    eprintln!("{}", usage_summary(&usage, self.info.pricing.as_ref()));
                }
                outcome => {
                    eprintln!("error: {}", outcome.text());
                    eprintln!("{}", usage_summary(&usage, self.info.pricing.as_ref()));
                }
            },
            OutputFormat::Json | OutputFormat::StreamJson => {
                let mut line = result_object(outcome, turns, usage, times, &self.info.session_id);
                line["total_cost_usd"] = self
                    .info
                    .pricing
                    .as_ref()
                    .map_or(Value::Null, |pricing| pricing.cost(&usage).into());
                self.print_line(&line);
            }
        }
    }

    fn stream_json(&self, event: &AgentEvent) -> Option<Value> {
        let session_id = &self.info.session_id;
        Some(match event {
            AgentEvent::SubAgent {
                run_id,
                agent,
                parent_call_id,
                event,
            } => {
                return subagent_line(
                    self.stream_json(event),
                    run_id,
                    agent,
                    parent_call_id,
                    event,
                );
            }
            AgentEvent::RunStart {
                provider,
                model,
                tools,
                ..
            } => json!({
                "type": "system",
                "subtype": "init",
                "session_id": session_id,
                "cwd": self.info.cwd,
                "model": model,
                "provider": provider,
                "tools": tools,
                "permissionMode": self.info.permission_mode,
            }),
            AgentEvent::AssistantMessage { message } => json!({
                "type": "assistant",
                "message": assistant_message(message),
                "parent_tool_use_id": null,
                "session_id": session_id,
            }),
            AgentEvent::ToolCallEnd { result } => json!({
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [{
                        "type": "tool_result",
                        "tool_use_id": result.tool_call_id,
                        "content": content_blocks(&result.content),
                        "is_error": result.is_error,
                    }],
                },
                "parent_tool_use_id": null,
                "session_id": session_id,
            }),
            AgentEvent::RetryStart {
                attempt,
                delay,
                reason,
            } => json!({
                "type": "system",
                "subtype": "api_retry",
                "attempt": attempt,
                "retry_delay_ms": u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                "error": reason,
                "session_id": session_id,
            }),
            AgentEvent::CompactionEnd {
                error: None,
                kept_messages,
                tokens_after,
            } => json!({
                "type": "system",
                "subtype": "compact_boundary",
                "kept_messages": kept_messages,
                "tokens_after": tokens_after,
                "session_id": session_id,
            }),
            _ => return None,
        })
    }

    fn print_line(&self, value: &Value) {
        let mut stdout = self.lock();
        let _ = writeln!(stdout, "{value}");
        let _ = stdout.flush();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, std::io::Stdout> {
        self.stdout
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A sub-agent's event as stream-json prints it: the line its own event makes, with
/// `parent_tool_use_id` set to the call that started it (as Claude Code tags a sub-agent's
/// messages) and `subagent` naming the run; its start and end as `system` lines of their own.
fn subagent_line(
    line: Option<Value>,
    run_id: &str,
    agent: &str,
    parent_call_id: &str,
    event: &AgentEvent,
) -> Option<Value> {
    let mut line = match event {
        AgentEvent::RunStart {
            session_id,
            model,
            tools,
            ..
        } => json!({
            "type": "system",
            "subtype": "subagent_start",
            "session_id": session_id,
            "model": model,
            "tools": tools,
        }),
        AgentEvent::RunEnd {
            outcome,
            turns,
            usage,
        } => json!({
            "type": "system",
            "subtype": "subagent_end",
            "is_error": !outcome.is_success(),
            "result": outcome.text(),
            "num_turns": turns,
            "usage": usage_object(*usage),
        }),
        AgentEvent::ToolCallStart { call } => json!({
            "type": "system",
            "subtype": "subagent_tool_call",
            "tool_use_id": call.id,
            "name": call.name,
        }),
        _ => line?,
    };
    if !matches!(event, AgentEvent::SubAgent { .. }) {
        line["parent_tool_use_id"] = parent_call_id.into();
        line["subagent"] = json!({"run_id": run_id, "agent": agent});
    }
    Some(line)
}

/// Wall time and model time of a run.
#[derive(Clone, Copy, Debug)]
pub struct RunTimes {
    /// The whole run.
    pub total: Duration,
    /// Waiting for the model.
    pub model: Duration,
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// Claude Code's `result` object.
fn result_object(
    outcome: &RunOutcome,
    turns: usize,
    usage: Usage,
    times: RunTimes,
    session_id: &str,
) -> Value {
    let subtype = match outcome {
        RunOutcome::Answered { .. } | RunOutcome::Stopped { .. } => "success",
        RunOutcome::MaxIterations { .. } => "error_max_turns",
        RunOutcome::Cancelled | RunOutcome::Failed { .. } => "error_during_execution",
    };
    json!({
        "type": "result",
        "subtype": subtype,
        "is_error": !outcome.is_success(),
        "duration_ms": millis(times.total),
        "duration_api_ms": millis(times.model),
        "num_turns": turns,
        "result": outcome.text(),
        "session_id": session_id,
        "usage": usage_object(usage),
    })
}

/// Usage as Anthropic's API (and so Claude Code) counts it: `input_tokens` are the prompt
/// tokens neither read from nor written to the cache, so that a wrapper adding the three input
/// counts gets the prompt's size. [`Usage::input_tokens`] includes the cached ones.
fn usage_object(usage: Usage) -> Value {
    let uncached = usage
        .input_tokens
        .saturating_sub(usage.cache_read_tokens)
        .saturating_sub(usage.cache_write_tokens);
    json!({
        "input_tokens": uncached,
        "output_tokens": usage.output_tokens,
        "cache_read_input_tokens": usage.cache_read_tokens,
        "cache_creation_input_tokens": usage.cache_write_tokens,
    })
}

/// An assistant message as Anthropic's API (and so Claude Code) writes it.
fn assistant_message(message: &AssistantMessage) -> Value {
    let content: Vec<Value> = message
        .content
        .iter()
        .map(|part| match part {
            AssistantPart::Text { text } => json!({"type": "text", "text": text}),
            AssistantPart::Reasoning { text, .. } => json!({"type": "thinking", "thinking": text}),
            AssistantPart::ToolCall(call) => json!({
                "type": "tool_use",
                "id": call.id,
                "name": call.name,
                "input": call
                    .parsed_arguments()
                    .unwrap_or_else(|_| Value::String(call.arguments.clone())),
            }),
        })
        .collect();
    let stop_reason = match &message.stop_reason {
        StopReason::EndTurn => "end_turn".to_owned(),
        StopReason::ToolUse => "tool_use".to_owned(),
        StopReason::MaxTokens => "max_tokens".to_owned(),
        StopReason::Refusal => "refusal".to_owned(),
        StopReason::Other(other) => other.clone(),
    };
    json!({
        "type": "message",
        "role": "assistant",
        "model": message.model,
        "content": content,
        "stop_reason": stop_reason,
        "usage": usage_object(message.usage),
    })
}

fn content_blocks(content: &[ContentBlock]) -> Value {
    Value::Array(
        content
            .iter()
            .map(|block| match block {
                ContentBlock::Text { text } => json!({"type": "text", "text": text}),
                ContentBlock::Image { data, mime_type } => json!({
                    "type": "image",
                    "source": {"type": "base64", "media_type": mime_type, "data": data},
                }),
                ContentBlock::ToolReference { tool_name } => {
                    json!({"type": "tool_reference", "tool_name": tool_name})
                }
            })
            .collect(),
    )
}

/// One line per tool call on stderr, and what failed.
fn text_progress(event: &AgentEvent) {
    match event {
        AgentEvent::SubAgent { run_id, event, .. } => match &**event {
            AgentEvent::RunStart { .. } => eprintln!("  [{run_id}] started"),
            AgentEvent::ToolCallStart { call } => {
                eprintln!(
                    "  [{run_id}] → {} {}",
                    call.name,
                    arguments_line(&call.arguments, 90)
                );
            }
            AgentEvent::RunEnd { outcome, turns, .. } => eprintln!(
                "  [{run_id}] {} after {turns} turn{}",
                if outcome.is_success() {
                    "finished"
                } else {
                    "failed"
                },
                if *turns == 1 { "" } else { "s" }
            ),
            AgentEvent::SubAgent { .. } => text_progress(event),
            _ => {}
        },
        AgentEvent::ToolCallStart { call } => {
            eprintln!("→ {} {}", call.name, arguments_line(&call.arguments, 100));
        }
        AgentEvent::ToolCallEnd { result } if result.is_error => {
            eprintln!("  ✗ {}", one_line(&result.text(), 160));
        }
        AgentEvent::CompactionStart {
            trigger,
            tokens_before,
        } => eprintln!("  compacting the conversation ({trigger}, ~{tokens_before} tokens)…"),
        AgentEvent::CompactionEnd {
            error: Some(error), ..
        } => eprintln!("  ✗ compaction failed, going on without: {error}"),
        AgentEvent::RetryStart {
            attempt,
            delay,
            reason,
        } => eprintln!(
            "  retrying the model request (attempt {attempt}) in {:.1} s: {reason}",
            delay.as_secs_f64()
        ),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn usage_counts_input_without_the_cached_tokens_as_claude_code_does() {
        let usage = Usage {
            input_tokens: 1000,
            output_tokens: 20,
            cache_read_tokens: 700,
            cache_write_tokens: 200,
        };
        assert_eq!(
            usage_object(usage),
            json!({"input_tokens": 100, "output_tokens": 20,
                   "cache_read_input_tokens": 700, "cache_creation_input_tokens": 200})
        );
    }
}

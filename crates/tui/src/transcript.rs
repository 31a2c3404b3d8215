//! What the transcript holds: the user's messages, the streamed answers, one box per tool
//! call, notices, and the pending actions tools proposed.

use serde_json::Value;
use toolhost_agent::agent_loop::AgentEvent;
use toolhost_core::conversation::{AssistantPart, Message, ToolCall};
use toolhost_core::{ContentBlock, ToolCallResult, ToolUpdate};
use toolhost_script::{PendingAction, RenderTree};

/// Lines of a running tool's output kept for its box (the box shows a tail of them).
pub const KEPT_OUTPUT_LINES: usize = 2_000;

/// One item of the transcript.
#[derive(Debug)]
pub enum Entry {
    /// A message the user sent.
    User(String),
    /// The model's answer, as Markdown, growing while it streams.
    Assistant(String),
    /// The model's reasoning, when the provider shows it: folded to one line until expanded.
    Reasoning(String),
    /// A tool call and what became of it.
    Tool(Box<ToolBox>),
    /// Something the chat says (command output, errors, a renderer that failed).
    Notice(Notice),
    /// An action a tool proposed, waiting for the user's decision.
    Pending(PendingEntry),
    /// A sub-agent's line, by its run id: live while it runs, its outcome when it ended.
    Child(String),
}

/// How a notice is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoticeKind {
    /// Neutral information.
    Info,
    /// Something to look at.
    Warning,
    /// Something failed.
    Error,
}

/// A line or more the chat itself says.
#[derive(Debug)]
pub struct Notice {
    /// Its kind.
    pub kind: NoticeKind,
    /// Its text.
    pub text: String,
}

/// A tool call's box.
#[derive(Debug)]
pub struct ToolBox {
    /// The call as the model wrote it.
    pub call: ToolCall,
    /// Its arguments, parsed (`{}` when they are not JSON).
    pub args: Value,
    /// The output streamed so far (Bash's chunks appended, other tools' latest update).
    pub partial: Vec<String>,
    /// The last partial update, for a custom renderer.
    pub last_update: Option<ToolUpdate>,
    /// The result, once the call ended.
    pub result: Option<ToolCallResult>,
    /// The custom renderer's drawing of the call, when the tool has one and it worked.
    pub custom_call: Option<RenderTree>,
    /// The custom renderer's drawing of the (partial) result.
    pub custom_result: Option<RenderTree>,
    /// Counts the changes, so that a screen can keep the rows it drew until the next one.
    pub revision: u64,
}

impl ToolBox {
    /// A box for a call that starts.
    pub fn new(call: ToolCall) -> Self {
        let args =
            serde_json::from_str(&call.arguments).unwrap_or(Value::Object(Default::default()));
        Self {
            call,
            args,
            partial: Vec::new(),
            last_update: None,
            result: None,
            custom_call: None,
            custom_result: None,
            revision: 0,
        }
    }

    /// Whether the call still runs.
    pub fn is_running(&self) -> bool {
        self.result.is_none()
    }

    /// Takes a partial update: shell output is appended (its updates are chunks), any other
    /// tool's update replaces the one before (they report their state so far).
    pub fn update(&mut self, update: ToolUpdate) {
        let text = update
            .content
            .iter()
            .filter_map(|block| block.as_text())
            .collect::<Vec<_>>()
            .join("\n");
        if self.call.name == "Bash" {
            let mut joined = self.partial.pop().unwrap_or_default();
            joined.push_str(&text);
            let mut lines: Vec<String> = joined.split('\n').map(str::to_owned).collect();
            self.partial.append(&mut lines);
            let excess = self.partial.len().saturating_sub(KEPT_OUTPUT_LINES);
            self.partial.drain(..excess);
        } else {
            self.partial = text.lines().map(str::to_owned).collect();
        }
        self.last_update = Some(update);
        self.revision += 1;
    }
}

/// A pending action in the transcript.
#[derive(Debug)]
pub struct PendingEntry {
    /// The action, as the tool described it.
    pub action: PendingAction,
    /// What the user decided, and what came of it.
    pub state: PendingState,
}

/// Where a pending action stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PendingState {
    /// Waiting for the user.
    Waiting,
    /// Being applied or discarded.
    Resolving,
    /// Applied; what the action returned.
    Applied(Option<String>),
    /// Discarded.
    Discarded,
    /// Applying or discarding failed.
    Failed(String),
}

/// Takes one of a loop's events into `entries` — the answer and reasoning as they stream, a
/// box per tool call updated until it ends — or gives it back when it is none of those.
pub fn follow(entries: &mut Vec<Entry>, event: AgentEvent) -> Option<AgentEvent> {
    match event {
        AgentEvent::TextDelta { text } => match entries.last_mut() {
            Some(Entry::Assistant(answer)) => answer.push_str(&text),
            _ => entries.push(Entry::Assistant(text)),
        },
        AgentEvent::ReasoningDelta { text } => match entries.last_mut() {
            Some(Entry::Reasoning(thought)) => thought.push_str(&text),
            _ => entries.push(Entry::Reasoning(text)),
        },
        AgentEvent::ResponseRestarted => {
            while let Some(Entry::Assistant(_) | Entry::Reasoning(_)) = entries.last() {
                entries.pop();
            }
        }
        AgentEvent::ToolCallStart { call } => {
            entries.push(Entry::Tool(Box::new(ToolBox::new(call))))
        }
        AgentEvent::ToolCallUpdate { call_id, update } => {
            if let Some(tool) = tool_mut(entries, &call_id) {
                tool.update(update);
            }
        }
        AgentEvent::ToolCallEnd { result } => match tool_mut(entries, &result.tool_call_id) {
            Some(tool) => {
                tool.result = Some(result);
                tool.revision += 1;
            }
            None => {
                // A call refused before it started still gets its box.
                let call = ToolCall {
                    id: result.tool_call_id.clone(),
                    name: result.tool_name.clone(),
                    arguments: String::new(),
                };
                let mut tool = ToolBox::new(call);
                tool.result = Some(result);
                entries.push(Entry::Tool(Box::new(tool)));
            }
        },
        other => return Some(other),
    }
    None
}

/// The box of a call in `entries`, the latest first.
pub fn tool_mut<'a>(entries: &'a mut [Entry], call_id: &str) -> Option<&'a mut ToolBox> {
    entries.iter_mut().rev().find_map(|entry| match entry {
        Entry::Tool(tool) if tool.call.id == call_id => Some(tool.as_mut()),
        _ => None,
    })
}

/// The transcript of a resumed conversation: the user's messages, the answers, and a box per
/// tool call with its result (without `details`, which the session does not keep: the boxes
/// fall back to what the result's text says).
pub fn from_messages(messages: &[Message]) -> Vec<Entry> {
    let mut entries = Vec::new();
    for message in messages {
        match message {
            Message::User { content } => {
                let text = join_text(content);
                if !text.trim().is_empty() {
                    entries.push(Entry::User(text));
                }
            }
            Message::Assistant(answer) => {
                for part in &answer.content {
                    match part {
                        AssistantPart::Text { text } if !text.trim().is_empty() => {
                            entries.push(Entry::Assistant(text.clone()));
                        }
                        AssistantPart::ToolCall(call) => {
                            entries.push(Entry::Tool(Box::new(ToolBox::new(call.clone()))));
                        }
                        _ => {}
                    }
                }
            }
            Message::ToolResult(result) => {
                let found = entries.iter_mut().rev().find_map(|entry| match entry {
                    Entry::Tool(tool) if tool.call.id == result.tool_call_id => Some(tool),
                    _ => None,
                });
                if let Some(tool) = found {
                    tool.result = Some(ToolCallResult {
                        tool_call_id: result.tool_call_id.clone(),
                        tool_name: result.tool_name.clone(),
                        content: result.content.clone(),
                        details: None,
                        is_error: result.is_error,
                        truncated: false,
                        duration: std::time::Duration::ZERO,
                    });
                }
            }
        }
    }
    entries
}

fn join_text(content: &[ContentBlock]) -> String {
    content
        .iter()
        .filter_map(ContentBlock::as_text)
        .collect::<Vec<_>>()
        .join("\n")
}

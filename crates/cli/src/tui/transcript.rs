//! What the transcript holds: the user's messages, the streamed answers, one box per tool
//! call, notices, and the pending actions tools proposed.

use serde_json::Value;
use toolhost_core::conversation::ToolCall;
use toolhost_core::{ToolCallResult, ToolUpdate};
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
    /// A tool call and what became of it.
    Tool(Box<ToolBox>),
    /// Something the chat says (command output, errors, a renderer that failed).
    Notice(Notice),
    /// An action a tool proposed, waiting for the user's decision.
    Pending(PendingEntry),
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

//! `toolhost sessions show`: one session — its record, the branch tree in numbers, usage and
//! cost per turn and in total, and the last messages of the current branch.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::time::SystemTime;

use crate::{Entry, EntryId, EntryKind, Session, SessionStore};
use serde::Serialize;
use toolhost_core::conversation::Usage;

use super::list::{ModelName, SessionSummary, summary};
use super::{SessionsError, age, first_line};
use toolhost_config::Config;
use toolhost_config::pricing::{Pricing, dollars, round_cost, usage_summary};
use toolhost_config::providers::pricing_for;

/// How many messages of the current branch `show` ends with.
pub const LAST_MESSAGES: usize = 6;

/// Characters of a message `show` prints.
const PREVIEW_CHARS: usize = 100;

/// What `show` says of a session (and `--json` prints).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SessionReport {
    /// The record, as `list` shows it.
    #[serde(flatten)]
    pub summary: SessionSummary,
    /// The entry the conversation ends at.
    pub leaf: Option<i64>,
    /// Entries on the current branch (root to leaf).
    pub branch_entries: usize,
    /// Ends of branches in the tree (1: no branch was ever made).
    pub leaves: usize,
    /// The current branch's turns: each user message and the responses that followed it.
    pub turns: Vec<TurnUsage>,
    /// Usage and cost over every branch.
    pub totals: Totals,
    /// The last messages of the current branch, oldest first.
    pub last_messages: Vec<MessagePreview>,
}

/// One turn of the current branch.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TurnUsage {
    /// The user message that started it (`None`: responses before any user message).
    pub entry: Option<i64>,
    /// Its first line.
    pub prompt: String,
    /// The model's responses in it.
    pub responses: usize,
    /// Their tokens.
    pub usage: Usage,
    /// Their cost, USD; `None` unless every response has a known price.
    pub cost_usd: Option<f64>,
}

/// The session's totals.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Totals {
    /// Tokens as the session counts them: every response of every branch, and usage added
    /// outside responses (a compaction's summary).
    pub usage: Usage,
    /// The responses of every branch.
    pub responses: usize,
    /// Those whose model has a known price.
    pub priced_responses: usize,
    /// The cost of the priced responses, USD; `None` when none is priced.
    pub cost_usd: Option<f64>,
    /// Tokens counted outside any stored response, not priced.
    pub tokens_outside_responses: u64,
}

/// One message of the current branch, shortened.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MessagePreview {
    /// Its entry.
    pub entry: i64,
    /// `user`, `assistant`, `tool`, `summary`.
    pub role: &'static str,
    /// Its first line (a tool call as `→ Name {arguments}`).
    pub text: String,
}

/// The report of `session`.
pub fn report(
    store: &SessionStore,
    config: &Config,
    session: &Session,
) -> Result<SessionReport, SessionsError> {
    let tree = store.tree(&session.id)?;
    let models = models_in_force(&tree);
    let price = |entry: &Entry| -> Option<Pricing> {
        let EntryKind::AssistantMessage(message) = &entry.kind else {
            return None;
        };
        let (provider, model) = models.get(&entry.id)?;
        message
            .model
            .as_deref()
            .and_then(|reported| pricing_for(config, provider, reported))
            .or_else(|| pricing_for(config, provider, model))
    };

    let parents: HashSet<EntryId> = tree.iter().filter_map(|entry| entry.parent).collect();
    let leaves = tree
        .iter()
        .filter(|entry| !parents.contains(&entry.id))
        .count();

    let mut totals = Totals {
        usage: session.usage,
        responses: 0,
        priced_responses: 0,
        cost_usd: None,
        tokens_outside_responses: 0,
    };
    let mut response_tokens = 0;
    for entry in &tree {
        if let EntryKind::AssistantMessage(message) = &entry.kind {
            totals.responses += 1;
            response_tokens += message.usage.input_tokens + message.usage.output_tokens;
            if let Some(pricing) = price(entry) {
                totals.priced_responses += 1;
                *totals.cost_usd.get_or_insert(0.0) += pricing.cost(&message.usage);
            }
        }
    }
    totals.cost_usd = totals.cost_usd.map(round_cost);
    totals.tokens_outside_responses =
        (session.usage.input_tokens + session.usage.output_tokens).saturating_sub(response_tokens);

    let path = branch(&tree, session.leaf);
    let mut turns: Vec<TurnUsage> = Vec::new();
    for entry in &path {
        match &entry.kind {
            EntryKind::UserMessage { content } => turns.push(TurnUsage {
                entry: Some(entry.id.0),
                prompt: first_line(&text_of(content), 60),
                responses: 0,
                usage: Usage::default(),
                cost_usd: Some(0.0),
            }),
            EntryKind::AssistantMessage(message) => {
                if turns.is_empty() {
                    turns.push(TurnUsage {
                        entry: None,
                        prompt: "(before the first user message)".into(),
                        responses: 0,
                        usage: Usage::default(),
                        cost_usd: Some(0.0),
                    });
                }
                if let Some(turn) = turns.last_mut() {
                    turn.responses += 1;
                    turn.usage += message.usage;
                    turn.cost_usd = match (turn.cost_usd, price(entry)) {
                        (Some(sum), Some(pricing)) => {
                            Some(round_cost(sum + pricing.cost(&message.usage)))
                        }
                        _ => None,
                    };
                }
            }
            _ => {}
        }
    }
    let mut last_messages: Vec<MessagePreview> = path
        .iter()
        .rev()
        .filter_map(|entry| preview(entry))
        .take(LAST_MESSAGES)
        .collect();
    last_messages.reverse();
    let mut summary = summary(store, config, session)?;
    // The totals of `show` are exact where `list` priced everything at the latest model.
    summary.cost_usd = totals.cost_usd;
    Ok(SessionReport {
        summary,
        leaf: session.leaf.map(|leaf| leaf.0),
        branch_entries: path.len(),
        leaves,
        turns,
        totals,
        last_messages,
    })
}

/// The provider and model in force at each entry: set by a turn context or a model change,
/// inherited from the parent otherwise (a parent's id is smaller: the tree is in id order).
fn models_in_force(tree: &[Entry]) -> HashMap<EntryId, (String, String)> {
    let mut models: HashMap<EntryId, (String, String)> = HashMap::with_capacity(tree.len());
    for entry in tree {
        let own = match &entry.kind {
            EntryKind::TurnContext(context) => {
                Some((context.provider.clone(), context.model.clone()))
            }
            EntryKind::ModelChange { provider, model } => Some((provider.clone(), model.clone())),
            _ => None,
        };
        if let Some(model) =
            own.or_else(|| entry.parent.and_then(|parent| models.get(&parent)).cloned())
        {
            models.insert(entry.id, model);
        }
    }
    models
}

/// The entries from the root to `leaf`, root first.
pub(super) fn branch(tree: &[Entry], leaf: Option<EntryId>) -> Vec<&Entry> {
    let by_id: HashMap<EntryId, &Entry> = tree.iter().map(|entry| (entry.id, entry)).collect();
    let mut path = Vec::new();
    let mut next = leaf;
    while let Some(entry) = next.and_then(|id| by_id.get(&id)) {
        path.push(*entry);
        next = entry.parent;
    }
    path.reverse();
    path
}

pub(super) fn text_of(content: &[toolhost_core::ContentBlock]) -> String {
    content
        .iter()
        .filter_map(|block| block.as_text())
        .collect::<Vec<_>>()
        .join("\n")
}

fn preview(entry: &Entry) -> Option<MessagePreview> {
    let (role, text) = match &entry.kind {
        EntryKind::UserMessage { content } => ("user", text_of(content)),
        EntryKind::AssistantMessage(message) => {
            let mut text = message.text();
            for call in message.tool_calls() {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(&format!("→ {} {}", call.name, call.arguments));
            }
            ("assistant", text)
        }
        EntryKind::ToolResult { message, .. } => (
            "tool",
            format!("{}: {}", message.tool_name, text_of(&message.content)),
        ),
        EntryKind::Compaction(compaction) => ("summary", compaction.summary.clone()),
        EntryKind::BranchSummary { summary, .. } => ("summary", summary.clone()),
        _ => return None,
    };
    Some(MessagePreview {
        entry: entry.id.0,
        role,
        text: first_line(&text, PREVIEW_CHARS),
    })
}

/// The report as text.
pub fn render_report(report: &SessionReport, now: SystemTime) -> String {
    let summary = &report.summary;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}",
        summary.title.as_deref().unwrap_or("(untitled session)")
    );
    let mut field = |name: &str, value: String| {
        let _ = writeln!(out, "  {name:<10} {value}");
    };
    field("id", summary.id.clone());
    if let Some(workspace) = &summary.workspace {
        field("workspace", workspace.display().to_string());
    }
    field("created", summary.created.clone());
    field(
        "updated",
        format!("{} ({})", summary.updated, age(now, summary.updated_at)),
    );
    field("status", summary.status.as_str().to_owned());
    if let Some(ModelName { provider, model }) = &summary.model {
        field("model", format!("{provider} / {model}"));
    }
    if let Some(parent) = &summary.parent {
        field("parent", parent.clone());
    }
    let branches = if report.leaves > 1 {
        format!("{} branches", report.leaves)
    } else {
        "no branches".to_owned()
    };
    field(
        "entries",
        format!(
            "{} ({branches}; the current one has {}{})",
            summary.entries,
            report.branch_entries,
            report
                .leaf
                .map(|leaf| format!(", ending at entry {leaf}"))
                .unwrap_or_default()
        ),
    );
    let totals = &report.totals;
    let mut usage = usage_summary(&totals.usage, None);
    match totals.cost_usd {
        Some(cost) if totals.priced_responses == totals.responses => {
            usage.push_str(&format!(" · cost {}", dollars(cost)));
        }
        Some(cost) => usage.push_str(&format!(
            " · cost {} for {} of {} responses (the others' models have no price)",
            dollars(cost),
            totals.priced_responses,
            totals.responses
        )),
        None if totals.responses > 0 => usage.push_str(" · no price known for its models"),
        None => {}
    }
    if totals.tokens_outside_responses > 0 {
        usage.push_str(&format!(
            " ({} tokens outside responses, not priced)",
            toolhost_config::pricing::thousands(totals.tokens_outside_responses)
        ));
    }
    field("usage", usage);

    if !report.turns.is_empty() {
        let _ = writeln!(out, "\nTurns of the current branch:");
        for (number, turn) in report.turns.iter().enumerate() {
            let cost = turn
                .cost_usd
                .filter(|_| turn.responses > 0)
                .map(|cost| format!(" · {}", dollars(cost)))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "  {:>3}. {}\n       {} response{} · {}{cost}",
                number + 1,
                turn.prompt,
                turn.responses,
                if turn.responses == 1 { "" } else { "s" },
                usage_summary(&turn.usage, None).trim_start_matches("tokens: "),
            );
        }
    }
    if !report.last_messages.is_empty() {
        let _ = writeln!(out, "\nLast messages:");
        for message in &report.last_messages {
            let _ = writeln!(
                out,
                "  [{}] {:<9} {}",
                message.entry, message.role, message.text
            );
        }
    }
    out
}

//! Compaction as pi's extensions see it: `session_before_compact` handlers may cancel it,
//! `session_compact` tells them it happened, and a `ctx.compact()` that passed callbacks
//! hears how it ended.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::{EntryScope, ExtensionSession};

/// A compaction an extension asked for with `ctx.compact({ customInstructions, onComplete,
/// onError })`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompactRequest {
    /// What the summary should keep.
    pub instructions: Option<String>,
    /// Who to tell how it ended: the module and its number for the request (when it passed a
    /// callback).
    pub(crate) answer_to: Option<(PathBuf, u64)>,
}

/// What the `session_before_compact` handlers decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CompactVerdict {
    /// Compact as usual: the model summarises.
    Proceed,
    /// Do not compact, for this reason.
    Cancel(String),
    /// Compact with this summary (an extension's `{ compaction: { summary } }`).
    Summary(String),
}

/// What one compaction produced, as pi's `CompactionResult` and `CompactionEntry` say it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompactionDone<'a> {
    /// The summary.
    pub summary: &'a str,
    /// The conversation's estimated size before.
    pub tokens_before: u64,
    /// Files the summarised part read.
    pub files_read: &'a [String],
    /// Files it changed.
    pub files_modified: &'a [String],
    /// Whether an extension's `session_before_compact` handler wrote the summary.
    pub from_extension: bool,
}

impl CompactRequest {
    /// A compaction with `instructions` that no extension waits for (`/compact TEXT`).
    pub fn new(instructions: Option<String>) -> Self {
        Self {
            instructions,
            answer_to: None,
        }
    }
}

impl CompactionDone<'_> {
    fn result(&self) -> Value {
        json!({
            "summary": self.summary,
            "tokensBefore": self.tokens_before,
            "details": { "readFiles": self.files_read, "modifiedFiles": self.files_modified },
        })
    }
}

impl ExtensionSession {
    /// `session_before_compact`: whether the compaction goes on, and with whose summary.
    /// `instructions` are the compaction's (`/compact TEXT`, or an extension's
    /// `customInstructions`).
    pub async fn before_compact(
        &self,
        instructions: Option<&str>,
        tokens_before: u64,
    ) -> CompactVerdict {
        const EVENT: &str = "session_before_compact";
        if !self.extensions().listens_to(EVENT) {
            return CompactVerdict::Proceed;
        }
        let payload = json!({
            "customInstructions": instructions,
            "preparation": { "tokensBefore": tokens_before },
            "branchEntries": self.stored_entries(EntryScope::Branch),
        });
        let answer = self.extensions().before_compact(&payload).await;
        self.apply_and_deliver().await;
        if answer.get("cancel").and_then(Value::as_bool) == Some(true) {
            return CompactVerdict::Cancel(format!(
                "an extension's {EVENT} handler cancelled the compaction"
            ));
        }
        match answer
            .pointer("/compaction/summary")
            .and_then(Value::as_str)
        {
            Some(summary) => CompactVerdict::Summary(summary.to_owned()),
            None => CompactVerdict::Proceed,
        }
    }

    /// `session_compact` after a compaction, and the callbacks of the `ctx.compact()` that
    /// asked for it (`request`), with how it ended.
    pub async fn compacted(
        &self,
        request: Option<&CompactRequest>,
        outcome: Result<CompactionDone<'_>, String>,
    ) {
        if let Ok(done) = &outcome {
            let entry = json!({
                "type": "compaction",
                "summary": done.summary,
                "tokensBefore": done.tokens_before,
                "details": done.result()["details"],
            });
            self.notify(
                "session_compact",
                &json!({ "compactionEntry": entry, "fromExtension": done.from_extension }),
            )
            .await;
        }
        if let Some((module, number)) = request.and_then(|request| request.answer_to.as_ref()) {
            let outcome = outcome.map(|done| done.result());
            self.extensions()
                .answer_compact(module, *number, outcome)
                .await;
            self.apply_and_deliver().await;
        }
    }
}

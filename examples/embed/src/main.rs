//! Embedding toolhost: a tool of this program's own, a registry with a small permission rule of
//! its own, and three calls through the one pipeline — one whose string argument the schema
//! coerces to a number, one with an argument missing, and one the authoriser refuses.
//!
//! `cargo run -p toolhost-embed-example` prints what each call returned; the test suite runs it
//! and checks the output (`crates/cli/tests/book.rs`).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use toolhost_core::{
    Authorization, Authorizer, CallRequest, Sensitivity, ToolAnnotations, ToolContext, ToolError,
    ToolOutput, ToolRegistry, ToolSpec, ToolUpdate, TypedTool,
};

/// Parameters of `WordCount`: the JSON Schema the model sees is derived from this struct, and
/// the doc comments become the parameters' descriptions.
#[derive(Deserialize, JsonSchema)]
struct WordCountParams {
    /// The text to count words in.
    text: String,
    /// Count only words at least this long.
    min_len: Option<usize>,
}

/// Counts the words of a text.
struct WordCount;

impl TypedTool for WordCount {
    type Params = WordCountParams;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new("WordCount", "Counts the words in a text.")
            .with_label("Count words")
            .with_annotations(ToolAnnotations::READ_ONLY)
            .with_sensitivity(Sensitivity::Safe)
    }

    async fn run(
        &self,
        params: WordCountParams,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        if ctx.is_cancelled() {
            return Err(ToolError::new("cancelled"));
        }
        ctx.on_update(ToolUpdate::text("counting…"));
        let min = params.min_len.unwrap_or(0);
        let count = params
            .text
            .split_whitespace()
            .filter(|word| word.len() >= min)
            .count();
        Ok(ToolOutput::text(format!("{count} words"))
            .with_details(serde_json::json!({ "count": count })))
    }
}

/// This program's permission rule: no text over 1000 characters.
struct ShortTextsOnly;

#[async_trait::async_trait]
impl Authorizer for ShortTextsOnly {
    async fn authorize(&self, request: CallRequest<'_>) -> Authorization {
        let length = request.args["text"].as_str().map_or(0, str::len);
        if length > 1000 {
            Authorization::Deny {
                reason: format!("texts over 1000 characters are refused here ({length} given)"),
            }
        } else {
            Authorization::Allow
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let registry = ToolRegistry::builder()
        .authorizer(Arc::new(ShortTextsOnly))
        .build();
    registry.register(WordCount)?;

    let calls = [
        (
            "coerced",
            serde_json::json!({"text": "a bb ccc", "min_len": "2"}),
        ),
        ("invalid", serde_json::json!({"min_len": 2})),
        ("refused", serde_json::json!({"text": "word ".repeat(300)})),
    ];
    for (id, args) in calls {
        let result = registry.execute(id, "WordCount", args).await;
        let verdict = if result.is_error { "error" } else { "ok" };
        // The first two lines: an invalid call's second names the parameter.
        let text = result.text();
        let text: Vec<&str> = text.lines().take(2).collect();
        println!("{id}: {verdict}: {}", text.join(" ").trim_end());
    }
    Ok(())
}

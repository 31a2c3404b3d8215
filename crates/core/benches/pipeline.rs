//! The pipeline's own cost per call: a no-op tool with a six-property schema, arguments that
//! need one coercion, through lookup, coercion, validation, authorisation, execution,
//! truncation check and result assembly.

#![allow(clippy::expect_used, missing_docs)]

use criterion::{Criterion, criterion_group, criterion_main};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolhost_core::{ToolContext, ToolError, ToolOutput, ToolRegistry, ToolSpec, TypedTool};

/// Six parameters of the common kinds.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct SixParams {
    path: String,
    offset: Option<u64>,
    limit: Option<u64>,
    recursive: Option<bool>,
    pattern: Option<String>,
    tags: Option<Vec<String>>,
}

struct Noop;

impl TypedTool for Noop {
    type Params = SixParams;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new("Noop", "Does nothing.")
    }

    async fn run(&self, _params: SixParams, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text("ok"))
    }
}

fn pipeline_overhead(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let registry = ToolRegistry::new();
    registry.register(Noop).expect("register");
    let args = json!({
        "path": "src/lib.rs",
        "offset": "10",
        "limit": 200,
        "recursive": true,
        "pattern": "fn main",
        "tags": ["a", "b"],
    });
    c.bench_function("pipeline_noop_six_params", |b| {
        b.iter(|| {
            let result = runtime.block_on(registry.execute("call", "Noop", args.clone()));
            assert!(!result.is_error);
        });
    });
}

criterion_group!(benches, pipeline_overhead);
criterion_main!(benches);

//! Fuzzes the whole pipeline: any bytes become a tool name and arguments, and the call must
//! come back as a result — never a panic, never a hang — with the error hint on errors.

#![no_main]

use libfuzzer_sys::fuzz_target;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use toolhost_core::{ERROR_HINT, ToolContext, ToolError, ToolOutput, ToolRegistry, ToolSpec, TypedTool};

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Params {
    text: String,
    count: Option<u8>,
    flags: Option<Vec<bool>>,
    nested: Option<Nested>,
    either: Option<Either>,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Nested {
    depth: u32,
    names: Vec<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum Either {
    Number(f64),
    Words(Vec<String>),
}

struct Target;

impl TypedTool for Target {
    type Params = Params;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new("Target", "Fuzz target.")
    }

    async fn run(&self, params: Params, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(params.text.repeat(usize::from(params.count.unwrap_or(1)))))
    }
}

fuzz_target!(|data: &[u8]| {
    let (name, args) = match data.iter().position(|&b| b == b'\n') {
        Some(split) => (&data[..split], &data[split + 1..]),
        None => (&b"Target"[..], data),
    };
    let name = String::from_utf8_lossy(name);
    let args: Value = serde_json::from_slice(args).unwrap_or(Value::Null);
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let registry = ToolRegistry::builder().max_chars(1_000).build();
    registry.register(Target).unwrap();
    let result = runtime.block_on(registry.execute("fuzz", &name, args));
    if result.is_error {
        assert!(result.text().ends_with(ERROR_HINT));
    }
});

//! Asks a model one question, streaming the answer to stdout and the events to stderr — a
//! manual check against a real server.
//!
//! ```sh
//! cargo run -p toolhost-providers --example ask -- openai-chat http://127.0.0.1:8091/v1 qwen "Say hi"
//! cargo run -p toolhost-providers --example ask -- anthropic http://127.0.0.1:8091 qwen "Say hi" --tool
//! ```
//! The key comes from `API_KEY` when set; `--tool` offers a `Read` tool, whose calls are
//! answered with a canned file content and the conversation continued once.

use std::io::Write;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use toolhost_core::conversation::{Message, ToolResultMessage};
use toolhost_core::{ContentBlock, ToolSpec};
use toolhost_providers::{Api, EventSink, ModelRequest, ProviderConfig, StreamEvent, connect};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [api, base_url, model, prompt, rest @ ..] = args.as_slice() else {
        return Err("usage: ask API BASE_URL MODEL PROMPT [--tool]".into());
    };
    let api: Api = serde_json::from_value(serde_json::Value::String(api.clone()))?;
    let mut config = ProviderConfig::new("cli", api, base_url, model);
    config.api_key = std::env::var("API_KEY").ok();
    config.max_output_tokens = Some(256);
    let provider = connect(config)?;
    let tools = if rest.iter().any(|flag| flag == "--tool") {
        vec![
            ToolSpec::new("Read", "Reads a text file and returns its content.").with_parameters(
                serde_json::json!({
                    "type": "object",
                    "properties": {"path": {"type": "string", "description": "The file to read"}},
                    "required": ["path"],
                }),
            ),
        ]
    } else {
        Vec::new()
    };
    let mut request = ModelRequest {
        system: "You are a helpful assistant.".into(),
        messages: vec![Message::user(prompt.as_str())],
        tools: tools.into(),
        ..ModelRequest::default()
    };
    let sink: EventSink = Arc::new(|event: StreamEvent| match event {
        StreamEvent::TextDelta(text) => {
            print!("{text}");
            let _ = std::io::stdout().flush();
        }
        other => eprintln!("[{other:?}]"),
    });
    let started = std::time::Instant::now();
    let message = provider
        .stream(&request, sink.clone(), CancellationToken::new())
        .await?;
    println!();
    eprintln!("[{:.1?}] {message:#?}", started.elapsed());
    let calls: Vec<_> = message.tool_calls().cloned().collect();
    if calls.is_empty() {
        return Ok(());
    }
    request.messages.push(Message::Assistant(message));
    for call in calls {
        request
            .messages
            .push(Message::ToolResult(ToolResultMessage {
                tool_call_id: call.id,
                tool_name: call.name,
                content: vec![ContentBlock::text(
                    "Hello from hello.txt: the build is green.",
                )],
                is_error: false,
            }));
    }
    let started = std::time::Instant::now();
    let message = provider
        .stream(&request, sink, CancellationToken::new())
        .await?;
    println!();
    eprintln!("[{:.1?}] {message:#?}", started.elapsed());
    Ok(())
}

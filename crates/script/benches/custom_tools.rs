//! Custom tool figures: discovering and loading 20 tools, the first call of a freshly loaded
//! tool, and the per-call overhead of a trivial tool through the registry's pipeline; for pi
//! extensions, loading 20 of them (and the memory each holds), the cost a `tool_call` and a
//! `tool_result` handler add to a call, and a call of a tool registered with `pi.registerTool`.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::PathBuf;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use toolhost_core::ContentBlock;
use toolhost_core::ToolRegistry;
use toolhost_script::{Extensions, ScriptHost, load_custom_tools};

/// pi extensions in the published shape: a tool, a `tool_call` and a `tool_result` handler,
/// a command.
fn write_extensions(dir: &std::path::Path, count: usize) -> Vec<PathBuf> {
    (0..count)
        .map(|n| {
            let path = dir.join(format!("ext_{n:02}.ts"));
            let source = format!(
                "import {{ Type }} from '@sinclair/typebox';\n\
                 export default function (pi: any) {{\n\
                   pi.registerTool({{ name: 'ext_{n:02}', label: 'Echo', description: 'Echoes', \
                     parameters: Type.Object({{ text: Type.String() }}), \
                     async execute(_id: string, p: {{ text: string }}) {{ return {{ content: [{{ type: 'text', text: p.text }}] }}; }} }});\n\
                   pi.on('tool_call', (event: any) => {{ if (event.input.text === 'block') return {{ block: true, reason: 'no' }}; }});\n\
                   pi.on('tool_result', (event: any) => event.isError ? {{ isError: false }} : undefined);\n\
                   pi.registerCommand('cmd_{n:02}', {{ description: 'does nothing', handler: async () => {{}} }});\n\
                 }}"
            );
            std::fs::write(&path, source).unwrap();
            path
        })
        .collect()
}

/// The resident memory of this process, in bytes (Linux).
fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|field| field.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

fn write_tools(dir: &std::path::Path, count: usize) -> Vec<PathBuf> {
    (0..count)
        .map(|n| {
            let path = dir.join(format!("tool_{n:02}.ts"));
            let source = format!(
                "import {{ Type }} from '@sinclair/typebox';\n\
                 export default () => ({{ name: 'tool_{n:02}', description: 'Echoes', \
                 parameters: Type.Object({{ text: Type.String() }}), \
                 async execute(_id: string, p: {{ text: string }}) {{ return {{ content: [{{ type: 'text', text: p.text }}] }}; }} }});"
            );
            std::fs::write(&path, source).unwrap();
            path
        })
        .collect()
}

fn registry_of(discovery: &toolhost_script::Discovery) -> ToolRegistry {
    let registry = ToolRegistry::new();
    for loaded in &discovery.tools {
        registry.register_arc(loaded.tool.clone()).unwrap();
    }
    registry
}

fn benches(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let paths = write_tools(dir.path(), 20);
    let host: Arc<ScriptHost> = ScriptHost::builder(dir.path()).home(None).build();

    c.bench_function("discover_and_load_20_tools", |b| {
        b.to_async(&runtime).iter(|| async {
            let discovery = load_custom_tools(&host, &[dir.path().to_path_buf()]).await;
            assert_eq!(discovery.tools.len(), 20);
        });
    });

    c.bench_function("first_call_of_a_loaded_tool", |b| {
        b.iter_custom(|iterations| {
            runtime.block_on(async {
                let mut total = std::time::Duration::ZERO;
                for _ in 0..iterations {
                    let discovery = load_custom_tools(&host, &paths[..1]).await;
                    let registry = registry_of(&discovery);
                    let started = std::time::Instant::now();
                    let result = registry
                        .execute("c", "tool_00", json!({"text": "hi"}))
                        .await;
                    total += started.elapsed();
                    assert!(!result.is_error);
                }
                total
            })
        });
    });

    let registry =
        runtime.block_on(async { registry_of(&load_custom_tools(&host, &paths[..1]).await) });
    c.bench_function("call_trivial_custom_tool", |b| {
        b.to_async(&runtime).iter(|| async {
            let result = registry
                .execute("c", "tool_00", json!({"text": "hi"}))
                .await;
            assert!(!result.is_error);
        });
    });
}

fn extension_benches(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let paths = write_extensions(dir.path(), 20);
    let host: Arc<ScriptHost> = ScriptHost::builder(dir.path()).home(None).build();

    // The memory 20 loaded extensions hold, once (criterion measures time only).
    let before = resident_bytes();
    let kept = runtime.block_on(load_custom_tools(&host, &[dir.path().to_path_buf()]));
    assert_eq!(kept.extensions.len(), 20);
    let after = resident_bytes();
    eprintln!(
        "resident memory per loaded extension: {:.2} MiB",
        after.saturating_sub(before) as f64 / 20.0 / (1024.0 * 1024.0)
    );
    drop(kept);

    c.bench_function("discover_and_load_20_extensions", |b| {
        b.to_async(&runtime).iter(|| async {
            let discovery = load_custom_tools(&host, &[dir.path().to_path_buf()]).await;
            assert_eq!(discovery.extensions.len(), 20);
        });
    });

    let discovery = runtime.block_on(load_custom_tools(&host, &paths[..1]));
    let registry = registry_of(&discovery);
    let extensions = Extensions::new(discovery.extensions.clone());
    c.bench_function("tool_call_and_tool_result_handlers_of_one_call", |b| {
        let input = json!({"text": "hi"});
        let content = [ContentBlock::text("hi")];
        b.to_async(&runtime).iter(|| async {
            let verdict = extensions.tool_call("ext_00", "c", &input).await;
            assert_eq!(verdict, toolhost_script::ToolCallVerdict::Proceed);
            let change = extensions
                .tool_result("ext_00", "c", &input, &content, None, false)
                .await;
            assert!(change.content.is_none());
        });
    });

    c.bench_function("call_tool_registered_by_an_extension", |b| {
        b.to_async(&runtime).iter(|| async {
            let result = registry.execute("c", "ext_00", json!({"text": "hi"})).await;
            assert!(!result.is_error);
        });
    });
}

criterion_group!(custom_tools, benches, extension_benches);
criterion_main!(custom_tools);

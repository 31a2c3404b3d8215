//! Custom tool figures: discovering and loading 20 tools, the first call of a freshly loaded
//! tool, and the per-call overhead of a trivial tool through the registry's pipeline.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::PathBuf;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use toolhost_core::ToolRegistry;
use toolhost_script::{ScriptHost, load_custom_tools};

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

criterion_group!(custom_tools, benches);
criterion_main!(custom_tools);

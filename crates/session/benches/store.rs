//! Figures for the session store: the latency of one entry's commit (p50, p99, max) over
//! 100 000 appends, with `synchronous = FULL` and `NORMAL`, and the time to load a
//! 10 000-entry conversation for a resume (open, the recursive path query, [`Resume`]).
//!
//! `cargo bench -p toolhost-session --bench store`; `TOOLHOST_BENCH_APPENDS` changes the
//! number of appends (in sessions of 10 000), `TOOLHOST_BENCH_DIR` the folder (default: a
//! temp folder, on the same disk as `~/.toolhost` here).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;
use toolhost_core::ContentBlock;
use toolhost_core::conversation::{
    AssistantMessage, AssistantPart, StopReason, ToolCall, ToolResultMessage, Usage,
};
use toolhost_session::{
    EntryKind, NewSession, Resume, SessionId, SessionStore, StoreOptions, Synchronous,
};

const SESSION_ENTRIES: usize = 10_000;
const RESUMES: usize = 20;

fn main() {
    let appends: usize = std::env::var("TOOLHOST_BENCH_APPENDS")
        .ok()
        .and_then(|count| count.parse().ok())
        .unwrap_or(100_000);
    let dir = match std::env::var_os("TOOLHOST_BENCH_DIR") {
        Some(dir) => tempfile::tempdir_in(dir).unwrap(),
        None => tempfile::tempdir().unwrap(),
    };
    println!(
        "| synchronous | appends | commit p50 | commit p99 | commit max | appends/s | file size | resume 10 000 entries (median / max of {RESUMES}) |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (name, synchronous) in [("NORMAL", Synchronous::Normal), ("FULL", Synchronous::Full)] {
        let path = dir.path().join(format!("{name}.db"));
        let (latencies, total, session) = append_all(&path, synchronous, appends);
        let (median, max) = resume(&path, &session);
        let size = std::fs::metadata(&path).unwrap().len();
        if std::env::var_os("TOOLHOST_BENCH_PHASES").is_some() {
            let over = latencies
                .iter()
                .filter(|latency| latency.as_millis() >= 2)
                .count();
            eprintln!(
                "{name}: p90 {}, p95 {}, p98 {}, {over} commits of 2 ms or more",
                ms(percentile(&latencies, 90.0)),
                ms(percentile(&latencies, 95.0)),
                ms(percentile(&latencies, 98.0)),
            );
        }
        println!(
            "| {name} | {appends} | {} | {} | {} | {:.0} | {:.0} MB | {} / {} |",
            ms(percentile(&latencies, 50.0)),
            ms(percentile(&latencies, 99.0)),
            ms(*latencies.last().unwrap()),
            appends as f64 / total.as_secs_f64(),
            size as f64 / 1e6,
            ms(median),
            ms(max),
        );
    }
}

/// Appends `count` entries in sessions of [`SESSION_ENTRIES`]; returns the sorted commit
/// latencies, the total time and the first session (full once `count` reaches
/// [`SESSION_ENTRIES`]).
fn append_all(
    path: &Path,
    synchronous: Synchronous,
    count: usize,
) -> (Vec<Duration>, Duration, SessionId) {
    let mut store = StoreOptions::default()
        .synchronous(synchronous)
        .open(path)
        .unwrap();
    let mut latencies = Vec::with_capacity(count);
    let mut session = store.create_session(NewSession::default()).unwrap().id;
    let first = session.clone();
    let started = Instant::now();
    for step in 0..count {
        if step > 0 && step.is_multiple_of(SESSION_ENTRIES) {
            session = store.create_session(NewSession::default()).unwrap().id;
        }
        let kind = entry(step);
        let before = Instant::now();
        store.append_at_leaf(&session, &kind).unwrap();
        latencies.push(before.elapsed());
    }
    let total = started.elapsed();
    latencies.sort();
    (latencies, total, first)
}

/// Opens the store afresh and loads the session for a resume, [`RESUMES`] times.
fn resume(path: &Path, session: &SessionId) -> (Duration, Duration) {
    let mut times: Vec<Duration> = (0..RESUMES)
        .map(|_| {
            let started = Instant::now();
            let store = SessionStore::open(path).unwrap();
            let opened = started.elapsed();
            let path = store.conversation(session).unwrap();
            let loaded = started.elapsed();
            let entries = path.len();
            let resume = Resume::from_path(path);
            let elapsed = started.elapsed();
            if std::env::var_os("TOOLHOST_BENCH_PHASES").is_some() {
                eprintln!(
                    "open {opened:?}, path {:?}, resume {:?}",
                    loaded - opened,
                    elapsed - loaded
                );
            }
            assert_eq!(entries, SESSION_ENTRIES);
            assert!(!resume.messages.is_empty());
            elapsed
        })
        .collect();
    times.sort();
    (times[RESUMES / 2], times[RESUMES - 1])
}

/// A turn as the agent stores it: the user's message, a response calling a tool, its result
/// (about 2 KB of text, what a Read of a small file returns).
fn entry(step: usize) -> EntryKind {
    match step % 3 {
        0 => EntryKind::user_text(format!("step {step}: look at src/parser.rs and fix the bug")),
        1 => EntryKind::AssistantMessage(AssistantMessage {
            content: vec![
                AssistantPart::Text {
                    text: "Let me read the parser first to see how it handles the input.".into(),
                },
                AssistantPart::ToolCall(ToolCall {
                    id: format!("call-{step}"),
                    name: "Read".into(),
                    arguments: r#"{"path": "src/parser.rs", "offset": 1, "limit": 200}"#.into(),
                }),
            ],
            stop_reason: StopReason::ToolUse,
            usage: Usage {
                input_tokens: 12_000,
                output_tokens: 80,
                cache_read_tokens: 11_000,
                cache_write_tokens: 0,
            },
            model: Some("model".into()),
        }),
        _ => EntryKind::ToolResult {
            message: ToolResultMessage {
                tool_call_id: format!("call-{}", step - 1),
                tool_name: "Read".into(),
                content: vec![ContentBlock::text(
                    (1..=40)
                        .map(|line| format!("{line:>5}\tfn parse_{line}(input: &str) -> Result<Token, Error> {{\n"))
                        .collect::<String>(),
                )],
                is_error: false,
            },
            details: Some(json!({"path": "src/parser.rs", "lines": 40, "truncated": false})),
        },
    }
}

fn percentile(sorted: &[Duration], percent: f64) -> Duration {
    let at = ((sorted.len() as f64 - 1.0) * percent / 100.0).round() as usize;
    sorted[at]
}

fn ms(duration: Duration) -> String {
    format!("{:.3} ms", duration.as_secs_f64() * 1e3)
}

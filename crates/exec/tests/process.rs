//! The process helper against real processes.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use pretty_assertions::assert_eq;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use toolhost_exec::{OutputStream, ProcessError, ProcessSpec, Termination};

/// Generous bound for "returns promptly": the grace period is 2 s.
const PROMPT: Duration = Duration::from_secs(5);

/// Live (non-zombie) processes whose process group is `group`.
fn group_survivors(group: i32) -> Vec<i32> {
    let mut survivors = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the parenthesised name: state ppid pgrp …
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.len() > 2 && fields[0] != "Z" && fields[2] == group.to_string() {
            survivors.push(pid);
        }
    }
    survivors
}

#[tokio::test]
async fn exit_codes_and_signals_are_reported() -> anyhow::Result<()> {
    let ok = ProcessSpec::bash("true").run().await?;
    assert!(ok.success());
    assert_eq!((ok.exit_code, ok.signal), (Some(0), None));

    let failed = ProcessSpec::bash("echo nope >&2; exit 3").run().await?;
    assert!(!failed.success());
    assert_eq!(failed.exit_code, Some(3));
    assert_eq!(failed.stderr.text, "nope\n");
    assert_eq!(failed.termination, Termination::Exited);

    let killed = ProcessSpec::bash("kill -9 $$").run().await?;
    assert_eq!((killed.exit_code, killed.signal), (None, Some(9)));
    Ok(())
}

#[tokio::test]
async fn timeout_stops_the_process_and_says_so() -> anyhow::Result<()> {
    let started = Instant::now();
    let outcome = ProcessSpec::bash("echo before; sleep 100")
        .timeout(Duration::from_millis(300))
        .run()
        .await?;
    assert_eq!(outcome.termination, Termination::TimedOut);
    assert_eq!(outcome.stdout.text, "before\n");
    assert!(!outcome.success());
    assert!(started.elapsed() < PROMPT, "took {:?}", started.elapsed());
    Ok(())
}

#[tokio::test]
async fn cancellation_kills_grandchildren_too() -> anyhow::Result<()> {
    let cancel = CancellationToken::new();
    let (pid_sender, mut pid_receiver) = tokio::sync::mpsc::unbounded_channel();
    let run = tokio::spawn(
        ProcessSpec::bash("echo $$; sleep 100 & sleep 100")
            .cancellation(cancel.clone())
            .on_output(move |chunk| {
                let _ = pid_sender.send(String::from_utf8_lossy(&chunk.bytes).into_owned());
            })
            .run(),
    );
    let group: i32 = pid_receiver
        .recv()
        .await
        .unwrap_or_default()
        .trim()
        .parse()?;
    // Wait until both sleeps are running in the group.
    let deadline = Instant::now() + PROMPT;
    while group_survivors(group).len() < 3 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(group_survivors(group).len(), 3, "bash and two sleeps");

    let cancelled_at = Instant::now();
    cancel.cancel();
    let outcome = run.await??;
    assert!(
        cancelled_at.elapsed() < PROMPT,
        "took {:?}",
        cancelled_at.elapsed()
    );
    assert_eq!(outcome.termination, Termination::Cancelled);
    assert_eq!(group_survivors(group), Vec::<i32>::new());
    Ok(())
}

#[tokio::test]
async fn background_leftovers_are_stopped_when_the_leader_exits() -> anyhow::Result<()> {
    let outcome = ProcessSpec::bash("sleep 100 >/dev/null 2>&1 & echo $$")
        .run()
        .await?;
    assert!(outcome.success());
    let group: i32 = outcome.stdout.text.trim().parse()?;
    assert_eq!(group_survivors(group), Vec::<i32>::new());
    Ok(())
}

#[tokio::test]
async fn huge_output_keeps_head_and_tail_and_the_whole_file() -> anyhow::Result<()> {
    let folder = tempfile::tempdir()?;
    let full = folder.path().join("full.log");
    let outcome = ProcessSpec::bash("seq 1 200000")
        .full_output_file(&full)
        .run()
        .await?;
    let expected: String = (1..=200_000).map(|n| format!("{n}\n")).collect();
    assert_eq!(std::fs::read_to_string(&full)?, expected);
    assert_eq!(outcome.full_output_path.as_deref(), Some(full.as_path()));

    let combined = &outcome.combined;
    assert!(combined.is_truncated());
    assert_eq!(combined.total_bytes, expected.len() as u64);
    assert_eq!(combined.total_lines, 200_000);
    assert!(combined.text.starts_with("1\n2\n3\n"));
    assert!(combined.text.ends_with("199999\n200000\n"));
    assert!(combined.text.len() <= toolhost_exec::DEFAULT_OUTPUT_CAP_BYTES + 200);
    let marker = format!(
        "[... {} bytes ({} lines) omitted; full output in {} ...]",
        combined.omitted_bytes,
        combined.omitted_lines,
        full.display()
    );
    assert!(combined.text.contains(&marker), "no marker {marker}");
    // What was kept plus what was cut is everything.
    let kept_bytes = combined.text.len() - marker.len() - 1;
    assert_eq!(
        kept_bytes as u64 + combined.omitted_bytes,
        combined.total_bytes
    );
    Ok(())
}

#[tokio::test]
async fn output_cap_is_a_parameter() -> anyhow::Result<()> {
    let outcome = ProcessSpec::bash("seq 1 1000").output_cap(20).run().await?;
    assert_eq!(
        outcome.stdout.text,
        "1\n2\n3\n4\n5\n[... 3874 bytes (993 lines) omitted ...]\n999\n1000\n"
    );
    Ok(())
}

#[tokio::test]
async fn chunks_stream_in_order_and_name_their_stream() -> anyhow::Result<()> {
    let chunks = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&chunks);
    let outcome = ProcessSpec::bash(
        "for i in 1 2 3; do echo out$i; sleep 0.2; echo err$i >&2; sleep 0.2; done",
    )
    .on_output(move |chunk| {
        if let Ok(mut chunks) = sink.lock() {
            chunks.push((
                chunk.stream,
                String::from_utf8_lossy(&chunk.bytes).into_owned(),
            ));
        }
    })
    .run()
    .await?;
    let chunks = chunks
        .lock()
        .map(|chunks| chunks.clone())
        .unwrap_or_default();
    let expected: Vec<(OutputStream, String)> = (1..=3)
        .flat_map(|i| {
            [
                (OutputStream::Stdout, format!("out{i}\n")),
                (OutputStream::Stderr, format!("err{i}\n")),
            ]
        })
        .collect();
    assert_eq!(chunks, expected);
    assert_eq!(
        outcome.combined.text,
        "out1\nerr1\nout2\nerr2\nout3\nerr3\n"
    );
    assert_eq!(outcome.stdout.text, "out1\nout2\nout3\n");
    Ok(())
}

#[tokio::test]
async fn working_dir_and_null_stdin() -> anyhow::Result<()> {
    let folder = tempfile::tempdir()?;
    let outcome = ProcessSpec::bash("pwd; cat; echo done")
        .working_dir(folder.path())
        .run()
        .await?;
    let folder = folder.path().canonicalize()?;
    assert_eq!(outcome.stdout.text, format!("{}\ndone\n", folder.display()));
    Ok(())
}

#[tokio::test]
async fn bad_working_dir_and_missing_program_are_errors() {
    let missing = ProcessSpec::bash("true")
        .working_dir("/definitely/not/here")
        .run()
        .await;
    assert!(matches!(missing, Err(ProcessError::WorkingDir { .. })));

    let program = ProcessSpec::new("toolhost-no-such-program").run().await;
    let Err(error) = program else {
        panic!("a missing program must not run");
    };
    assert!(matches!(error, ProcessError::Spawn { .. }));
    assert!(error.to_string().contains("toolhost-no-such-program"));
}

#[tokio::test]
async fn program_and_args_are_passed_without_a_shell() -> anyhow::Result<()> {
    let outcome = ProcessSpec::new("printf")
        .args(["%s|", "a b", "$HOME", "*"])
        .run()
        .await?;
    assert_eq!(outcome.stdout.text, "a b|$HOME|*|");
    Ok(())
}

#[tokio::test]
async fn an_abandoned_run_takes_its_whole_process_tree_with_it() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let marker = dir.path().join("survivor");
    let command = format!("(sleep 1; touch {}) & sleep 60", marker.display());
    // The caller gives up on the run (drops its future) instead of cancelling it.
    let abandoned =
        tokio::time::timeout(Duration::from_millis(300), ProcessSpec::bash(command).run()).await;
    assert!(abandoned.is_err(), "the run should still have been going");
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(!marker.exists(), "a grandchild outlived the abandoned run");
    Ok(())
}

#[tokio::test]
async fn stdin_bytes_are_fed_to_the_child_then_closed() -> anyhow::Result<()> {
    let outcome = ProcessSpec::bash("tr a-z A-Z")
        .stdin_bytes("hook input\n")
        .run()
        .await?;
    assert!(outcome.success());
    assert_eq!(outcome.stdout.text, "HOOK INPUT\n");

    // A child that never reads its input still finishes normally.
    let ignored = ProcessSpec::bash("echo done")
        .stdin_bytes(vec![b'x'; 1024 * 1024])
        .run()
        .await?;
    assert_eq!(ignored.stdout.text, "done\n");
    Ok(())
}

#[tokio::test]
async fn without_stdin_bytes_the_child_reads_nothing() -> anyhow::Result<()> {
    let outcome = ProcessSpec::bash("cat; echo end").run().await?;
    assert_eq!(outcome.stdout.text, "end\n");
    Ok(())
}

#[tokio::test]
async fn the_full_output_file_is_created_only_past_the_cap() -> anyhow::Result<()> {
    let folder = tempfile::tempdir()?;
    let full = folder.path().join("full.log");
    // Ten bytes fit a ten-byte cap: nothing is left out, so no file.
    let fits = ProcessSpec::bash("printf 0123456789")
        .output_cap(10)
        .full_output_file(&full)
        .run()
        .await?;
    assert!(!fits.combined.is_truncated());
    assert_eq!(fits.full_output_path, None);
    assert!(!full.exists());

    // One byte more, written in two pieces: the file holds all of it.
    let past = ProcessSpec::bash("printf 01234; sleep 0.05; printf 567890")
        .output_cap(10)
        .full_output_file(&full)
        .run()
        .await?;
    assert!(past.combined.is_truncated());
    assert_eq!(past.full_output_path.as_deref(), Some(full.as_path()));
    assert_eq!(std::fs::read_to_string(&full)?, "01234567890");
    Ok(())
}

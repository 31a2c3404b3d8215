//! The bindings behind `api.exec` and `node:child_process`: `exec` (a promise, cancellable
//! through `execCancel`) and `execSync` (blocking the engine's thread until the program ends).
//! Both run [`run_exec`]: the deny list, the embedder's [`super::ExecGate`], the process helper.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use rquickjs::function::Async;
use rquickjs::{Ctx, Function, Object};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::ScriptHost;
use super::blocking::block_on;
use super::exec::{ExecCall, ExecEnvironment, run_exec};

async fn run(
    host: Arc<ScriptHost>,
    file: Arc<Path>,
    request: String,
    cancel: CancellationToken,
) -> String {
    match serde_json::from_str::<ExecCall>(&request) {
        Ok(call) => {
            let environment = ExecEnvironment {
                module: &file,
                cwd: &host.cwd,
                gate: host.exec_gate.as_ref(),
                callers: host.in_flight.of(&file),
                sandbox: host.exec_sandbox.clone(),
                default_timeout: host.exec_timeout,
            };
            run_exec(environment, call, cancel).await
        }
        Err(error) => json!({ "error": format!("invalid exec arguments: {error}") }),
    }
    .to_string()
}

pub(super) fn install<'js>(
    ctx: &Ctx<'js>,
    bindings: &Object<'js>,
    host: &Arc<ScriptHost>,
    module: &Arc<Path>,
) -> rquickjs::Result<()> {
    let h = Arc::clone(host);
    bindings.set(
        "execId",
        Function::new(ctx.clone(), move || {
            h.next_exec.fetch_add(1, Ordering::Relaxed)
        })?,
    )?;
    let h = Arc::clone(host);
    bindings.set(
        "execCancel",
        Function::new(ctx.clone(), move |id: u32| h.exec_cancel(id).cancel())?,
    )?;
    let h = Arc::clone(host);
    let file = Arc::clone(module);
    bindings.set(
        "exec",
        Function::new(
            ctx.clone(),
            Async(move |id: u32, request: String| {
                let host = Arc::clone(&h);
                let file = Arc::clone(&file);
                async move {
                    let cancel = host.exec_cancel(id);
                    let answer = run(Arc::clone(&host), file, request, cancel).await;
                    host.exec_done(id);
                    answer
                }
            }),
        )?,
    )?;
    let h = Arc::clone(host);
    let file = Arc::clone(module);
    bindings.set(
        "execSync",
        Function::new(ctx.clone(), move |request: String| {
            // The program's own timeout bounds it; the wait is bounded by the call's limit.
            let limit = h.limits().call_time_limit;
            let work = run(
                Arc::clone(&h),
                Arc::clone(&file),
                request,
                CancellationToken::new(),
            );
            block_on(work, limit).unwrap_or_else(|message| json!({ "error": message }).to_string())
        })?,
    )
}

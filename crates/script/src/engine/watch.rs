//! `fs.watch` in an engine: `watchStart(path, recursive)` starts a task that polls the path
//! ([`WATCH_POLL_INTERVAL`]) and tells the module's watcher what changed, entering the engine
//! under the call time limit. The task holds the engine weakly: it ends when the watcher is
//! closed, when the session ends ([`crate::ScriptHost::stop_watches`]), or when the engine is
//! gone (the extension was unloaded), and it never keeps the program running.

use std::sync::{Arc, Weak};

use rquickjs::{Ctx, Function, Object};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::Engine;
use crate::host_api::{Snapshot, WATCH_POLL_INTERVAL, changes};

/// Adds `watchStart` and `watchStop` to the host bindings of `engine`'s context.
pub(super) fn install(ctx: &Ctx<'_>, engine: Weak<Engine>) -> rquickjs::Result<()> {
    let bindings: Object = ctx.globals().get("__toolhost_host")?;
    let Some(host) = engine.upgrade().map(|engine| Arc::clone(engine.host())) else {
        return Ok(());
    };
    let starter = Arc::clone(&host);
    bindings.set(
        "watchStart",
        Function::new(ctx.clone(), move |path: String, recursive: bool| {
            let (id, stop) = starter.start_watch();
            tokio::spawn(watch(engine.clone(), id, path, recursive, stop));
            id
        })?,
    )?;
    bindings.set(
        "watchStop",
        Function::new(ctx.clone(), move |id: u32| host.stop_watch(id))?,
    )?;
    Ok(())
}

async fn watch(
    engine: Weak<Engine>,
    id: u32,
    path: String,
    recursive: bool,
    stop: CancellationToken,
) {
    let Some(first) = engine.upgrade() else {
        return;
    };
    if let Err(reason) = first.host().authorize_watch(first.module(), &path).await {
        deliver(&first, id, &json!({ "error": reason })).await;
        return;
    }
    let mut before: Snapshot = first.host().watch_snapshot(&path, recursive).await;
    drop(first);
    loop {
        tokio::select! {
            () = tokio::time::sleep(WATCH_POLL_INTERVAL) => {}
            () = stop.cancelled() => return,
        }
        let Some(engine) = engine.upgrade() else {
            return;
        };
        let after = engine.host().watch_snapshot(&path, recursive).await;
        let changed = changes(&before, &after, &path);
        before = after;
        if !changed.is_empty() && !stop.is_cancelled() {
            deliver(&engine, id, &json!({ "changes": changed })).await;
        }
    }
}

/// Gives the watcher `id` what happened (`{changes}` or `{error}`).
async fn deliver(engine: &Engine, id: u32, what: &Value) {
    let limit = engine.host().limits().call_time_limit;
    if let Err(error) = engine
        .run_api(
            "callWatch",
            (id, what.to_string()),
            limit,
            "an fs.watch listener",
        )
        .await
    {
        tracing::warn!(module = %engine.module().display(), "{error}");
    }
}

//! Waiting for host work from a synchronous JavaScript call (`fs.readFileSync`,
//! `child_process.execSync`): the engine's thread blocks until the work is done, bounded by a
//! time limit so that a sync call can never hold it for longer than the call itself may run.
//!
//! On a multi-threaded runtime the work runs on the same runtime (`block_in_place`), so an
//! approval that needs the UI's task still gets it. On a current-thread runtime (`toolhost
//! call`, `serve`) the one thread is the engine's, so the work runs on a helper thread with a
//! runtime of its own; an approval that needs the blocked runtime then waits until the limit
//! and is refused — the asynchronous forms do not have that restriction.

use std::future::Future;
use std::time::Duration;

use tokio::runtime::{Builder, Handle, RuntimeFlavor};

/// Runs `work` to completion from synchronous code, or gives up after `limit`.
pub(crate) fn block_on<F>(work: F, limit: Duration) -> Result<F::Output, String>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let gave_up = || {
        format!(
            "a synchronous call waited longer than {} s (an approval nobody can give while the \
             tool blocks? use the asynchronous form)",
            limit.as_secs_f64()
        )
    };
    match Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(|| {
                handle.block_on(async move { tokio::time::timeout(limit, work).await })
            })
            .map_err(|_| gave_up())
        }
        _ => std::thread::scope(|scope| {
            scope
                .spawn(move || {
                    let runtime = Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .map_err(|error| format!("cannot wait for the host: {error}"))?;
                    runtime
                        .block_on(async move { tokio::time::timeout(limit, work).await })
                        .map_err(|_| gave_up())
                })
                .join()
                .unwrap_or_else(|_| Err("the host's work panicked".to_owned()))
        }),
    }
}

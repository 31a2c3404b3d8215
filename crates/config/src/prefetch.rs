//! Warming a lazily read part of the configuration (agent files, command files) on a thread
//! of its own, so that whoever asks for it next waits less, or not at all.

use std::sync::{Arc, LazyLock};

/// Starts forcing `lazy` on a thread named `thread`, unless it has been forced already. Only a
/// cache warms: a failure to start the thread leaves the reading to the first caller.
pub fn prefetch<T, F>(lazy: &Arc<LazyLock<T, F>>, thread: &str)
where
    T: Send + Sync + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    if LazyLock::get(lazy).is_some() {
        return;
    }
    let lazy = Arc::clone(lazy);
    let _ = std::thread::Builder::new()
        .name(thread.to_owned())
        .spawn(move || {
            LazyLock::force(&lazy);
        });
}

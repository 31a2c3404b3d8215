//! The limits every custom tool runs under (R41, R42): named constants, each overridable.

use std::time::Duration;

/// How long one call may run, JavaScript and awaited work together, before it is stopped.
/// Matches Bash's default timeout so that a tool wrapping a command has the same budget.
pub const DEFAULT_CALL_TIME_LIMIT: Duration = Duration::from_secs(120);
/// How long loading a module (evaluating it and running its factory) may take.
pub const DEFAULT_LOAD_TIME_LIMIT: Duration = Duration::from_secs(10);
/// The heap one tool module may use (its own engine), in bytes.
pub const DEFAULT_MEMORY_LIMIT: usize = 64 * 1024 * 1024;
/// After a call's signal is aborted, how long the tool gets to settle before it is abandoned.
pub const DEFAULT_ABORT_GRACE: Duration = Duration::from_secs(2);
/// How long a session listener or a render hook may run.
pub const DEFAULT_HOOK_TIME_LIMIT: Duration = Duration::from_secs(5);

/// The time and memory limits of custom tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScriptLimits {
    /// Longest time for one call ([`DEFAULT_CALL_TIME_LIMIT`]).
    pub call_time_limit: Duration,
    /// Longest time to load one module ([`DEFAULT_LOAD_TIME_LIMIT`]).
    pub load_time_limit: Duration,
    /// Heap bytes per module ([`DEFAULT_MEMORY_LIMIT`]).
    pub memory_limit: usize,
    /// Time a tool gets to settle after its signal aborts ([`DEFAULT_ABORT_GRACE`]).
    pub abort_grace: Duration,
    /// Longest time for `onSession` and render hooks ([`DEFAULT_HOOK_TIME_LIMIT`]).
    pub hook_time_limit: Duration,
}

impl Default for ScriptLimits {
    fn default() -> Self {
        Self {
            call_time_limit: DEFAULT_CALL_TIME_LIMIT,
            load_time_limit: DEFAULT_LOAD_TIME_LIMIT,
            memory_limit: DEFAULT_MEMORY_LIMIT,
            abort_grace: DEFAULT_ABORT_GRACE,
            hook_time_limit: DEFAULT_HOOK_TIME_LIMIT,
        }
    }
}

//! Stopping a child's whole process group: TERM, a grace period, then KILL.

use std::io;
use std::process::ExitStatus;
use std::time::Duration;

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::process::Child;
use tokio::time::{Instant, sleep};

/// How long a stopped process tree gets between SIGTERM and SIGKILL to clean up.
pub const KILL_GRACE_PERIOD: Duration = Duration::from_secs(2);

/// How often the group is checked for survivors while the grace period runs.
const SURVIVOR_POLL_INTERVAL: Duration = Duration::from_millis(20);

/// The process group a child leads (it was spawned with `process_group(0)`, as
/// [`ProcessSpec::to_command`](crate::ProcessSpec::to_command) does, so its id is the child's
/// pid). Signals go to the group, so grandchildren are reached too.
///
/// Callers that drive a prepared command themselves (a stdio MCP server) keep its group and
/// [`stop`](Self::stop) it once the leader is gone, so that nothing it started lingers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessGroup {
    id: Pid,
}

/// Kills a process group when dropped, unless disarmed first.
#[derive(Debug)]
pub(crate) struct KillGroupOnDrop {
    group: Option<ProcessGroup>,
}

impl KillGroupOnDrop {
    /// The run finished normally and stops the group itself.
    pub(crate) fn disarm(mut self) {
        self.group = None;
    }
}

impl Drop for KillGroupOnDrop {
    fn drop(&mut self) {
        if let Some(group) = self.group.take() {
            group.signal(Signal::SIGKILL);
        }
    }
}

impl ProcessGroup {
    /// A guard that SIGKILLs the whole group if the run is abandoned.
    pub(crate) fn kill_on_drop(self) -> KillGroupOnDrop {
        KillGroupOnDrop { group: Some(self) }
    }

    pub(crate) fn led_by(child: &Child) -> Option<Self> {
        Self::led_by_pid(child.id()?)
    }

    /// The group led by the process `pid`, which was spawned from
    /// [`ProcessSpec::to_command`](crate::ProcessSpec::to_command). `None` for pid 0 or one
    /// out of range, which no such child has.
    pub fn led_by_pid(pid: u32) -> Option<Self> {
        let pid = i32::try_from(pid).ok().filter(|pid| *pid > 0)?;
        Some(Self {
            id: Pid::from_raw(pid),
        })
    }

    /// Whether any process (a not yet reaped zombie included) is still in the group.
    pub fn has_members(self) -> bool {
        // Signal 0 checks existence without sending anything; EPERM still means "exists".
        !matches!(killpg(self.id, None), Err(Errno::ESRCH))
    }

    /// SIGKILL to every member at once, without waiting: for a caller that cannot wait (a
    /// `Drop`), where [`stop`](Self::stop) is the graceful way.
    pub fn kill(self) {
        self.signal(Signal::SIGKILL);
    }

    fn signal(self, signal: Signal) {
        // ESRCH (nobody left) is the outcome we want; nothing else can fail for our own group.
        let _ = killpg(self.id, signal);
    }

    /// Sends SIGTERM to the group, waits up to `grace` for every member to go, then sends
    /// SIGKILL. Returns the leader's exit status (reaping it).
    pub(crate) async fn terminate(
        self,
        leader: &mut Child,
        grace: Duration,
    ) -> io::Result<ExitStatus> {
        self.signal(Signal::SIGTERM);
        let deadline = Instant::now() + grace;
        let mut leader_status = None;
        loop {
            if leader_status.is_none() {
                leader_status = leader.try_wait()?;
            }
            // Until the leader is reaped it stays in the group as a zombie.
            if leader_status.is_some() && !self.has_members() {
                break;
            }
            if Instant::now() >= deadline {
                self.signal(Signal::SIGKILL);
                break;
            }
            sleep(SURVIVOR_POLL_INTERVAL).await;
        }
        match leader_status {
            Some(status) => Ok(status),
            None => leader.wait().await,
        }
    }

    /// Stops what is left of the group after its leader has exited and been reaped: SIGTERM
    /// to every member, up to `grace` for them to go, then SIGKILL. (A leader not yet reaped
    /// stays a member until then, so it costs the whole grace period.)
    pub async fn stop(self, grace: Duration) {
        if !self.has_members() {
            return;
        }
        self.signal(Signal::SIGTERM);
        let deadline = Instant::now() + grace;
        while self.has_members() {
            if Instant::now() >= deadline {
                self.signal(Signal::SIGKILL);
                return;
            }
            sleep(SURVIVOR_POLL_INTERVAL).await;
        }
    }
}

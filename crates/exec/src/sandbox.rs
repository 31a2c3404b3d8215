//! The OS sandbox: Landlock on Linux (and a seccomp filter when the network is denied), so a
//! sandboxed run can read and execute everywhere but write only where the policy allows.
//!
//! The restriction is built in the parent, then applied to a child in one of two ways: in the
//! child between `fork` and `exec` ([`install`], for callers that spawn the command
//! themselves), or to a short-lived thread of the parent that then spawns the child with
//! `posix_spawn` ([`spawn_restricted`]): the child inherits the thread's Landlock domain,
//! `no_new_privs` and seccomp filter, and the parent's address space is not copied (a fork of
//! a multi-threaded parent copies its page tables and then pays copy-on-write faults).

use std::path::PathBuf;
use std::sync::{Once, OnceLock};

/// Devices every sandboxed process may write: they hold no data worth protecting.
pub const WRITABLE_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
    "/dev/shm",
];

/// What a sandboxed process may do.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum SandboxPolicy {
    /// No OS sandbox: the command policy alone protects the machine.
    #[default]
    Off,
    /// Read and execute everywhere; write only the [`WRITABLE_DEVICES`].
    ReadOnly {
        /// Whether TCP connect and bind are allowed.
        network: NetworkAccess,
    },
    /// Read and execute everywhere; write only below `writable_roots` (the workspace, the
    /// temp folder, configured roots) and the [`WRITABLE_DEVICES`].
    WorkspaceWrite {
        /// Folders (and everything below them) the process may change. They must exist.
        writable_roots: Vec<PathBuf>,
        /// Whether TCP connect and bind are allowed.
        network: NetworkAccess,
    },
}

impl SandboxPolicy {
    /// The usual policy: writes to `workspace` and the temp folder only, network allowed.
    pub fn workspace_write(workspace: impl Into<PathBuf>) -> Self {
        Self::WorkspaceWrite {
            writable_roots: vec![workspace.into(), std::env::temp_dir()],
            network: NetworkAccess::Allowed,
        }
    }
}

/// Whether a sandboxed process may use the network. Landlock covers TCP `connect` and `bind`;
/// UDP (and so DNS) is not restricted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NetworkAccess {
    /// TCP connect and bind are allowed.
    #[default]
    Allowed,
    /// TCP connect and bind fail with "permission denied".
    Denied,
}

/// Whether the sandbox was applied to a run (or can be, for [`sandbox_support`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SandboxStatus {
    /// No sandbox was asked for.
    Off,
    /// Every restriction asked for is enforced by the kernel.
    Enforced,
    /// The kernel enforces only part of the restrictions (an older Landlock ABI).
    PartiallyEnforced,
    /// The kernel cannot sandbox; the process ran with the command policy alone.
    Unavailable {
        /// Why, for the user.
        reason: String,
    },
}

impl SandboxStatus {
    /// Whether the kernel enforces (at least part of) the sandbox.
    pub fn is_enforced(&self) -> bool {
        matches!(self, Self::Enforced | Self::PartiallyEnforced)
    }
}

/// Why a sandbox could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// A writable root does not exist.
    #[error(
        "the sandbox's writable folder {path} does not exist; create it or remove it from the writable roots"
    )]
    MissingWritableRoot {
        /// The folder.
        path: PathBuf,
    },
    /// The kernel refused the ruleset.
    #[error("could not build the Landlock ruleset: {0}")]
    Ruleset(String),
}

/// What this machine's kernel supports, probed once (in a short-lived thread, so the host
/// process itself stays unrestricted). `toolhost doctor` reports it.
pub fn sandbox_support() -> SandboxStatus {
    static SUPPORT: OnceLock<SandboxStatus> = OnceLock::new();
    SUPPORT.get_or_init(landlock_rules::probe).clone()
}

/// A sandbox built in the parent (ruleset opened, rules added, seccomp program compiled),
/// ready to apply to a child.
pub(crate) struct Restriction(landlock_rules::Prepared);

/// Builds the sandbox of `policy`: `None` when no sandbox is asked for or the kernel cannot
/// enforce one (the status says which).
pub(crate) fn prepare(
    policy: &SandboxPolicy,
) -> Result<(SandboxStatus, Option<Restriction>), SandboxError> {
    if *policy == SandboxPolicy::Off {
        return Ok((SandboxStatus::Off, None));
    }
    let support = sandbox_support();
    if !support.is_enforced() {
        static WARNED: Once = Once::new();
        WARNED.call_once(|| {
            tracing::warn!(
                ?support,
                "no OS sandbox on this machine; commands run with the command policy alone"
            );
        });
        return Ok((support, None));
    }
    let prepared = landlock_rules::prepare(policy)?;
    Ok((support, Some(Restriction(prepared))))
}

/// Prepares the sandbox for a command and installs it to run in the child before `exec`.
pub(crate) fn install(
    policy: &SandboxPolicy,
    command: &mut std::process::Command,
) -> Result<SandboxStatus, SandboxError> {
    let (status, restriction) = prepare(policy)?;
    if let Some(Restriction(prepared)) = restriction {
        landlock_rules::install(prepared, command);
    }
    Ok(status)
}

/// Spawns `command` from a new thread that `restriction` is applied to first, so the child
/// starts inside the sandbox while the calling thread stays unrestricted. The thread lives for
/// the spawn only; it enters the current Tokio runtime, if any, so the child is registered
/// with it.
pub(crate) fn spawn_restricted(
    command: &mut tokio::process::Command,
    restriction: Restriction,
) -> std::io::Result<tokio::process::Child> {
    let runtime = tokio::runtime::Handle::try_current().ok();
    std::thread::scope(|scope| {
        let spawner = std::thread::Builder::new()
            .name("toolhost-sandboxed-spawn".into())
            .spawn_scoped(scope, move || {
                let _entered = runtime.as_ref().map(tokio::runtime::Handle::enter);
                let Restriction(prepared) = restriction;
                landlock_rules::apply(prepared)?;
                command.spawn()
            })?;
        spawner
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("the sandboxed spawn thread panicked")))
    })
}

#[cfg(target_os = "linux")]
mod network_filter {
    //! A seccomp program that makes `socket()` fail with `EPERM` for internet families, so a
    //! command without network access cannot use UDP or raw sockets either (Landlock's network
    //! rules cover TCP only). Local sockets (`AF_UNIX`) keep working.

    use std::collections::BTreeMap;

    use nix::libc;
    use seccompiler::{
        BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
        SeccompRule, TargetArch,
    };

    use super::SandboxError;

    /// The address families refused: IPv4, IPv6 and raw packets.
    const DENIED_FAMILIES: [libc::c_int; 3] = [libc::AF_INET, libc::AF_INET6, libc::AF_PACKET];

    pub(super) fn internet_sockets_denied() -> Result<BpfProgram, SandboxError> {
        let error = |error: seccompiler::BackendError| SandboxError::Ruleset(error.to_string());
        let rules = DENIED_FAMILIES
            .iter()
            .map(|family| {
                let domain = SeccompCondition::new(
                    0,
                    SeccompCmpArgLen::Dword,
                    SeccompCmpOp::Eq,
                    u64::from(family.unsigned_abs()),
                )?;
                SeccompRule::new(vec![domain])
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(error)?;
        let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(error)?;
        let filter = SeccompFilter::new(
            BTreeMap::from([(libc::SYS_socket, rules)]),
            SeccompAction::Allow,
            SeccompAction::Errno(libc::EPERM.unsigned_abs()),
            arch,
        )
        .map_err(error)?;
        BpfProgram::try_from(filter).map_err(|error| SandboxError::Ruleset(error.to_string()))
    }
}

#[cfg(target_os = "linux")]
mod landlock_rules {
    use std::os::unix::process::CommandExt;

    use landlock::{
        ABI, Access, AccessFs, AccessNet, RulesetAttr, RulesetCreated, RulesetCreatedAttr,
        RulesetStatus, path_beneath_rules,
    };

    use super::{NetworkAccess, SandboxError, SandboxPolicy, SandboxStatus, WRITABLE_DEVICES};

    /// The newest Landlock ABI whose rights we ask for (V5 adds device ioctls); older kernels
    /// get what they support (best effort), reported as partially enforced.
    const TARGET_ABI: ABI = ABI::V5;

    fn ruleset(policy: &SandboxPolicy) -> Result<RulesetCreated, SandboxError> {
        let (writable_roots, network) = match policy {
            SandboxPolicy::Off => (&[][..], NetworkAccess::Allowed),
            SandboxPolicy::ReadOnly { network } => (&[][..], *network),
            SandboxPolicy::WorkspaceWrite {
                writable_roots,
                network,
            } => (writable_roots.as_slice(), *network),
        };
        if let Some(missing) = writable_roots.iter().find(|root| !root.exists()) {
            return Err(SandboxError::MissingWritableRoot {
                path: missing.clone(),
            });
        }
        let error = |error: landlock::RulesetError| SandboxError::Ruleset(error.to_string());
        let mut ruleset = landlock::Ruleset::default()
            .handle_access(AccessFs::from_all(TARGET_ABI))
            .map_err(error)?;
        if network == NetworkAccess::Denied {
            // Handled without any rule: every TCP connect and bind is denied.
            ruleset = ruleset
                .handle_access(AccessNet::from_all(TARGET_ABI))
                .map_err(error)?;
        }
        ruleset
            .create()
            .map_err(error)?
            .add_rules(path_beneath_rules(["/"], AccessFs::from_read(TARGET_ABI)))
            .map_err(error)?
            .add_rules(path_beneath_rules(
                WRITABLE_DEVICES,
                AccessFs::from_all(TARGET_ABI),
            ))
            .map_err(error)?
            .add_rules(path_beneath_rules(
                writable_roots,
                AccessFs::from_all(TARGET_ABI),
            ))
            .map_err(error)
    }

    /// The Landlock ruleset and, when the network is denied, the seccomp program.
    pub(crate) struct Prepared {
        ruleset: RulesetCreated,
        network_filter: Option<seccompiler::BpfProgram>,
    }

    pub(super) fn prepare(policy: &SandboxPolicy) -> Result<Prepared, SandboxError> {
        let ruleset = ruleset(policy)?;
        let network = match policy {
            SandboxPolicy::Off => NetworkAccess::Allowed,
            SandboxPolicy::ReadOnly { network } | SandboxPolicy::WorkspaceWrite { network, .. } => {
                *network
            }
        };
        // Landlock covers TCP only; seccomp closes the rest (UDP, raw sockets).
        let network_filter = match network {
            NetworkAccess::Denied => Some(super::network_filter::internet_sockets_denied()?),
            NetworkAccess::Allowed => None,
        };
        Ok(Prepared {
            ruleset,
            network_filter,
        })
    }

    /// Restricts the calling thread (and every process it starts from now on) for good.
    pub(super) fn apply(prepared: Prepared) -> std::io::Result<()> {
        let denied = || std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        match prepared.ruleset.restrict_self() {
            Ok(status) if status.ruleset != RulesetStatus::NotEnforced => {}
            _ => return Err(denied()),
        }
        if let Some(filter) = &prepared.network_filter {
            seccompiler::apply_filter(filter).map_err(|_| denied())?;
        }
        Ok(())
    }

    pub(super) fn install(prepared: Prepared, command: &mut std::process::Command) {
        let mut prepared = Some(prepared);
        let restrict = move || -> std::io::Result<()> {
            let prepared = prepared
                .take()
                .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::PermissionDenied))?;
            apply(prepared)
        };
        // SAFETY: the closure runs in the child between fork and exec, where only
        // async-signal-safe work is sound. It does no allocation on the success path: the
        // ruleset (paths opened, rules added) and the seccomp program were built in the parent
        // (`prepare`); `restrict_self` only makes the `prctl(PR_SET_NO_NEW_PRIVS)` and
        // `landlock_restrict_self` system calls on the ruleset's file descriptor, and
        // `apply_filter` the `prctl` and `seccomp` calls on the prebuilt program. The error
        // path builds an `io::Error` from a kind, which does not allocate either.
        #[allow(unsafe_code)]
        unsafe {
            command.pre_exec(restrict);
        }
    }

    pub(super) fn probe() -> SandboxStatus {
        let probe = std::thread::spawn(|| {
            // An empty read-only ruleset on this thread only; the thread then exits.
            ruleset(&SandboxPolicy::ReadOnly {
                network: NetworkAccess::Denied,
            })
            .map_err(|error| error.to_string())?
            .restrict_self()
            .map_err(|error| error.to_string())
        });
        match probe.join() {
            Ok(Ok(status)) => match status.ruleset {
                RulesetStatus::FullyEnforced => SandboxStatus::Enforced,
                RulesetStatus::PartiallyEnforced => SandboxStatus::PartiallyEnforced,
                RulesetStatus::NotEnforced => SandboxStatus::Unavailable {
                    reason: format!(
                        "the kernel does not enforce Landlock ({:?})",
                        status.landlock
                    ),
                },
            },
            Ok(Err(reason)) => SandboxStatus::Unavailable { reason },
            Err(_) => SandboxStatus::Unavailable {
                reason: "the Landlock probe thread panicked".into(),
            },
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod landlock_rules {
    use super::{SandboxError, SandboxPolicy, SandboxStatus};

    /// Never made: without Landlock the support probe says unavailable first.
    pub(crate) enum Prepared {}

    pub(super) fn prepare(_: &SandboxPolicy) -> Result<Prepared, SandboxError> {
        Err(SandboxError::Ruleset("Landlock is Linux only".into()))
    }

    pub(super) fn apply(prepared: Prepared) -> std::io::Result<()> {
        match prepared {}
    }

    pub(super) fn install(prepared: Prepared, _: &mut std::process::Command) {
        match prepared {}
    }

    pub(super) fn probe() -> SandboxStatus {
        SandboxStatus::Unavailable {
            reason: "the OS sandbox uses Landlock, which only Linux has".into(),
        }
    }
}

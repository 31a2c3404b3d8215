//! `toolhost doctor`: what this machine and workspace support, in one screen.

use std::path::Path;
use std::process::ExitCode;

use toolhost_config::Config;
use toolhost_core::ToolRegistry;
use toolhost_exec::{ProcessSpec, SandboxStatus, sandbox_support};
use toolhost_mcp::McpClients;
use toolhost_mcp::client::oauth::store::where_user_tokens_are_kept;

use super::doctor_check::{Check, Status};

/// Runs every check and prints one line each; exit status 1 when a check failed.
pub async fn run(
    workspace: &Path,
    home: Option<&Path>,
    config: &Config,
    registry: &ToolRegistry,
    mcp: &McpClients,
) -> anyhow::Result<ExitCode> {
    let mut checks = vec![
        Check {
            status: Status::Ok,
            name: "toolhost",
            detail: format!("version {}", env!("CARGO_PKG_VERSION")),
        },
        workspace_check(workspace),
        sandbox_check(),
        shell_check().await,
        temp_folder_check(),
        Check {
            status: if registry.is_empty() {
                Status::Fail
            } else {
                Status::Ok
            },
            name: "tools",
            detail: format!(
                "{} registered: {}",
                registry.len(),
                registry.names().join(", ")
            ),
        },
    ];
    // Reading the agent files here logs each one that does not load.
    let agents = config.agents.keys().count();
    checks.push(Check {
        status: Status::Ok,
        name: "agents",
        detail: format!("{agents} defined (toolhost agents list shows them)"),
    });
    checks.extend(mcp_checks(mcp, config).await);
    checks.extend(oauth_store_check(config).await);
    checks.push(super::doctor_remote::provider_check(config).await);
    checks.push(super::doctor_remote::sessions_check(config, home));
    for check in &checks {
        let label = match check.status {
            Status::Ok => "ok  ",
            Status::Warn => "warn",
            Status::Fail => "FAIL",
        };
        println!("{label}  {:<10} {}", check.name, check.detail);
    }
    Ok(if checks.iter().any(|check| check.status == Status::Fail) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// One line per configured MCP server: started (with how many tools), failed (a warning:
/// the other tools work; a `required` one fails), or disabled; a remote server's line ends
/// with its OAuth state and the store holding its tokens (as `mcp list` shows it).
async fn mcp_checks(mcp: &McpClients, config: &Config) -> Vec<Check> {
    let report = mcp.start_report();
    let mut states = std::collections::BTreeMap::new();
    let servers = report
        .started
        .iter()
        .map(|(server, _)| server)
        .chain(report.failures.iter().map(|failure| &failure.server));
    for server in servers {
        if let Some(configured) = config.mcp_servers.get(server)
            && let Some(state) = super::mcp_login::auth_state(configured).await
        {
            states.insert(server.clone(), format!(" [{state}]"));
        }
    }
    let auth = |server: &str| states.get(server).cloned().unwrap_or_default();
    let started = report.started.iter().map(|(server, tools)| Check {
        status: Status::Ok,
        name: "mcp",
        detail: format!("{server}: started, tools: {tools}{}", auth(server)),
    });
    let failed = report.failures.iter().map(|failure| Check {
        status: if failure.required {
            Status::Fail
        } else {
            Status::Warn
        },
        name: "mcp",
        // One line per check: the server's stderr lines joined.
        detail: format!(
            "{}: did not start ({}){}{}: {}",
            failure.server,
            failure.origin,
            if needs_auth(&failure.message) {
                format!(
                    ", auth needed: run `toolhost mcp login {}` (OAuth), or set its \
                     bearer_token_env or headers",
                    failure.server
                )
            } else {
                String::new()
            },
            auth(&failure.server),
            failure.message.lines().collect::<Vec<_>>().join(" | ")
        ),
    });
    let disabled = report.disabled.iter().map(|server| Check {
        status: Status::Ok,
        name: "mcp",
        detail: format!("{server}: disabled (enabled = false)"),
    });
    started.chain(failed).chain(disabled).collect()
}

/// Where OAuth logins keep their tokens (`mcp_oauth_store`), when a remote server is
/// configured: the keyring, or the file and why; a failure when `keyring` was chosen and
/// none answers.
async fn oauth_store_check(config: &Config) -> Option<Check> {
    let remote = config
        .mcp_servers
        .values()
        .any(|server| matches!(server.transport, toolhost_mcp::McpTransport::Http { .. }));
    if !remote {
        return None;
    }
    let choice = config.mcp_oauth_store.as_str();
    let store = tokio::task::spawn_blocking(where_user_tokens_are_kept)
        .await
        .unwrap_or_else(|error| Err(error.to_string()));
    Some(match store {
        Ok(kept) => Check {
            status: Status::Ok,
            name: "oauth",
            detail: format!("tokens kept {kept} (mcp_oauth_store = \"{choice}\")"),
        },
        Err(error) => Check {
            status: Status::Fail,
            name: "oauth",
            detail: error,
        },
    })
}

/// Whether a server refused toolhost for want of credentials (HTTP 401 or 403).
fn needs_auth(message: &str) -> bool {
    ["401", "403", "Unauthorized", "Forbidden"]
        .iter()
        .any(|sign| message.contains(sign))
}

fn workspace_check(workspace: &Path) -> Check {
    let (status, detail) = match workspace.canonicalize() {
        Ok(root) => match std::fs::metadata(&root) {
            Ok(meta) if meta.permissions().readonly() => {
                (Status::Warn, format!("{} (read-only)", root.display()))
            }
            Ok(_) => (Status::Ok, root.display().to_string()),
            Err(error) => (Status::Fail, format!("{}: {error}", root.display())),
        },
        Err(error) => (Status::Fail, format!("{}: {error}", workspace.display())),
    };
    Check {
        status,
        name: "workspace",
        detail,
    }
}

fn sandbox_check() -> Check {
    let (status, detail) = match sandbox_support() {
        SandboxStatus::Enforced => (
            Status::Ok,
            "Landlock enforced: Bash writes only to the workspace and the temp folder".to_owned(),
        ),
        SandboxStatus::PartiallyEnforced => (
            Status::Warn,
            "Landlock partly supported by this kernel: some restrictions are not enforced"
                .to_owned(),
        ),
        SandboxStatus::Unavailable { reason } => (
            Status::Warn,
            format!("no OS sandbox ({reason}): Bash relies on the command policy alone"),
        ),
        SandboxStatus::Off => (Status::Warn, "off".to_owned()),
    };
    Check {
        status,
        name: "sandbox",
        detail,
    }
}

async fn shell_check() -> Check {
    let outcome = ProcessSpec::new("bash")
        .args(["-c", "echo \"$BASH_VERSION\""])
        .timeout(std::time::Duration::from_secs(10))
        .run()
        .await;
    let (status, detail) = match outcome {
        Ok(outcome) if outcome.success() => {
            (Status::Ok, format!("bash {}", outcome.stdout.text.trim()))
        }
        Ok(outcome) => (
            Status::Fail,
            format!(
                "bash exited with {:?}: {}",
                outcome.exit_code,
                outcome.stderr.text.trim()
            ),
        ),
        Err(error) => (Status::Fail, format!("bash cannot run: {error}")),
    };
    Check {
        status,
        name: "shell",
        detail,
    }
}

fn temp_folder_check() -> Check {
    let temp = std::env::temp_dir();
    let (status, detail) = match tempfile_probe(&temp) {
        Ok(()) => (
            Status::Ok,
            format!(
                "{} is writable (full command outputs go here)",
                temp.display()
            ),
        ),
        Err(error) => (Status::Fail, format!("{}: {error}", temp.display())),
    };
    Check {
        status,
        name: "temp",
        detail,
    }
}

fn tempfile_probe(folder: &Path) -> std::io::Result<()> {
    let probe = folder.join(format!("toolhost-doctor-{}", std::process::id()));
    std::fs::write(&probe, b"probe")?;
    std::fs::remove_file(&probe)
}

//! `toolhost serve`: the registry as an MCP server, over stdio (the default) or Streamable
//! HTTP (`--http`).

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use tokio_util::sync::CancellationToken;
use toolhost_agent::Permissions;
use toolhost_agent::offered_registry::OfferedRegistry;
use toolhost_agent::tool_set::{ToolSet, ToolSetBuilder};
use toolhost_config::{AgentConfig, Config};
use toolhost_core::deferral::{DEFAULT_DEFER_THRESHOLD_TOKENS, DeferralPolicy};
use toolhost_core::permission::{Approver, NonInteractiveApprover, PermissionMode};
use toolhost_core::{Tool as _, ToolRegistry, ToolSpec};
use toolhost_mcp::{
    ClientPrompts, HttpOptions, HttpServer, MAX_REQUEST_BODY_BYTES, McpApprover, McpServer,
    McpStartup, cancel_on_stdin_hang_up,
};
use toolhost_mcp_catalog::WorkspaceCatalog;
use toolhost_script::{CustomTools, LoadedTool};

// Arguments of `toolhost serve` (a plain comment: see `Command` in main.rs).
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Serve Streamable HTTP on this address instead of stdio: a port (loopback) or
    /// `ADDRESS:PORT`. Port 0 picks a free port; the URL is printed on stderr.
    #[arg(long, value_name = "[ADDRESS:]PORT", value_parser = parse_listen_address)]
    http: Option<SocketAddr>,
    /// Require `Authorization: Bearer <token>` on every HTTP request, the token being the
    /// value of this environment variable. Needed to serve on a non-loopback address.
    #[arg(long, value_name = "VAR", requires = "http")]
    token_env: Option<String>,
    /// Accept this `Host` header besides the loopback names (DNS rebinding protection);
    /// repeatable.
    #[arg(long, value_name = "HOST", requires = "http")]
    allowed_host: Vec<String>,
    /// Accept requests from this browser origin (such as `http://localhost:6274`) besides the
    /// server's own; repeatable.
    #[arg(long, value_name = "ORIGIN", requires = "http")]
    allowed_origin: Vec<String>,
    /// The largest HTTP request body accepted, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = MAX_REQUEST_BODY_BYTES, requires = "http")]
    max_request_bytes: usize,
    /// Allow calls that need confirmation when the client cannot ask its user (no MCP
    /// elicitation support). Without it they are refused with a message that says how to
    /// allow them (`--yes`, `--allow RULE`, or a rule in the configuration).
    #[arg(long)]
    yes: bool,
    /// Defer tools as `toolhost run` does once their definitions pass `[tools]
    /// defer_threshold` (default 12800 tokens): `tools/list` leaves out all but the built-ins
    /// and the always-loaded tools, and a client loads the others with `tool_search`.
    #[arg(long)]
    defer_tools: bool,
}

/// Threads for blocking file work. Each one grows the process by a malloc arena, and one
/// client rarely has more calls in flight: a small pool keeps the server's memory small.
pub const SERVE_BLOCKING_THREADS: usize = 4;

/// Serves until the client disconnects (stdio) or the process is interrupted (HTTP), on a
/// single-threaded runtime: an MCP server's work is small calls, for which one thread spends
/// less CPU on wake-ups than a pool of workers, and starts faster.
pub fn run(
    workspace: &Path,
    config: &Config,
    agent: &AgentConfig,
    args: ServeArgs,
) -> anyhow::Result<ExitCode> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .max_blocking_threads(SERVE_BLOCKING_THREADS)
        .build()?
        .block_on(serve(workspace, config, agent, args))
}

async fn serve(
    workspace: &Path,
    config: &Config,
    agent: &AgentConfig,
    args: ServeArgs,
) -> anyhow::Result<ExitCode> {
    // Listened for from the first moment: a signal while servers start must not kill this
    // process before it stops them (they run in process groups of their own).
    let stop = stop_on_signal()?;
    // And a stdio client that goes away while serve waits for a server, before it reads stdin.
    let client_gone = CancellationToken::new();
    if args.http.is_none() {
        cancel_on_stdin_hang_up(client_gone.clone());
    }
    let prompts = ClientPrompts::new();
    let fallback: Arc<dyn Approver> = Arc::new(if args.yes {
        NonInteractiveApprover::approving()
    } else {
        NonInteractiveApprover::refusing()
    });
    let approver = McpApprover::new(prompts.clone(), fallback);
    let permissions = Permissions::from_config(config, workspace, Arc::new(approver))?;
    let offered = OfferedRegistry::default();
    // The gateway answers at once: the configured servers' tools join when each is ready
    // (with `--defer-tools`, the deferral is planned again as they join).
    let building = ToolSetBuilder::new(workspace, config, agent, &permissions)
        .offered(offered.clone())
        .mcp_startup(McpStartup::Background)
        .build();
    // Interrupted while a `required` server starts: the start is dropped, which kills the
    // server's process group.
    let ToolSet {
        registry,
        custom,
        mcp,
        skills,
        commands,
        ..
    } = tokio::select! {
        built = building => built?,
        () = stop.cancelled() => return Ok(ExitCode::SUCCESS),
        () = client_gone.cancelled() => return Ok(ExitCode::SUCCESS),
    };
    // Clients see the registry of the agent in its mode (plan: read-only tools).
    let plan = permissions.mode() == PermissionMode::Plan;
    let registry = Arc::new(registry.for_mode(permissions.mode()));
    offered.set(&registry);
    // What a server's tools/list_changed or a reloaded custom tool may add to the served list.
    let served_agent = agent.clone();
    let served: ServedTools =
        Arc::new(move |spec| (!plan || spec.annotations.read_only) && served_agent.offers(spec));
    // The gateway: the configured MCP servers' tools are served next to the built-ins, behind
    // the same policy and audit trail, and follow their servers' tools/list_changed.
    let keep = Arc::clone(&served);
    mcp.keep_in_sync(Arc::clone(&registry), move |spec| keep(spec));
    tokio::spawn(reload_custom_tools(custom, Arc::clone(&registry), served));
    // Prompts (slash commands, skills), resources (files, skill files, sessions) and
    // completions, read and expanded through the served registry's permissions.
    let catalog = Arc::new(WorkspaceCatalog::new(
        workspace,
        std::env::var_os("HOME").map(PathBuf::from),
        config,
        Arc::clone(&registry),
        Arc::clone(permissions.policy()),
        (commands, skills),
    ));
    catalog.watch();
    // The configured servers start once the first client has its `initialize` answer.
    let release = Arc::clone(&mcp);
    let mut server = McpServer::new(registry)
        .with_prompts(prompts)
        .with_catalog(catalog)
        .with_on_initialized(Arc::new(move || release.release_background_starts()));
    if args.defer_tools {
        let threshold = config
            .tools
            .defer_threshold
            .unwrap_or(DEFAULT_DEFER_THRESHOLD_TOKENS);
        let policy =
            DeferralPolicy::new(threshold).with_always_loaded(config.tools.always_loaded.clone());
        server = server.with_deferred_tools(&policy)?;
    }
    let served = serve_transport(server, args, stop).await;
    // Stdio servers are stopped gracefully with their process groups, and the starts under
    // way and the retries of those that failed end, however serving ended.
    mcp.shutdown().await;
    served?;
    Ok(ExitCode::SUCCESS)
}

/// Serves on stdio until the client disconnects, or on HTTP until interrupted.
async fn serve_transport(
    server: McpServer,
    args: ServeArgs,
    stop: CancellationToken,
) -> anyhow::Result<()> {
    let Some(bind) = args.http else {
        tokio::select! {
            served = server.serve_stdio() => served?,
            () = stop.cancelled() => {}
        }
        return Ok(());
    };
    let bearer_token = match &args.token_env {
        Some(variable) => Some(std::env::var(variable).map_err(|_| {
            crate::exit::usage(format!(
                "--token-env {variable}: the environment variable {variable} is not set"
            ))
        })?),
        None => None,
    };
    let options = HttpOptions {
        allowed_hosts: args.allowed_host,
        allowed_origins: args.allowed_origin,
        bearer_token,
        max_request_bytes: args.max_request_bytes,
        ..HttpOptions::new(bind)
    };
    let http = HttpServer::bind(server, options).await?;
    eprintln!("toolhost: serving MCP on {}", http.url());
    http.run(stop).await?;
    Ok(())
}

/// Whether a tool may be served: the agent is offered it and, in plan mode, it is read-only.
type ServedTools = Arc<dyn Fn(&ToolSpec) -> bool + Send + Sync>;

/// Reloads custom tools whenever their files change and updates the served registry, which
/// announces `notifications/tools/list_changed` to clients (R41). Only tools that `served`
/// keeps are served. The watcher is made anew after each change, so that tool folders created
/// meanwhile are watched too.
async fn reload_custom_tools(
    mut custom: CustomTools,
    registry: Arc<ToolRegistry>,
    served: ServedTools,
) {
    loop {
        let mut watcher = match custom.watch() {
            Ok(watcher) => watcher,
            Err(error) => {
                tracing::warn!("custom tools will not reload when their files change: {error}");
                return;
            }
        };
        watcher.changed().await;
        let mut report = custom.reload().await;
        let hidden = |loaded: &LoadedTool| !served(&loaded.tool.spec());
        for loaded in report.changed.iter().filter(|loaded| hidden(loaded)) {
            report.removed.push(loaded.tool.name().to_owned());
        }
        report.changed.retain(|loaded| !hidden(loaded));
        report.added.retain(|loaded| !hidden(loaded));
        for error in &report.errors {
            tracing::warn!("{error}");
        }
        for refused in report.apply(&registry) {
            tracing::warn!("a reloaded custom tool is refused: {refused}");
        }
        if !report.is_empty() {
            tracing::info!(
                added = report.added.len(),
                changed = report.changed.len(),
                removed = report.removed.len(),
                "custom tools reloaded"
            );
        }
    }
}

/// A port alone means loopback; anything else must be a socket address (`[::1]:8765`), or
/// `localhost:PORT`.
fn parse_listen_address(text: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::from((Ipv4Addr::LOCALHOST, port)));
    }
    if let Some(port) = text.strip_prefix("localhost:")
        && let Ok(port) = port.parse::<u16>()
    {
        return Ok(SocketAddr::from((Ipv4Addr::LOCALHOST, port)));
    }
    text.parse()
        .map_err(|_| format!("'{text}' is not a port or ADDRESS:PORT (try 8765 or 127.0.0.1:8765)"))
}

/// A token cancelled on SIGINT (Ctrl-C) or SIGTERM, both listened for from now on (the
/// handlers are installed before this returns).
fn stop_on_signal() -> std::io::Result<CancellationToken> {
    let stop = CancellationToken::new();
    let cancel = stop.clone();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut terminate = signal(SignalKind::terminate())?;
        let mut interrupt = signal(SignalKind::interrupt())?;
        tokio::spawn(async move {
            tokio::select! {
                _ = interrupt.recv() => {}
                _ = terminate.recv() => {}
            }
            cancel.cancel();
        });
    }
    #[cfg(not(unix))]
    tokio::spawn(async move {
        let _ = tokio::signal::ctrl_c().await;
        cancel.cancel();
    });
    Ok(stop)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn a_port_alone_listens_on_loopback() {
        assert_eq!(
            parse_listen_address("8765").unwrap(),
            "127.0.0.1:8765".parse().unwrap()
        );
        assert_eq!(
            parse_listen_address("localhost:0").unwrap(),
            "127.0.0.1:0".parse().unwrap()
        );
        assert_eq!(
            parse_listen_address("[::1]:9000").unwrap(),
            "[::1]:9000".parse().unwrap()
        );
        assert!(parse_listen_address("example.com:80").is_err());
    }
}

//! Streamable HTTP: the server behind one endpoint (`/mcp`), with SSE streaming responses,
//! `Mcp-Session-Id` sessions, and the safety a local server needs.
//!
//! - **Loopback by default.** A non-loopback address is refused unless a bearer token guards
//!   it: anyone who can reach the port could otherwise run tools.
//! - **DNS rebinding.** The `Host` header must name a loopback host (or one the user allowed),
//!   and a browser `Origin`, when present, must be this server's own origin (or one the user
//!   allowed); anything else gets `403 Forbidden`.
//! - **Bearer token.** With a token, every request must carry `Authorization: Bearer <token>`
//!   (`401` otherwise), compared in constant time.
//! - **Size limits.** Request bodies over [`MAX_REQUEST_BODY_BYTES`] get `413`.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::error::ServeError;
use crate::server::McpServer;

/// The largest request body accepted, in bytes (a `tools/call` carrying a file to write).
pub const MAX_REQUEST_BODY_BYTES: usize = 4 * 1024 * 1024;

/// The path of the MCP endpoint.
pub const DEFAULT_ENDPOINT_PATH: &str = "/mcp";

/// How to serve over HTTP.
#[derive(Clone, Debug)]
pub struct HttpOptions {
    /// Where to listen; port 0 picks a free port.
    pub bind: SocketAddr,
    /// The endpoint path (default [`DEFAULT_ENDPOINT_PATH`]).
    pub path: String,
    /// `Host` values accepted besides the loopback names (`localhost`, `127.0.0.1`, `::1`)
    /// and the address bound to: hostnames or `host:port`.
    pub allowed_hosts: Vec<String>,
    /// Browser origins accepted besides the server's own (`http://localhost:PORT`, ...),
    /// with scheme, such as `http://localhost:6274`.
    pub allowed_origins: Vec<String>,
    /// The bearer token every request must carry, when set.
    pub bearer_token: Option<String>,
    /// The largest request body accepted (default [`MAX_REQUEST_BODY_BYTES`]).
    pub max_request_bytes: usize,
}

impl HttpOptions {
    /// Loopback defaults for `bind`: the `/mcp` path, no extra hosts or origins, no token,
    /// the default size limit.
    pub fn new(bind: SocketAddr) -> Self {
        Self {
            bind,
            path: DEFAULT_ENDPOINT_PATH.to_owned(),
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            bearer_token: None,
            max_request_bytes: MAX_REQUEST_BODY_BYTES,
        }
    }
}

/// A server bound to its address, ready to [`run`](Self::run).
#[derive(Debug)]
pub struct HttpServer {
    listener: TcpListener,
    local_addr: SocketAddr,
    path: String,
    router: axum::Router,
    shutdown: CancellationToken,
}

impl HttpServer {
    /// Checks the options and binds the listener.
    pub async fn bind(server: McpServer, options: HttpOptions) -> Result<Self, ServeError> {
        if !options.bind.ip().is_loopback() && options.bearer_token.is_none() {
            return Err(ServeError::UnguardedRemote(options.bind));
        }
        if options.bearer_token.as_deref() == Some("") {
            return Err(ServeError::EmptyToken);
        }
        let listener =
            TcpListener::bind(options.bind)
                .await
                .map_err(|source| ServeError::Bind {
                    address: options.bind,
                    source,
                })?;
        let local_addr = listener.local_addr().map_err(|source| ServeError::Bind {
            address: options.bind,
            source,
        })?;
        let shutdown = CancellationToken::new();
        let config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(allowed_hosts(local_addr, &options.allowed_hosts))
            .with_allowed_origins(allowed_origins(local_addr, &options.allowed_origins))
            .enforce_origin_validation()
            .with_max_request_body_bytes(options.max_request_bytes)
            .with_cancellation_token(shutdown.child_token());
        let service = StreamableHttpService::new(
            move || Ok(server.session()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        let mut router = axum::Router::new().route_service(&options.path, service);
        if let Some(token) = options.bearer_token {
            router = router.layer(middleware::from_fn_with_state(
                Arc::new(BearerToken(token)),
                require_bearer_token,
            ));
        }
        Ok(Self {
            listener,
            local_addr,
            path: options.path,
            router,
            shutdown,
        })
    }

    /// The address actually bound (with the port picked when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The endpoint's URL, e.g. `http://127.0.0.1:8765/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}{}", self.local_addr, self.path)
    }

    /// Serves until `shutdown` is cancelled; sessions and in-flight calls are cancelled then.
    pub async fn run(self, shutdown: CancellationToken) -> Result<(), ServeError> {
        let sessions = self.shutdown.clone();
        let result = axum::serve(self.listener, self.router)
            .with_graceful_shutdown(async move {
                shutdown.cancelled().await;
                sessions.cancel();
            })
            .await;
        self.shutdown.cancel();
        result.map_err(|error| ServeError::Transport(error.to_string()))
    }
}

fn allowed_hosts(bound: SocketAddr, extra: &[String]) -> Vec<String> {
    let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"]
        .into_iter()
        .map(str::to_owned)
        .collect();
    if !bound.ip().is_unspecified() && !bound.ip().is_loopback() {
        hosts.push(bound.ip().to_string());
    }
    hosts.extend(extra.iter().cloned());
    hosts
}

fn allowed_origins(bound: SocketAddr, extra: &[String]) -> Vec<String> {
    let port = bound.port();
    let mut origins: Vec<String> = ["localhost", "127.0.0.1", "[::1]"]
        .into_iter()
        .map(|host| format!("http://{host}:{port}"))
        .collect();
    if !bound.ip().is_unspecified() && !bound.ip().is_loopback() {
        origins.push(format!("http://{}:{port}", host_literal(bound.ip())));
    }
    origins.extend(extra.iter().cloned());
    origins
}

fn host_literal(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(ip) => ip.to_string(),
        IpAddr::V6(ip) => format!("[{ip}]"),
    }
}

struct BearerToken(String);

async fn require_bearer_token(
    State(token): State<Arc<BearerToken>>,
    request: Request,
    next: Next,
) -> Response {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "));
    match presented {
        Some(presented) if constant_time_eq(presented.as_bytes(), token.0.as_bytes()) => {
            next.run(request).await
        }
        _ => {
            let mut response = (
                StatusCode::UNAUTHORIZED,
                "Unauthorized: this toolhost server needs `Authorization: Bearer <token>` \
                 (the token is in the environment variable named by --token-env).\n",
            )
                .into_response();
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"toolhost\""),
            );
            response
        }
    }
}

/// Compares without returning early, so response timing does not reveal how much matched.
fn constant_time_eq(left: &[u8], right: &[u8]) -> bool {
    if left.len() != right.len() {
        return false;
    }
    left.iter()
        .zip(right)
        .fold(0u8, |difference, (a, b)| difference | (a ^ b))
        == 0
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn tokens_compare_whole() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"secret2"));
    }

    #[test]
    fn the_bound_address_and_its_port_are_allowed() {
        let bound: SocketAddr = "127.0.0.1:8765".parse().unwrap_or_else(|_| unreachable!());
        assert_eq!(
            allowed_origins(bound, &["http://localhost:6274".to_owned()]),
            [
                "http://localhost:8765",
                "http://127.0.0.1:8765",
                "http://[::1]:8765",
                "http://localhost:6274"
            ]
        );
        assert_eq!(allowed_hosts(bound, &[]), ["localhost", "127.0.0.1", "::1"]);
    }
}

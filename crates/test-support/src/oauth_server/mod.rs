//! An OAuth 2.1 authorization server and the MCP server it protects, on 127.0.0.1, for the
//! tests of `toolhost mcp login` (on its own thread and runtime; it stops when dropped).
//!
//! - `/.well-known/oauth-protected-resource`: the resource (`BASE/mcp`) and its authorization
//!   server (`BASE`);
//! - `/.well-known/oauth-authorization-server`: metadata (PKCE S256 only; a registration
//!   endpoint unless [`OAuthServerOptions::registration`] is off);
//! - `/register`: dynamic client registration; `/authorize`: approves at once, redirecting
//!   with `code`, `state` and `iss` (a wrong one with [`OAuthServerOptions::wrong_iss`]);
//!   `/token`: the authorization-code grant (the PKCE verifier checked), the
//!   client-credentials grant (the static client's only, no refresh token) and the refresh
//!   grant (the refresh token rotated, the old one then refused with `invalid_grant`; the
//!   static client's secret required on both);
//! - `/mcp`: a tiny MCP server (JSON answers) with one tool, `whoami`, reached only with a
//!   valid access token (401 and a `WWW-Authenticate` naming the metadata otherwise, and the
//!   scope [`OAuthServerOptions::challenge_scope`] when set); a call needs the scope
//!   [`OAuthServerOptions::call_scope`] when set (403 `insufficient_scope` naming it).
//!
//! - `/sse` and `/messages`: the same MCP server over the legacy HTTP+SSE transport, each
//!   request needing the token as `/mcp` does.
//!
//! With [`OAuthServerOptions::metadata_path`] the authorization server's metadata is at that
//! path only (the well-known address answers 404), as a client configured with
//! `auth_server_metadata_url` finds it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, PoisonError};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::Response;
use serde_json::{Value, json};

mod token;

use crate::legacy_sse::LegacySseSessions;
use crate::static_server::ThreadServer;
use crate::tiny_mcp::{answer, json_answer, plain};

/// How the server behaves.
#[derive(Clone, Debug)]
pub struct OAuthServerOptions {
    /// Whether `/register` (dynamic registration) is offered.
    pub registration: bool,
    /// A client registered beforehand: id and secret.
    pub static_client: Option<(String, String)>,
    /// Redirect with an `iss` that is not this server's.
    pub wrong_iss: bool,
    /// Seconds an access token lives.
    pub access_lifetime_secs: u64,
    /// The scope a tools/call needs (403 `insufficient_scope` without it).
    pub call_scope: Option<String>,
    /// Refuse a tools/call for want of `call_scope` even when the token has it, as a server
    /// whose policy no longer lets that scope call.
    pub call_refused_anyway: bool,
    /// Whether a refresh answers with a new refresh token (rotation); without, the answer has
    /// none and the one presented stays valid, as many servers do.
    pub rotate_refresh_tokens: bool,
    /// The `scope` the 401 challenge names.
    pub challenge_scope: Option<String>,
    /// The path the authorization server's metadata is served at instead of the well-known
    /// one.
    pub metadata_path: Option<String>,
    /// The scopes the authorization server grants, whatever is asked (the token's `scope`
    /// says which); `None`: the scopes asked.
    pub grantable_scopes: Option<Vec<String>>,
}

impl Default for OAuthServerOptions {
    fn default() -> Self {
        Self {
            registration: true,
            static_client: None,
            wrong_iss: false,
            access_lifetime_secs: 3600,
            call_scope: None,
            call_refused_anyway: false,
            rotate_refresh_tokens: true,
            challenge_scope: None,
            metadata_path: None,
            grantable_scopes: None,
        }
    }
}

#[derive(Debug, Default)]
struct Grants {
    clients: BTreeSet<String>,
    /// code → (client, challenge, scope)
    codes: BTreeMap<String, (String, String, String)>,
    /// access token → scope
    access: BTreeMap<String, String>,
    /// refresh token → (client, scope)
    refresh: BTreeMap<String, (String, String)>,
    issued: u64,
    refresh_grants: u64,
    registrations: u64,
    /// The `scope` of each authorization request, in order.
    authorizations: Vec<String>,
    /// The `scope` of each client-credentials grant, in order.
    machine_grants: Vec<String>,
}

struct Shared {
    base: String,
    options: OAuthServerOptions,
    grants: Mutex<Grants>,
    sse: LegacySseSessions,
}

/// The running servers.
pub struct OAuthServer {
    shared: Arc<Shared>,
    _server: ThreadServer,
}

impl OAuthServer {
    /// Starts both servers on one free port.
    pub fn start(options: OAuthServerOptions) -> Self {
        let mut grants = Grants::default();
        if let Some((id, _)) = &options.static_client {
            grants.clients.insert(id.clone());
        }
        let mut shared = None;
        let server = ThreadServer::start(|address| {
            let state = Arc::new(Shared {
                base: format!("http://{address}"),
                options,
                grants: Mutex::new(grants),
                sse: LegacySseSessions::default(),
            });
            shared = Some(Arc::clone(&state));
            axum::Router::new().fallback(route).with_state(state)
        });
        let Some(shared) = shared else {
            panic!("the OAuth server's state was not made");
        };
        Self {
            shared,
            _server: server,
        }
    }

    /// The MCP server's URL (`BASE/mcp`).
    pub fn mcp_url(&self) -> String {
        format!("{}/mcp", self.shared.base)
    }

    /// The same server's legacy SSE URL (`BASE/sse`).
    pub fn sse_url(&self) -> String {
        format!("{}/sse", self.shared.base)
    }

    /// The issuer (`BASE`).
    pub fn issuer(&self) -> String {
        self.shared.base.clone()
    }

    /// How many refresh grants were answered with new tokens.
    pub fn refresh_grants(&self) -> u64 {
        self.grants().refresh_grants
    }

    /// The `scope` each authorization request asked for, in order.
    pub fn authorizations(&self) -> Vec<String> {
        self.grants().authorizations.clone()
    }

    /// The `scope` each client-credentials grant asked for, in order.
    pub fn machine_grants(&self) -> Vec<String> {
        self.grants().machine_grants.clone()
    }

    /// How many clients registered dynamically.
    pub fn registrations(&self) -> u64 {
        self.grants().registrations
    }

    /// Forgets the access tokens and keeps the refresh tokens, as a server whose access tokens
    /// expired early: the next request is refused with 401, and a refresh works.
    pub fn forget_access_tokens(&self) {
        self.grants().access.clear();
    }

    /// Revokes every token, as a server that forgot them would.
    pub fn revoke_everything(&self) {
        let mut grants = self.grants();
        grants.access.clear();
        grants.refresh.clear();
    }

    /// What a browser does with the authorization URL: the `Location` it is sent to.
    pub fn browse(&self, authorize_url: &str) -> String {
        use std::io::{Read as _, Write as _};
        let rest = authorize_url
            .strip_prefix("http://")
            .unwrap_or_else(|| panic!("not an http URL: {authorize_url}"));
        let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
        let mut stream = std::net::TcpStream::connect(host)
            .unwrap_or_else(|error| panic!("cannot reach {host}: {error}"));
        write!(
            stream,
            "GET /{path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
        )
        .unwrap_or_else(|error| panic!("cannot send: {error}"));
        let mut answer = String::new();
        stream
            .read_to_string(&mut answer)
            .unwrap_or_else(|error| panic!("cannot read: {error}"));
        answer
            .lines()
            .find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.eq_ignore_ascii_case("location")
                    .then(|| value.trim().to_owned())
            })
            .unwrap_or_else(|| panic!("no redirect from {authorize_url}: {answer}"))
    }

    fn grants(&self) -> std::sync::MutexGuard<'_, Grants> {
        self.shared
            .grants
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

async fn route(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let base = &shared.base;
    let query = pairs(uri.query().unwrap_or("").as_bytes());
    match (method.as_str(), uri.path()) {
        ("GET", path) if path.starts_with("/.well-known/oauth-protected-resource") => {
            let resource = match &path["/.well-known/oauth-protected-resource".len()..] {
                "" => "/mcp",
                resource => resource,
            };
            json_answer(
                StatusCode::OK,
                &json!({"resource": format!("{base}{resource}"), "authorization_servers": [base],
                        "scopes_supported": ["mcp", "admin"], "bearer_methods_supported": ["header"]}),
            )
        }
        ("GET", path)
            if shared.options.metadata_path.as_deref().map_or_else(
                || path.starts_with("/.well-known/oauth-authorization-server"),
                |custom| path == custom,
            ) =>
        {
            let mut metadata = json!({
                "issuer": base,
                "authorization_endpoint": format!("{base}/authorize"),
                "token_endpoint": format!("{base}/token"),
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none", "client_secret_post", "client_secret_basic"],
                "scopes_supported": ["mcp", "admin"],
                "authorization_response_iss_parameter_supported": true,
            });
            if shared.options.registration {
                metadata["registration_endpoint"] = json!(format!("{base}/register"));
            }
            json_answer(StatusCode::OK, &metadata)
        }
        ("POST", "/register") if shared.options.registration => {
            let asked: Value = serde_json::from_slice(&body).unwrap_or_default();
            let mut grants = lock(&shared);
            grants.registrations += 1;
            let id = format!("dynamic-{}", grants.registrations);
            grants.clients.insert(id.clone());
            json_answer(
                StatusCode::CREATED,
                &json!({"client_id": id, "redirect_uris": asked["redirect_uris"],
                        "token_endpoint_auth_method": "none"}),
            )
        }
        ("GET", "/authorize") => authorize(&shared, &query),
        ("POST", "/token") => token::token(&shared, &headers, &pairs(&body)),
        (_, "/mcp") => match authorized(&shared, &headers, "/mcp") {
            Ok((token, scope)) => mcp(&shared, &method, &token, &scope, &body),
            Err(refused) => *refused,
        },
        ("GET", "/sse") => match authorized(&shared, &headers, "/sse") {
            Ok(_) => shared.sse.open("/messages"),
            Err(refused) => *refused,
        },
        ("POST", "/messages") => match authorized(&shared, &headers, "/sse") {
            Ok((token, scope)) => {
                let session = query.get("session").and_then(|id| id.parse().ok());
                let answered = mcp(&shared, &method, &token, &scope, &body);
                shared.sse.post(session, answered).await
            }
            Err(refused) => *refused,
        },
        _ => plain(StatusCode::NOT_FOUND, "not found"),
    }
}

fn authorize(shared: &Shared, query: &BTreeMap<String, String>) -> Response {
    let field = |key: &str| query.get(key).cloned().unwrap_or_default();
    let mut grants = lock(shared);
    if !grants.clients.contains(&field("client_id")) {
        return plain(StatusCode::BAD_REQUEST, "unknown client_id");
    }
    if field("code_challenge_method") != "S256" || field("code_challenge").is_empty() {
        return plain(StatusCode::BAD_REQUEST, "PKCE S256 is required");
    }
    grants.authorizations.push(field("scope"));
    grants.issued += 1;
    let code = format!("code-{}", grants.issued);
    let scope = match &shared.options.grantable_scopes {
        Some(grantable) => field("scope")
            .split_whitespace()
            .filter(|scope| grantable.iter().any(|allowed| allowed == scope))
            .collect::<Vec<_>>()
            .join(" "),
        None => field("scope"),
    };
    grants.codes.insert(
        code.clone(),
        (field("client_id"), field("code_challenge"), scope),
    );
    let iss = if shared.options.wrong_iss {
        "http://issuer.invalid".to_owned()
    } else {
        shared.base.clone()
    };
    let location = format!(
        "{}?code={code}&state={}&iss={}",
        field("redirect_uri"),
        encode(&field("state")),
        encode(&iss)
    );
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::FOUND;
    if let Ok(value) = location.parse() {
        response.headers_mut().insert(header::LOCATION, value);
    }
    response
}

/// The token a request carries and its scope; a 401 naming the protected-resource metadata
/// of `resource` (and the challenge scope) when it carries none that is valid.
fn authorized(
    shared: &Shared,
    headers: &HeaderMap,
    resource: &str,
) -> Result<(String, String), Box<Response>> {
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .unwrap_or("");
    let scope = lock(shared).access.get(token).cloned();
    let Some(scope) = scope else {
        let scope = shared
            .options
            .challenge_scope
            .as_ref()
            .map(|scope| format!(", scope=\"{scope}\""))
            .unwrap_or_default();
        let challenge = format!(
            "Bearer error=\"invalid_token\", resource_metadata=\"{}/.well-known/oauth-protected-resource{resource}\"{scope}",
            shared.base
        );
        let mut response = plain(StatusCode::UNAUTHORIZED, "a valid bearer token is needed");
        if let Ok(value) = challenge.parse() {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, value);
        }
        return Err(Box::new(response));
    };
    Ok((token.to_owned(), scope))
}

/// The MCP server's answer to `body`, for a caller holding `token` with `scope`.
fn mcp(shared: &Shared, method: &Method, token: &str, scope: &str, body: &[u8]) -> Response {
    let tool = json!({"name": "whoami", "description": "Says which token called.",
                      "inputSchema": {"type": "object", "properties": {}}});
    answer(method, body, "protected", tool, || {
        if let Some(needed) = &shared.options.call_scope
            && (shared.options.call_refused_anyway
                || !scope.split_whitespace().any(|granted| granted == needed))
        {
            let challenge = format!(
                "Bearer error=\"insufficient_scope\", scope=\"{needed}\", resource_metadata=\"{}/.well-known/oauth-protected-resource\"",
                shared.base
            );
            let mut response = plain(StatusCode::FORBIDDEN, "insufficient scope");
            if let Ok(value) = challenge.parse() {
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, value);
            }
            return Err(Box::new(response));
        }
        Ok(json!({"content": [{"type": "text", "text": format!("called with {token}")}]}))
    })
}

fn lock(shared: &Shared) -> std::sync::MutexGuard<'_, Grants> {
    shared.grants.lock().unwrap_or_else(PoisonError::into_inner)
}

fn pairs(bytes: &[u8]) -> BTreeMap<String, String> {
    url::form_urlencoded::parse(bytes).into_owned().collect()
}

fn encode(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

//! A tiny MCP server (Streamable HTTP, JSON answers) on 127.0.0.1 that answers only requests
//! carrying one header with one value (401 otherwise), as a server behind an API key does: for
//! the tests of headers a client must send (`.mcp.json`'s `headers` and `headersHelper`). Its
//! one tool, `whoami`, says the value it was called with. It runs on its own thread and stops
//! when dropped.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::Response;
use serde_json::json;

use crate::static_server::ThreadServer;
use crate::tiny_mcp::{answer, plain};

struct Gate {
    header: String,
    value: String,
}

/// The running server.
pub struct HeaderGatedMcpServer {
    server: ThreadServer,
}

impl HeaderGatedMcpServer {
    /// Serves `/mcp` to requests whose header `header` is `value`.
    pub fn start(header: &str, value: &str) -> Self {
        let gate = Arc::new(Gate {
            header: header.to_owned(),
            value: value.to_owned(),
        });
        let server = ThreadServer::start(|_| {
            axum::Router::new()
                .route("/mcp", axum::routing::any(route))
                .with_state(gate)
        });
        Self { server }
    }

    /// `http://127.0.0.1:PORT/mcp`.
    pub fn url(&self) -> String {
        format!("{}/mcp", self.server.base())
    }
}

async fn route(
    State(gate): State<Arc<Gate>>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let given = headers
        .get(gate.header.as_str())
        .and_then(|value| value.to_str().ok());
    if given != Some(gate.value.as_str()) {
        return plain(
            StatusCode::UNAUTHORIZED,
            "the API key header is missing or wrong",
        );
    }
    let tool = json!({"name": "whoami", "description": "Says which key called.",
                      "inputSchema": {"type": "object", "properties": {}}});
    let said = format!("called with {}: {}", gate.header, gate.value);
    answer(&method, &body, "gated", tool, || {
        Ok(json!({"content": [{"type": "text", "text": said}]}))
    })
}

//! The MCP side of the small HTTP servers of this crate ([`crate::OAuthServer`],
//! [`crate::HeaderGatedMcpServer`]): JSON-RPC over Streamable HTTP answered with plain JSON
//! bodies, one tool, nothing more than a client needs to list and call it.

use axum::body::Body;
use axum::http::{Method, StatusCode, header};
use axum::response::Response;
use serde_json::{Value, json};

/// The answer to one MCP request (`body`, sent with `method`) for a server named `server`
/// offering `tool` (an MCP tool object); `call` answers `tools/call` with the result, or
/// with a whole response of its own (a refusal).
pub(crate) fn answer(
    method: &Method,
    body: &[u8],
    server: &str,
    tool: Value,
    call: impl FnOnce() -> Result<Value, Box<Response>>,
) -> Response {
    if method != Method::POST {
        return plain(StatusCode::METHOD_NOT_ALLOWED, "POST only");
    }
    let message: Value = serde_json::from_slice(body).unwrap_or_default();
    let Some(id) = message.get("id").cloned() else {
        return plain(StatusCode::ACCEPTED, "");
    };
    let result = match message["method"].as_str().unwrap_or("") {
        "initialize" => json!({
            "protocolVersion": message["params"]["protocolVersion"].as_str().unwrap_or("2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": server, "version": "1.0.0"}
        }),
        "tools/list" => json!({"tools": [tool]}),
        "tools/call" => match call() {
            Ok(result) => result,
            Err(response) => return *response,
        },
        "ping" => json!({}),
        other => {
            return json_answer(
                StatusCode::OK,
                &json!({"jsonrpc": "2.0", "id": id,
                        "error": {"code": -32601, "message": format!("no method {other}")}}),
            );
        }
    };
    json_answer(
        StatusCode::OK,
        &json!({"jsonrpc": "2.0", "id": id, "result": result}),
    )
}

/// `status` with a JSON body.
pub(crate) fn json_answer(status: StatusCode, value: &Value) -> Response {
    let mut response = Response::new(Body::from(value.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    response
}

/// `status` with a text body.
pub(crate) fn plain(status: StatusCode, text: &'static str) -> Response {
    let mut response = Response::new(Body::from(text));
    *response.status_mut() = status;
    response
}

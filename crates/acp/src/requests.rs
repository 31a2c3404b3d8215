//! Reading a request's parameters, and the errors a client can act on: a bad request is
//! answered with `-32602` naming the field (`mcpServers[0].command: missing field`), a
//! session that does not exist with `-32002` naming it, a missing API key with `-32000` and
//! the authentication method.

use agent_client_protocol::v1::schema::{McpServerHttp, McpServerSse, McpServerStdio};
use agent_client_protocol::{Error, ErrorCode};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// `-32002`: what the request names does not exist (ACP's "resource not found").
const RESOURCE_NOT_FOUND: i32 = -32002;

/// The parameters of `method`, or the error naming the field that is wrong.
pub fn parse<T: DeserializeOwned>(method: &str, params: &Value) -> Result<T, Error> {
    // A request without params is read as an empty object, so that the error names the first
    // field it needs.
    let params = if params.is_null() {
        Value::Object(serde_json::Map::new())
    } else {
        params.clone()
    };
    check_mcp_servers(method, &params)?;
    deserialize(method, params, "")
}

/// `mcpServers` is an enum the schema tells apart by `type`, falling back to stdio: serde can
/// only say an entry "did not match any variant". Each entry is read as the variant its `type`
/// names first, so that the error names the field inside it.
fn check_mcp_servers(method: &str, params: &Value) -> Result<(), Error> {
    let Some(servers) = params.get("mcpServers").and_then(Value::as_array) else {
        return Ok(());
    };
    for (index, server) in servers.iter().enumerate() {
        let at = format!("mcpServers[{index}].");
        let server = server.clone();
        match server.get("type").and_then(Value::as_str) {
            Some("http") => deserialize::<McpServerHttp>(method, server, &at).map(drop)?,
            Some("sse") => deserialize::<McpServerSse>(method, server, &at).map(drop)?,
            Some(_) => {}
            None => deserialize::<McpServerStdio>(method, server, &at).map(drop)?,
        }
    }
    Ok(())
}

/// `value` as a `T`, or the error naming the field (after `prefix`) that is wrong.
fn deserialize<T: DeserializeOwned>(method: &str, value: Value, prefix: &str) -> Result<T, Error> {
    serde_path_to_error::deserialize(value).map_err(|error| {
        let field = error.path().to_string();
        let problem = error.inner().to_string();
        // A missing field is reported one level up by serde: name it after its parent.
        let field = match (field.as_str(), missing_field(&problem)) {
            (".", Some(missing)) => format!("{prefix}{missing}"),
            (_, Some(missing)) => format!("{prefix}{field}.{missing}"),
            (".", None) => prefix.trim_end_matches('.').to_owned(),
            _ => format!("{prefix}{field}"),
        };
        invalid_params(format!("{method}: {field}: {problem}"), &field)
    })
}

/// The name serde reports in "missing field `name`".
fn missing_field(problem: &str) -> Option<&str> {
    problem
        .strip_prefix("missing field `")
        .and_then(|rest| rest.split('`').next())
}

/// `-32602` with `message`, naming `field` in the data.
pub fn invalid_params(message: String, field: &str) -> Error {
    Error::new(ErrorCode::INVALID_PARAMS, message.clone())
        .data(json!({ "field": field, "message": message }))
}

/// `-32002`: no session `id` here.
pub fn unknown_session(id: &str) -> Error {
    Error::new(
        RESOURCE_NOT_FOUND,
        format!("there is no session '{id}' in this toolhost acp; create one with session/new"),
    )
    .data(json!({ "field": "sessionId", "sessionId": id }))
}

/// `-32603` with `message`: something failed on this side.
pub fn internal(message: impl std::fmt::Display) -> Error {
    Error::new(ErrorCode::INTERNAL_ERROR, message.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::NewSessionRequest;
    use pretty_assertions::assert_eq;

    fn message(error: &Error) -> (i32, String) {
        (i32::from(error.code), error.message.clone())
    }

    #[test]
    fn a_missing_field_is_named() {
        let error =
            parse::<NewSessionRequest>("session/new", &json!({"mcpServers": []})).unwrap_err();
        assert_eq!(
            message(&error),
            (-32602, "session/new: cwd: missing field `cwd`".to_owned())
        );
        assert_eq!(error.data.unwrap()["field"], "cwd");
    }

    #[test]
    fn a_field_of_the_wrong_type_is_named_with_its_path() {
        let error = parse::<NewSessionRequest>(
            "session/new",
            &json!({"cwd": "/tmp", "mcpServers": [{"type": "http", "name": "x", "url": 5, "headers": []}]}),
        )
        .unwrap_err();
        assert_eq!(error.data.unwrap()["field"], "mcpServers[0].url");
    }
}

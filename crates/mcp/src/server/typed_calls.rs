//! The server side's typed lines: plain `tools/call` requests, parsed straight into rmcp's
//! `CallToolRequest` rather than tried as each client request before it (see
//! [`crate::typed_lines`]): one is a line with the four JSON-RPC keys and no `_meta` (which
//! rmcp moves into the request's extensions; such a call is left to rmcp).

use std::borrow::Cow;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientRequest, JsonRpcMessage, JsonRpcRequest,
    RequestId,
};
use rmcp::service::{RoleServer, RxJsonRpcMessage};
use serde::Deserialize;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::typed_lines::TypedLineTransport;

/// rmcp's line transport for a client that writes to `read` and reads from `write`, with
/// `tools/call` requests parsed here.
pub(super) fn typed_call_transport<R, W>(read: R, write: W) -> TypedLineTransport<RoleServer, R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    TypedLineTransport::new(read, write, typed_call)
}

/// The envelope of a plain `tools/call` request; any other key makes the line rmcp's.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallEnvelope<'a> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    id: RequestId,
    #[serde(borrow)]
    method: Cow<'a, str>,
    params: CallToolRequestParams,
}

/// The line as rmcp would have parsed it, when it is a plain `tools/call` request: JSON-RPC
/// 2.0, an id, and no `_meta` (which rmcp moves into the request's extensions; such a call
/// is left to rmcp). `None` for anything else.
fn typed_call(line: &[u8]) -> Option<RxJsonRpcMessage<RoleServer>> {
    // Anything else is passed over without being parsed twice.
    memchr::memmem::find(line, b"\"tools/call\"")?;
    let envelope: CallEnvelope<'_> = serde_json::from_slice(line).ok()?;
    if envelope.jsonrpc != "2.0"
        || envelope.method != "tools/call"
        || envelope.params.meta.is_some()
    {
        return None;
    }
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(envelope.params));
    Some(JsonRpcMessage::Request(JsonRpcRequest::new(
        envelope.id,
        request,
    )))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use rmcp::model::ClientNotification;
    use rmcp::transport::Transport as _;
    use tokio::io::AsyncWriteExt as _;

    use super::*;

    /// What arrived, in order: the method of each request (and whether it carried `_meta`),
    /// or the notification's method.
    fn describe(message: &RxJsonRpcMessage<RoleServer>) -> String {
        match message {
            JsonRpcMessage::Request(request) => match &request.request {
                ClientRequest::CallToolRequest(call) => format!(
                    "call {} {} meta={}",
                    request.id,
                    call.params.name,
                    call.extensions
                        .get::<rmcp::model::RequestMetaObject>()
                        .is_some()
                ),
                other => format!("request {} {}", request.id, other.method()),
            },
            JsonRpcMessage::Notification(notification) => match &notification.notification {
                ClientNotification::CancelledNotification(_) => "cancelled".to_owned(),
                _ => "notification".to_owned(),
            },
            _ => "other".to_owned(),
        }
    }

    #[tokio::test]
    async fn calls_parsed_here_and_lines_left_to_rmcp_arrive_in_order() {
        let (mut client, server_read) = tokio::io::duplex(1 << 16);
        let (server_write, _client_read) = tokio::io::duplex(1 << 16);
        let mut transport = typed_call_transport(server_read, server_write);
        let lines = concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Read","arguments":{"path":"a"}}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"Read","arguments":{"path":"b"}}}"#,
            "\r\n",
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"Grep","_meta":{"progressToken":7}}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"Read"}}"#,
            "\n",
        );
        client.write_all(lines.as_bytes()).await.unwrap();
        drop(client);
        let mut arrived = Vec::new();
        while let Some(message) = transport.receive().await {
            arrived.push(describe(&message));
        }
        pretty_assertions::assert_eq!(
            arrived,
            [
                "request 1 ping",
                "call 2 Read meta=false",
                "call 3 Read meta=false",
                "cancelled",
                "call 4 Grep meta=true",
                "call 5 Read meta=false",
            ]
        );
    }

    #[tokio::test]
    async fn a_line_longer_than_the_buffer_reaches_rmcp_whole() {
        let (mut client, server_read) = tokio::io::duplex(1 << 16);
        let (server_write, _client_read) = tokio::io::duplex(1 << 16);
        let mut transport = typed_call_transport(server_read, server_write);
        let content = "x".repeat(200_000);
        let long = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"Write","arguments":{{"content":"{content}"}}}}}}"#
        );
        let writer = tokio::spawn(async move {
            client.write_all(long.as_bytes()).await.unwrap();
            client.write_all(b"\n").await.unwrap();
            let short =
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Read"}}"#;
            client.write_all(short.as_bytes()).await.unwrap();
            client.write_all(b"\n").await.unwrap();
        });
        let mut arrived = Vec::new();
        while let Some(message) = transport.receive().await {
            if let JsonRpcMessage::Request(request) = &message
                && let ClientRequest::CallToolRequest(call) = &request.request
            {
                let size = call
                    .params
                    .arguments
                    .as_ref()
                    .and_then(|arguments| arguments.get("content"))
                    .and_then(|content| content.as_str())
                    .map_or(0, str::len);
                arrived.push(format!("call {} {} {size}", request.id, call.params.name));
            }
            if arrived.len() == 2 {
                break;
            }
        }
        // (Before waiting for the writer, which a transport that stopped reading blocks.)
        pretty_assertions::assert_eq!(arrived, ["call 1 Write 200000", "call 2 Read 0"]);
        writer.await.unwrap();
    }
}

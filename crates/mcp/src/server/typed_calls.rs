//! A stdio transport that parses `tools/call` requests itself and hands rmcp typed messages.
//!
//! rmcp parses every incoming line as its `JsonRpcMessage`, whose request type is a serde
//! untagged enum of every client request: a `tools/call` is tried as each of the thirteen
//! variants before it, and each failed attempt buffers the message and builds a
//! `serde_json::Error` (~36 k instructions per call, the largest part of serving a small
//! Read). [`TypedCallTransport`] reads the lines first: one that is a plain `tools/call`
//! request (the four JSON-RPC keys, no `_meta`) is parsed straight into rmcp's
//! `CallToolRequest` and queued; every other line (other requests, notifications,
//! responses, anything malformed) goes on to rmcp's own line transport, unchanged, which
//! parses it, answers errors and sends everything. Messages reach rmcp in the order they
//! arrived: a line is parsed here only when every byte before it has been handed on and
//! every message before it delivered, and queued calls are delivered first.

use std::borrow::Cow;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientRequest, JsonRpcMessage, JsonRpcRequest,
    RequestId,
};
use rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use serde::Deserialize;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::mpsc;

/// Bytes held while looking for the end of a line; a longer line is handed on as it comes,
/// unparsed, and rmcp's own line limit applies to it.
const MAX_TYPED_LINE_BYTES: usize = 64 * 1024;

/// rmcp's line transport over `read` and `write`, with `tools/call` requests parsed here.
pub struct TypedCallTransport<R: AsyncRead + Unpin, W: AsyncWrite> {
    lines: AsyncRwTransport<RoleServer, CallFilter<R>, W>,
    calls: mpsc::UnboundedReceiver<RxJsonRpcMessage<RoleServer>>,
}

impl<R, W> TypedCallTransport<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// The transport for a client that writes to `read` and reads from `write`.
    pub fn new(read: R, write: W) -> Self {
        let (queue, calls) = mpsc::unbounded_channel();
        let filter = CallFilter {
            inner: read,
            held: vec![0; MAX_TYPED_LINE_BYTES].into_boxed_slice(),
            start: 0,
            end: 0,
            passing_line: false,
            at_end: false,
            queue,
        };
        Self {
            lines: AsyncRwTransport::new(filter, write),
            calls,
        }
    }
}

impl<R, W> Transport<RoleServer> for TypedCallTransport<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.lines.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        // Queued calls first: the filter queues a call only once everything before it has
        // been handed on, and stops there until the call is taken.
        tokio::select! {
            biased;
            Some(call) = self.calls.recv() => Some(call),
            message = self.lines.receive() => message,
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.lines.close().await
    }
}

/// The reading side of rmcp's line transport: passes every line through except plain
/// `tools/call` requests, which it parses and queues.
struct CallFilter<R> {
    inner: R,
    /// Bytes read; those not yet handed on are `start..end`. Allocated (and zeroed) once.
    held: Box<[u8]>,
    start: usize,
    end: usize,
    /// In the middle of a line being handed on unparsed.
    passing_line: bool,
    at_end: bool,
    queue: mpsc::UnboundedSender<RxJsonRpcMessage<RoleServer>>,
}

impl<R: AsyncRead + Unpin> AsyncRead for CallFilter<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            let unread = &this.held[this.start..this.end];
            let line_end = memchr::memchr(b'\n', unread).map(|newline| newline + 1);
            if let Some(end) = line_end
                && !this.passing_line
                && let Some(call) = typed_call(&unread[..end])
            {
                this.start += end;
                if this.queue.send(call).is_ok() {
                    // Nothing more until the transport has taken the call: the next line
                    // must not overtake it.
                    return Poll::Pending;
                }
                continue;
            }
            if line_end.is_some()
                || this.passing_line
                || unread.len() == this.held.len()
                || (this.at_end && !unread.is_empty())
            {
                let available = line_end.unwrap_or(unread.len());
                let handed = available.min(out.remaining());
                out.put_slice(&unread[..handed]);
                this.start += handed;
                this.passing_line = unread[..handed].last() != Some(&b'\n');
                return Poll::Ready(Ok(()));
            }
            if this.at_end {
                return Poll::Ready(Ok(()));
            }
            // Room to read: the unread part moves to the front (it is a partial line).
            this.held.copy_within(this.start..this.end, 0);
            this.end -= this.start;
            this.start = 0;
            let mut free = ReadBuf::new(&mut this.held[this.end..]);
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut free))?;
            let received = free.filled().len();
            this.end += received;
            this.at_end = received == 0;
        }
    }
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
        let mut transport = TypedCallTransport::new(server_read, server_write);
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
}

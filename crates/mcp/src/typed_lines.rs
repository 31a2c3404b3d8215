//! rmcp's line transport with the commonest message of a connection parsed here.
//!
//! rmcp parses every incoming line as its `JsonRpcMessage`, whose request and result types are
//! serde untagged enums: a `tools/call` request is tried as each of the thirteen client
//! requests before it, a `tools/call` result as each of the fifteen server results before it,
//! and each failed attempt buffers the message and builds a `serde_json::Error`. That is the
//! largest part of serving a small Read, and of forwarding a call through the gateway.
//! [`TypedLineTransport`] reads the lines first: one that its parser recognises (a plain
//! `tools/call` request on the server side, a plain `tools/call` result on the client side) is
//! parsed straight into rmcp's typed message and queued; every other line (other messages,
//! anything malformed) goes on to rmcp's own line transport, unchanged, which parses it,
//! answers errors and sends everything. Messages reach rmcp in the order they arrived: a line
//! is parsed here only when every byte before it has been handed on and every message before
//! it delivered, and queued messages are delivered first.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use rmcp::service::{RxJsonRpcMessage, ServiceRole, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::mpsc;

/// Bytes held while looking for the end of a line; a longer line is handed on as it comes,
/// unparsed, and rmcp's own line limit applies to it.
const MAX_TYPED_LINE_BYTES: usize = 64 * 1024;

/// Parses one whole line (with its newline) into a message, or `None` to leave it to rmcp.
pub(crate) type LineParser<Role> = fn(&[u8]) -> Option<RxJsonRpcMessage<Role>>;

/// rmcp's line transport over `read` and `write`, with the lines `parse` recognises parsed
/// here.
pub(crate) struct TypedLineTransport<Role: ServiceRole, R: AsyncRead + Unpin, W: AsyncWrite> {
    lines: AsyncRwTransport<Role, LineFilter<Role, R>, W>,
    typed: mpsc::UnboundedReceiver<RxJsonRpcMessage<Role>>,
}

impl<Role, R, W> TypedLineTransport<Role, R, W>
where
    Role: ServiceRole,
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// The transport for a peer that writes to `read` and reads from `write`.
    pub(crate) fn new(read: R, write: W, parse: LineParser<Role>) -> Self {
        let (queue, typed) = mpsc::unbounded_channel();
        let filter = LineFilter {
            inner: read,
            held: vec![0; MAX_TYPED_LINE_BYTES].into_boxed_slice(),
            start: 0,
            end: 0,
            passing_line: false,
            at_end: false,
            parse,
            queue,
        };
        Self {
            lines: AsyncRwTransport::new(filter, write),
            typed,
        }
    }
}

impl<Role, R, W> Transport<Role> for TypedLineTransport<Role, R, W>
where
    Role: ServiceRole,
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<Role>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.lines.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<Role>> {
        // Queued messages first: the filter queues one only once everything before it has
        // been handed on, and stops there until it is taken.
        tokio::select! {
            biased;
            Some(message) = self.typed.recv() => Some(message),
            message = self.lines.receive() => message,
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.lines.close().await
    }
}

/// The reading side of rmcp's line transport: passes every line through except those
/// `parse` recognises, which it queues.
struct LineFilter<Role: ServiceRole, R> {
    inner: R,
    /// Bytes read; those not yet handed on are `start..end`. Allocated (and zeroed) once.
    held: Box<[u8]>,
    start: usize,
    end: usize,
    /// In the middle of a line being handed on unparsed.
    passing_line: bool,
    at_end: bool,
    parse: LineParser<Role>,
    queue: mpsc::UnboundedSender<RxJsonRpcMessage<Role>>,
}

impl<Role: ServiceRole, R: AsyncRead + Unpin> AsyncRead for LineFilter<Role, R> {
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
                && let Some(message) = (this.parse)(&unread[..end])
            {
                this.start += end;
                if this.queue.send(message).is_ok() {
                    // Nothing more until the transport has taken the message: the next line
                    // must not overtake it.
                    return Poll::Pending;
                }
                continue;
            }
            // (Handing on nothing would read as the end of the stream.)
            if line_end.is_some()
                || (this.passing_line && !unread.is_empty())
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

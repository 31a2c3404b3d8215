//! Connections a handler can cut: HTTP servers answer every request, but
//! [`Fault::DropBeforeFirstByte`](super::Fault::DropBeforeFirstByte) must close the socket
//! without a byte. The listener wraps each accepted stream with a shared switch; the handler
//! gets the switch through axum's `ConnectInfo` and turns it, and the next write fails, which
//! makes hyper close the connection.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::connect_info::Connected;
use axum::serve::{IncomingStream, Listener};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

/// How long to wait after a failed `accept` (out of file descriptors, say) before the next.
const ACCEPT_RETRY_DELAY: Duration = Duration::from_millis(50);

/// A TCP listener whose connections can be cut.
pub(crate) struct CuttableListener {
    pub(crate) inner: TcpListener,
}

impl Listener for CuttableListener {
    type Io = CuttableStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            match self.inner.accept().await {
                Ok((stream, address)) => {
                    // Small SSE frames must leave at once, not wait on Nagle and a delayed ACK.
                    // Failing to set it only slows the test down, so the error is ignored.
                    let _ = stream.set_nodelay(true);
                    let cut = ConnectionCut(Arc::new(AtomicBool::new(false)));
                    return (CuttableStream { stream, cut }, address);
                }
                Err(_) => tokio::time::sleep(ACCEPT_RETRY_DELAY).await,
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

/// The switch that cuts one connection.
#[derive(Clone, Debug)]
pub(crate) struct ConnectionCut(Arc<AtomicBool>);

impl ConnectionCut {
    /// From now on the connection reads end-of-file and writes fail.
    pub(crate) fn cut(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    fn is_cut(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

impl Connected<IncomingStream<'_, CuttableListener>> for ConnectionCut {
    fn connect_info(stream: IncomingStream<'_, CuttableListener>) -> Self {
        stream.io().cut.clone()
    }
}

/// A TCP stream that stops working once its [`ConnectionCut`] is turned.
pub(crate) struct CuttableStream {
    stream: TcpStream,
    cut: ConnectionCut,
}

impl AsyncRead for CuttableStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buffer: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.cut.is_cut() {
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.stream).poll_read(context, buffer)
    }
}

impl AsyncWrite for CuttableStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        if self.cut.is_cut() {
            return Poll::Ready(Err(cut_error()));
        }
        Pin::new(&mut self.stream).poll_write(context, bytes)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buffers: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if self.cut.is_cut() {
            return Poll::Ready(Err(cut_error()));
        }
        Pin::new(&mut self.stream).poll_write_vectored(context, buffers)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(context)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(context)
    }
}

fn cut_error() -> io::Error {
    io::Error::new(
        io::ErrorKind::ConnectionAborted,
        "mock model: connection cut by the script",
    )
}

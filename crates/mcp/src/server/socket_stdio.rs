//! Standard input and output on the runtime's reactor when they are sockets.
//!
//! Node-based MCP clients (the TypeScript SDK, and every client on libuv) start servers with
//! Unix socket pairs as stdin and stdout, not pipes. rmcp's `stdio_pipes` only takes pipes off
//! tokio's blocking `Stdin`/`Stdout`, which hand every read and write to a blocking-pool thread
//! (two thread wake-ups and several futex calls per message). A socket can be read and written
//! without blocking and without changing its flags: `recv` and `send` with `MSG_DONTWAIT`, on
//! descriptors of our own registered with the reactor. The descriptors' open file descriptions
//! stay blocking, so nothing leaks into children that inherit the standard streams.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use rustix::fs::FileType;
use rustix::net::{RecvFlags, SendFlags};
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Standard input and output as an rmcp transport, when both are sockets; `None` otherwise
/// (pipes, terminals, files), or when the reactor refuses them.
pub fn socket_stdio() -> Option<(SocketReader, SocketWriter)> {
    let input = socket_copy(io::stdin().as_fd())?;
    let output = socket_copy(io::stdout().as_fd())?;
    Some((
        SocketReader(register(input)?),
        SocketWriter(register(output)?),
    ))
}

/// `fd` registered with the reactor.
fn register(fd: OwnedFd) -> Option<AsyncFd<OwnedFd>> {
    // SAFETY: the `AsyncFd` owns the `OwnedFd`, so the descriptor stays open, and names the
    // same open file description, until the `AsyncFd` is dropped.
    #[allow(unsafe_code)]
    unsafe {
        AsyncFd::register(fd).ok()
    }
}

/// A descriptor of our own (close-on-exec) on `fd`, when it is a socket.
fn socket_copy(fd: std::os::fd::BorrowedFd<'_>) -> Option<OwnedFd> {
    let stat = rustix::fs::fstat(fd).ok()?;
    (FileType::from_raw_mode(stat.st_mode) == FileType::Socket)
        .then(|| fd.try_clone_to_owned().ok())
        .flatten()
}

/// Standard input, a socket, read with `MSG_DONTWAIT` when the reactor says it is readable.
#[derive(Debug)]
pub struct SocketReader(AsyncFd<OwnedFd>);

impl AsyncRead for SocketReader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            let mut ready = ready!(self.0.poll_read_ready(cx))?;
            let unfilled = buf.initialize_unfilled();
            let received = ready.try_io(|socket| {
                rustix::net::recv(socket.get_ref(), &mut *unfilled, RecvFlags::DONTWAIT)
                    .map(|(received, _)| received)
                    .map_err(io::Error::from)
            });
            match received {
                Ok(Ok(received)) => {
                    buf.advance(received);
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(error)) => return Poll::Ready(Err(error)),
                Err(_would_block) => {}
            }
        }
    }
}

/// Standard output, a socket, written with `MSG_DONTWAIT` when the reactor says it is
/// writable. `MSG_NOSIGNAL`: a client that went away is an error, not a `SIGPIPE`.
#[derive(Debug)]
pub struct SocketWriter(AsyncFd<OwnedFd>);

impl AsyncWrite for SocketWriter {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            let mut ready = ready!(self.0.poll_write_ready(cx))?;
            let sent = ready.try_io(|socket| {
                rustix::net::send(
                    socket.get_ref(),
                    buf,
                    SendFlags::DONTWAIT | SendFlags::NOSIGNAL,
                )
                .map_err(io::Error::from)
            });
            if let Ok(sent) = sent {
                return Poll::Ready(sent);
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    /// Nothing to do: the process's own stdout stays open until it exits.
    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

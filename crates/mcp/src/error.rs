//! Why serving stopped or could not start.

use std::net::SocketAddr;

/// Why the server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The HTTP listener could not bind.
    #[error("cannot listen on {address}: {source}")]
    Bind {
        /// The address asked for.
        address: SocketAddr,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// A non-loopback address was asked for without a bearer token.
    #[error(
        "refusing to serve on {0} without a bearer token: anyone who can reach it could run \
         tools. Serve on 127.0.0.1, or set a token with --token-env VAR"
    )]
    UnguardedRemote(SocketAddr),
    /// The bearer token is empty.
    #[error("the bearer token is empty; put a long random value in the variable")]
    EmptyToken,
    /// The client never completed the MCP handshake.
    #[error("the MCP handshake failed: {0}")]
    Handshake(String),
    /// The connection failed while serving.
    #[error("the MCP connection failed: {0}")]
    Transport(String),
}

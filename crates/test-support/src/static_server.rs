//! A server on 127.0.0.1 that serves fixed files by path (a skill hub's index and archives),
//! on its own thread and runtime, so that tests that run the `toolhost` binary synchronously
//! can use it too. It stops when dropped.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::Response;

/// A router served on 127.0.0.1 from a thread and runtime of its own; it stops when dropped.
pub struct ThreadServer {
    address: std::net::SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ThreadServer {
    /// Serves the router `make` builds for the address it will answer on.
    pub fn start(make: impl FnOnce(std::net::SocketAddr) -> axum::Router) -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap_or_else(|error| panic!("cannot listen on 127.0.0.1: {error}"));
        let address = listener
            .local_addr()
            .unwrap_or_else(|error| panic!("no local address: {error}"));
        listener
            .set_nonblocking(true)
            .unwrap_or_else(|error| panic!("cannot make the listener non-blocking: {error}"));
        let app = make(address);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap_or_else(|error| panic!("cannot build a runtime: {error}"));
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener)
                    .unwrap_or_else(|error| panic!("cannot use the listener: {error}"));
                let _ = axum::serve(listener, app)
                    .with_graceful_shutdown(async {
                        let _ = stopped.await;
                    })
                    .await;
            });
        });
        Self {
            address,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base(&self) -> String {
        format!("http://{}", self.address)
    }
}

impl Drop for ThreadServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Serves `GET /PATH` with the bytes given for `PATH`, 404 otherwise.
pub struct StaticServer {
    server: ThreadServer,
}

impl StaticServer {
    /// Serves `files` (path without the leading `/` → content).
    pub fn start(files: BTreeMap<String, Vec<u8>>) -> Self {
        let files = Arc::new(files);
        Self {
            server: ThreadServer::start(|_| axum::Router::new().fallback(serve).with_state(files)),
        }
    }

    /// The URL of `path` (without the leading `/`).
    pub fn url(&self, path: &str) -> String {
        format!("{}/{path}", self.server.base())
    }
}

async fn serve(State(files): State<Arc<BTreeMap<String, Vec<u8>>>>, uri: Uri) -> Response {
    let path = uri.path().trim_start_matches('/');
    let (status, body) = match files.get(path) {
        Some(bytes) => (StatusCode::OK, bytes.clone()),
        None => (StatusCode::NOT_FOUND, b"not found".to_vec()),
    };
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    response
}

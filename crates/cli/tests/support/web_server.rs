//! A small HTTP/1.1 site on 127.0.0.1 for the web tool tests: fixed routes, each request
//! counted by path, one thread per connection. It lives as long as the test process.

#![allow(dead_code, clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The body of `/article`: an article between a navigation bar, a cookie banner and a footer,
/// which readability drops.
pub const ARTICLE_HTML: &str = r#"<!DOCTYPE html>
<html><head><title>Ferris Goes Sailing</title></head>
<body>
<nav class="navigation"><a href="/">Home</a> <a href="/shop">Shop the merch store</a> <a href="/login">Log in</a></nav>
<div class="cookie-banner">We use cookies to improve your experience. Accept all cookies.</div>
<article>
<h1>Ferris Goes Sailing</h1>
<p>Ferris the crab set out from the harbour at dawn, carrying a small notebook of knots and a thermos of sea water. The wind was steady from the west and the little boat leaned gently as it left the breakwater behind.</p>
<p>By noon the coast was a thin grey line. Ferris checked the compass every quarter hour, wrote down the heading, and practised the bowline until it could be tied with eyes closed. The gulls followed for a while and then gave up.</p>
<h2>The storm</h2>
<p>In the afternoon the sky turned the colour of old pewter. Ferris reefed the sail, lashed the tiller and waited out the squall under a tarpaulin, counting the seconds between lightning and thunder to know how far away the storm had moved.</p>
<p>When the clouds broke, a rainbow stood over the water and Ferris turned for home, tired, wet and entirely happy with the day's sailing.</p>
</article>
<footer class="site-footer">Copyright 2026 Crab Media Group. Subscribe to our newsletter for weekly deals.</footer>
</body></html>"#;

/// One SearXNG-shaped JSON answer.
pub const SEARXNG_JSON: &str = r#"{"query": "rust", "number_of_results": 2, "results": [
  {"title": "Rust Programming Language", "url": "https://www.rust-lang.org/", "content": "A language empowering everyone to build reliable and efficient software.", "engine": "duckduckgo"},
  {"title": "The Rust Book", "url": "https://doc.rust-lang.org/book/", "content": "An introductory book about Rust.", "engine": "bing"},
  {"title": "Third", "url": "https://example.org/third", "content": "Not asked for."}
]}"#;

/// One request to a search route, as it came.
#[derive(Clone, Debug)]
pub struct SearchRequest {
    /// The path.
    pub path: String,
    /// The query string.
    pub query: String,
    /// The header lines, names in lower case (`authorization: Bearer k`).
    pub headers: Vec<String>,
    /// The body.
    pub body: String,
}

type Searches = Mutex<Vec<SearchRequest>>;

/// A Brave-shaped answer.
pub const BRAVE_JSON: &str = r#"{"type": "search", "web": {"results": [
  {"title": "Rust Programming Language", "url": "https://www.rust-lang.org/", "description": "A language empowering everyone."}
]}}"#;

/// A Jina-shaped answer.
pub const JINA_JSON: &str = r#"{"code": 200, "data": [
  {"title": "Rust Programming Language", "url": "https://www.rust-lang.org/", "description": "A language empowering everyone.", "content": ""}
]}"#;

/// `Name: value` with the name in lower case, without the line end.
fn header_line(line: &str) -> String {
    let line = line.trim_end();
    match line.split_once(':') {
        Some((name, value)) => format!("{}: {}", name.to_ascii_lowercase(), value.trim()),
        None => line.to_owned(),
    }
}

/// The site.
pub struct WebSite {
    port: u16,
    counts: Arc<Mutex<BTreeMap<String, usize>>>,
    searches: Arc<Searches>,
}

impl WebSite {
    /// Starts listening on a free port of 127.0.0.1.
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let counts = Arc::new(Mutex::new(BTreeMap::new()));
        let searches = Arc::new(Mutex::new(Vec::new()));
        let (thread_counts, thread_searches) = (Arc::clone(&counts), Arc::clone(&searches));
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let counts = Arc::clone(&thread_counts);
                let searches = Arc::clone(&thread_searches);
                std::thread::spawn(move || serve(stream, port, &counts, &searches));
            }
        });
        Self {
            port,
            counts,
            searches,
        }
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:PORT{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Requests for `path` so far.
    pub fn count(&self, path: &str) -> usize {
        self.counts.lock().unwrap().get(path).copied().unwrap_or(0)
    }

    /// Requests for any path so far.
    pub fn total(&self) -> usize {
        self.counts.lock().unwrap().values().sum()
    }

    /// The requests to the search routes (`/search`, `/tavily`, `/brave`, `/jina`).
    pub fn searches(&self) -> Vec<SearchRequest> {
        self.searches.lock().unwrap().clone()
    }
}

fn serve(
    stream: TcpStream,
    port: u16,
    counts: &Mutex<BTreeMap<String, usize>>,
    searches: &Searches,
) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    let mut headers = Vec::new();
    loop {
        let mut header = String::new();
        match reader.read_line(&mut header) {
            Ok(0) | Err(_) => break,
            Ok(_) if header == "\r\n" => break,
            Ok(_) => headers.push(header_line(&header)),
        }
    }
    let length = headers
        .iter()
        .find_map(|line| line.strip_prefix("content-length: "))
        .and_then(|value| value.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    if std::io::Read::read_exact(&mut reader, &mut body).is_err() {
        return;
    }
    let target = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("/")
        .to_owned();
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    *counts.lock().unwrap().entry(path.to_owned()).or_insert(0) += 1;
    let mut stream = stream;
    let redirect = |location: String| (302, "text/plain", Vec::new(), Some(location));
    let (status, content_type, body, location): (u16, &str, Vec<u8>, Option<String>) = match path {
        "/article" => (200, "text/html; charset=utf-8", ARTICLE_HTML.into(), None),
        "/count" => (200, "text/plain", b"counted page\n".to_vec(), None),
        "/json" => (200, "application/json", br#"{"answer": 42}"#.to_vec(), None),
        "/long" => (200, "text/plain", long_text().into_bytes(), None),
        "/doc.pdf" => (
            200,
            "application/pdf",
            b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n".to_vec(),
            None,
        ),
        "/missing" => (404, "text/plain", b"no such page\n".to_vec(), None),
        "/hop" => redirect("/hop2".to_owned()),
        "/hop2" => redirect(format!("http://127.0.0.1:{port}/article")),
        "/away" => redirect(format!("http://localhost:{port}/article")),
        "/to-loopback" => redirect(format!("http://127.0.0.1:{port}/secret")),
        "/to-hex" => redirect(format!("http://0x7f.0.0.1:{port}/secret")),
        "/search" | "/tavily" | "/brave" | "/jina" => {
            searches.lock().unwrap().push(SearchRequest {
                path: path.to_owned(),
                query: query.to_owned(),
                headers,
                body: String::from_utf8_lossy(&body).into_owned(),
            });
            let answer = match path {
                "/brave" => BRAVE_JSON,
                "/jina" => JINA_JSON,
                _ => SEARXNG_JSON,
            };
            (200, "application/json", answer.into(), None)
        }
        "/big" => {
            big_body(&mut stream);
            return;
        }
        "/slow" => {
            // Longer than any timeout the tests configure; the client gives up first.
            std::thread::sleep(Duration::from_secs(30));
            (200, "text/plain", b"too late\n".to_vec(), None)
        }
        _ => (404, "text/plain", b"not found\n".to_vec(), None),
    };
    let mut head = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if let Some(location) = location {
        head.push_str(&format!("Location: {location}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(&body);
}

/// 6 MB of text lines, in pieces; the client stops reading at its cap.
fn big_body(stream: &mut TcpStream) {
    const SIZE: usize = 6 * 1024 * 1024;
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {SIZE}\r\nConnection: close\r\n\r\n"
    );
    if stream.write_all(head.as_bytes()).is_err() {
        return;
    }
    let line = b"0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456\n";
    let piece: Vec<u8> = line.iter().copied().cycle().take(64 * 1024).collect();
    let mut sent = 0;
    while sent < SIZE {
        let take = piece.len().min(SIZE - sent);
        if stream.write_all(&piece[..take]).is_err() {
            return;
        }
        sent += take;
    }
}

/// About 10 KB of text: over the 4 KB at which a prompt goes to the summary model.
pub fn long_text() -> String {
    (1..=200)
        .map(|number| format!("Line {number} of the long page about tides and harbours.\n"))
        .collect()
}

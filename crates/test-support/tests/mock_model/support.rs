//! A raw HTTP/1.1 client over TCP, so the tests see the exact bytes the server sends (and
//! where a dropped connection stops), and SSE frame splitting.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use toolhost_test_support::MockModel;

/// What came back for one request.
#[derive(Debug)]
pub struct RawResponse {
    /// Every byte received; empty when the server closed without answering.
    pub raw: Vec<u8>,
    /// The status, 0 when no head arrived.
    pub status: u16,
    /// The headers, names lowercased.
    pub headers: BTreeMap<String, String>,
    /// The body, de-chunked.
    pub body: String,
    /// Whether the body ended as HTTP says (last chunk, or the whole content-length).
    pub complete: bool,
    /// From writing the request to the first response byte.
    pub first_byte_after: Option<Duration>,
}

impl RawResponse {
    /// The body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap()
    }

    /// The body's SSE frames, each with its blank line; an unfinished tail is left out.
    pub fn frames(&self) -> Vec<String> {
        let mut frames = Vec::new();
        let mut rest = self.body.as_str();
        while let Some(end) = rest.find("\n\n") {
            frames.push(rest[..end + 2].to_owned());
            rest = &rest[end + 2..];
        }
        frames
    }

    /// The body's SSE events as (event name, data parsed as JSON); `[DONE]` is a JSON string.
    pub fn events(&self) -> Vec<(Option<String>, Value)> {
        self.frames()
            .iter()
            .map(|frame| parse_frame(frame))
            .collect()
    }
}

/// One frame as (event name, data as JSON).
pub fn parse_frame(frame: &str) -> (Option<String>, Value) {
    let mut event = None;
    let mut data = None;
    for line in frame.lines() {
        if let Some(name) = line.strip_prefix("event: ") {
            event = Some(name.to_owned());
        } else if let Some(text) = line.strip_prefix("data: ") {
            assert!(data.is_none(), "one data line per frame: {frame:?}");
            data = Some(match text {
                "[DONE]" => Value::String("[DONE]".to_owned()),
                json => serde_json::from_str(json).unwrap(),
            });
        } else {
            assert!(line.is_empty(), "unexpected line {line:?} in {frame:?}");
        }
    }
    (event, data.unwrap())
}

/// POSTs `body` to `path` on `model`.
pub async fn post(model: &MockModel, path: &str, body: &Value) -> RawResponse {
    request(model, "POST", path, &body.to_string()).await
}

/// Sends one request with `connection: close` and reads until the server closes.
pub async fn request(model: &MockModel, method: &str, path: &str, body: &str) -> RawResponse {
    let address = model.url().trim_start_matches("http://").to_owned();
    let mut stream = TcpStream::connect(&address).await.unwrap();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nhost: {address}\r\ncontent-type: application/json\r\n\
         x-api-key: test-key\r\nconnection: close\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    let sent = Instant::now();
    let mut raw = Vec::new();
    let mut first_byte_after = None;
    let mut buffer = [0u8; 4096];
    loop {
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                first_byte_after.get_or_insert_with(|| sent.elapsed());
                raw.extend_from_slice(&buffer[..n]);
            }
        }
    }
    parse_response(raw, first_byte_after)
}

fn parse_response(raw: Vec<u8>, first_byte_after: Option<Duration>) -> RawResponse {
    let text = String::from_utf8(raw.clone()).unwrap();
    let Some(head_end) = text.find("\r\n\r\n") else {
        return RawResponse {
            raw,
            status: 0,
            headers: BTreeMap::new(),
            body: String::new(),
            complete: false,
            first_byte_after,
        };
    };
    let mut lines = text[..head_end].split("\r\n");
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: BTreeMap<String, String> = lines
        .map(|line| {
            let (name, value) = line.split_once(": ").unwrap();
            (name.to_ascii_lowercase(), value.to_owned())
        })
        .collect();
    let rest = &text[head_end + 4..];
    let (body, complete) =
        if headers.get("transfer-encoding").map(String::as_str) == Some("chunked") {
            dechunk(rest)
        } else {
            let length: usize = headers["content-length"].parse().unwrap();
            (rest.to_owned(), rest.len() == length)
        };
    RawResponse {
        raw,
        status,
        headers,
        body,
        complete,
        first_byte_after,
    }
}

/// The data of a chunked body, and whether its last (empty) chunk arrived.
fn dechunk(mut rest: &str) -> (String, bool) {
    let mut body = String::new();
    loop {
        let Some(line_end) = rest.find("\r\n") else {
            return (body, false);
        };
        let size = usize::from_str_radix(&rest[..line_end], 16).unwrap();
        rest = &rest[line_end + 2..];
        if size == 0 {
            return (body, rest == "\r\n");
        }
        if rest.len() < size + 2 {
            body.push_str(&rest[..size.min(rest.len())]);
            return (body, false);
        }
        body.push_str(&rest[..size]);
        rest = &rest[size + 2..];
    }
}

/// One kept-alive connection, for requests one after another as a pooling client sends them.
pub struct KeptAlive {
    stream: TcpStream,
    address: String,
}

impl KeptAlive {
    /// Connects to `model`.
    pub async fn connect(model: &MockModel) -> Self {
        let address = model.url().trim_start_matches("http://").to_owned();
        let stream = TcpStream::connect(&address).await.unwrap();
        Self { stream, address }
    }

    /// POSTs `body` (without `"stream": true`, so the answer has a content-length) and reads
    /// the response; the raw bytes are empty when the server closed instead.
    pub async fn post(&mut self, path: &str, body: &Value) -> RawResponse {
        let body = body.to_string();
        let head = format!(
            "POST {path} HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\n\
             content-length: {}\r\n\r\n",
            self.address,
            body.len()
        );
        self.stream.write_all(head.as_bytes()).await.unwrap();
        self.stream.write_all(body.as_bytes()).await.unwrap();
        let mut raw = Vec::new();
        let mut buffer = [0u8; 4096];
        loop {
            if let Some(length) = whole_response_length(&raw) {
                assert_eq!(raw.len(), length, "one response at a time");
                break;
            }
            match self.stream.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(n) => raw.extend_from_slice(&buffer[..n]),
            }
        }
        parse_response(raw, None)
    }
}

/// The length of a response with a content-length once all of it is in `raw`.
fn whole_response_length(raw: &[u8]) -> Option<usize> {
    let text = std::str::from_utf8(raw).ok()?;
    let head_end = text.find("\r\n\r\n")? + 4;
    let length: usize = text[..head_end]
        .lines()
        .find_map(|line| {
            line.to_ascii_lowercase()
                .strip_prefix("content-length: ")
                .map(str::to_owned)
        })?
        .trim()
        .parse()
        .ok()?;
    (raw.len() >= head_end + length).then_some(head_end + length)
}

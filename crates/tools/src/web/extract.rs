//! What WebFetch makes of a body: HTML becomes readable Markdown (readability extraction of
//! the main content, the whole page converted when extraction finds none), text and JSON pass
//! through, PDFs and other binaries are refused.

/// The kinds of body WebFetch reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyKind {
    /// An HTML (or XHTML) page.
    Html,
    /// Plain text, JSON, XML, CSS, JavaScript, Markdown…
    Text,
}

/// What the body is, from its `Content-Type` and its first bytes; `Err` names a kind WebFetch
/// cannot read, for the model.
pub fn body_kind(content_type: &str, head: &[u8]) -> Result<BodyKind, String> {
    let mime = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if head.starts_with(b"%PDF-") || mime == "application/pdf" {
        return Err("a PDF document".to_owned());
    }
    let textual = mime.starts_with("text/")
        || mime.ends_with("+json")
        || mime.ends_with("+xml")
        || matches!(
            mime.as_str(),
            "application/json"
                | "application/xml"
                | "application/javascript"
                | "application/ecmascript"
                | "application/x-javascript"
                | "application/x-ndjson"
                | "application/x-yaml"
                | "application/yaml"
                | "application/toml"
        );
    let looks_binary = head.iter().take(1024).any(|byte| *byte == 0);
    if (mime.is_empty() || textual) && !looks_binary {
        let html = mime == "text/html"
            || mime == "application/xhtml+xml"
            || (mime.is_empty() && looks_like_html(head));
        return Ok(if html { BodyKind::Html } else { BodyKind::Text });
    }
    Err(if mime.is_empty() {
        "binary data".to_owned()
    } else {
        format!("binary content ({mime})")
    })
}

fn looks_like_html(head: &[u8]) -> bool {
    let start = String::from_utf8_lossy(&head[..head.len().min(512)]).to_ascii_lowercase();
    let start = start.trim_start();
    start.starts_with("<!doctype html") || start.starts_with("<html")
}

/// An HTML page as Markdown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Readable {
    /// The page's title, when it has one.
    pub title: Option<String>,
    /// The content as Markdown.
    pub markdown: String,
    /// How it was made: `readability` (the main content) or `whole page`.
    pub method: &'static str,
}

/// The main content of `html` (fetched from `url`, which makes relative links absolute) as
/// Markdown; the whole page when readability finds no article in it.
pub fn readable_markdown(html: &str, url: &str) -> Readable {
    let config = dom_smoothie::Config {
        text_mode: dom_smoothie::TextMode::Markdown,
        ..dom_smoothie::Config::default()
    };
    let article = dom_smoothie::Readability::new(html, Some(url), Some(config))
        .and_then(|mut readability| readability.parse());
    if let Ok(article) = article {
        let markdown = article.text_content.trim().to_owned();
        if !markdown.is_empty() {
            return Readable {
                title: non_empty(article.title),
                markdown,
                method: "readability",
            };
        }
    }
    Readable {
        title: html_title(html),
        markdown: htmd::convert(html)
            .map(|markdown| markdown.trim().to_owned())
            .unwrap_or_else(|_| html.to_owned()),
        method: "whole page",
    }
}

fn non_empty(text: String) -> Option<String> {
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// The text of the first `<title>`, for pages readability cannot read.
fn html_title(html: &str) -> Option<String> {
    let lower = html.to_ascii_lowercase();
    let open = lower.find("<title")?;
    let start = open + lower[open..].find('>')? + 1;
    let end = start + lower[start..].find("</title")?;
    non_empty(html.get(start..end)?.to_owned())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn bodies_are_told_apart_by_type_and_first_bytes() {
        assert_eq!(
            body_kind("text/html; charset=utf-8", b"<p>"),
            Ok(BodyKind::Html)
        );
        assert_eq!(body_kind("application/json", b"{}"), Ok(BodyKind::Text));
        assert_eq!(body_kind("application/ld+json", b"{}"), Ok(BodyKind::Text));
        assert_eq!(body_kind("", b"<!DOCTYPE html><html>"), Ok(BodyKind::Html));
        assert_eq!(body_kind("", b"plain words"), Ok(BodyKind::Text));
        assert_eq!(
            body_kind("application/pdf", b"%PDF-1.7"),
            Err("a PDF document".to_owned())
        );
        assert_eq!(
            body_kind("text/plain", b"%PDF-1.4"),
            Err("a PDF document".to_owned())
        );
        assert_eq!(
            body_kind("image/png", b"\x89PNG"),
            Err("binary content (image/png)".to_owned())
        );
        assert_eq!(body_kind("", b"ab\0cd"), Err("binary data".to_owned()));
    }

    #[test]
    fn a_page_without_an_article_is_converted_whole() {
        let page = readable_markdown(
            "<html><head><title>Tiny</title></head><body><p>Hi <b>there</b></p></body></html>",
            "https://example.com/",
        );
        assert_eq!(page.title.as_deref(), Some("Tiny"));
        assert!(page.markdown.contains("**there**"), "{page:?}");
    }
}

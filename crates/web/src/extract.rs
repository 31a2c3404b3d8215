//! What WebFetch makes of a body: text in its declared character set (the `Content-Type`
//! charset, a byte-order mark, or an HTML `<meta charset>`; UTF-8 otherwise), HTML as
//! readable Markdown (readability extraction of the main content, the whole page converted
//! when extraction finds none), text and JSON as they are; PDFs and other binaries refused.

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

/// Bytes of an HTML page searched for a `<meta charset>`.
const META_CHARSET_BYTES: usize = 2048;

/// `body` as text, in the character set the response declares; invalid bytes become U+FFFD.
pub fn decode_text(body: &[u8], content_type: &str) -> String {
    let declared = charset_parameter(content_type).or_else(|| meta_charset(body));
    let encoding = declared
        .and_then(|label| encoding_rs::Encoding::for_label(label.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    // `decode` lets a byte-order mark win over the label, as browsers do.
    encoding.decode(body).0.into_owned()
}

fn charset_parameter(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|parameter| {
        let (name, value) = parameter.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches('"').to_owned())
    })
}

/// `<meta charset="x">` or `<meta http-equiv="Content-Type" content="…; charset=x">` near
/// the start of a page.
fn meta_charset(body: &[u8]) -> Option<String> {
    let head =
        String::from_utf8_lossy(&body[..body.len().min(META_CHARSET_BYTES)]).to_ascii_lowercase();
    let at = head.find("charset=")? + "charset=".len();
    let value: String = head[at..]
        .trim_start_matches(['"', '\''])
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
        .collect();
    (!value.is_empty()).then_some(value)
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
        // The converter readability uses (dom_query's), on the whole document: one HTML
        // parser in the binary, not two (each brings its tables of tag and attribute names).
        markdown: dom_query::Document::from(html).md(None).trim().to_owned(),
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
    fn text_is_decoded_in_its_declared_character_set() {
        assert_eq!(
            decode_text(b"caf\xe9", "text/plain; charset=ISO-8859-1"),
            "café"
        );
        assert_eq!(
            decode_text(b"<meta charset=\"windows-1252\"><p>\x93hi\x94", "text/html"),
            "<meta charset=\"windows-1252\"><p>\u{201c}hi\u{201d}"
        );
        assert!(
            decode_text(
                b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=Shift_JIS\">\x93\xfa",
                ""
            )
            .ends_with('\u{65e5}')
        );
        assert_eq!(decode_text("é".as_bytes(), "text/plain"), "é");
        assert_eq!(
            decode_text(b"\xef\xbb\xbfok", "text/plain; charset=latin1"),
            "ok"
        );
        assert_eq!(decode_text(b"bad \xff", "text/plain"), "bad \u{fffd}");
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

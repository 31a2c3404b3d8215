//! `WebFetch`: one URL, fetched through the private-network guard, as readable Markdown (or
//! the raw text), answered by a background model when a `prompt` asks about a long page.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolhost_core::{
    PermissionFamily, PermissionSubject, Sensitivity, ToolAnnotations, ToolContext, ToolError,
    ToolOutput, ToolSpec, TypedTool,
};

use super::cache::{CachedPage, PageCache, normalize_url, now_seconds};
use super::client::{Fetched, fetch};
use super::extract::{BodyKind, body_kind, decode_text, readable_markdown};
use super::guard::{CheckedUrl, GuardError, HostResolver, check_url, resolve_destination};
use super::summary::{SummaryRequest, WebSummarizer};
pub use toolhost_config::web::{DEFAULT_FETCH_TIMEOUT, MAX_CONTENT_CHARS, MAX_RESPONSE_BYTES};

/// Content longer than this is answered by the summary model when a `prompt` is given.
pub const SUMMARY_THRESHOLD_BYTES: usize = 4 * 1024;

/// The most characters of a page the summary model is given.
pub const MAX_SUMMARY_INPUT_CHARS: usize = 200_000;

/// Characters of an error page's content kept in the error.
const MAX_ERROR_PAGE_CHARS: usize = 2_000;

/// WebFetch's limits, cache, resolver and summary model (R42); `Default` gives the named
/// constants, no cache, the system resolver and no summary model.
#[derive(Clone, Default)]
pub struct WebFetchSettings {
    /// See [`DEFAULT_FETCH_TIMEOUT`]; `None` keeps it.
    pub timeout: Option<Duration>,
    /// See [`MAX_RESPONSE_BYTES`]; `None` keeps it.
    pub max_response_bytes: Option<usize>,
    /// See [`MAX_CONTENT_CHARS`]; `None` keeps it.
    pub max_content_chars: Option<usize>,
    /// Where fetched pages are kept; `None`: nothing is cached.
    pub cache: Option<PageCache>,
    /// How host names resolve (fixed entries, then the system resolver).
    pub resolver: HostResolver,
    /// The model that answers prompts about long pages.
    pub summarizer: Option<Arc<dyn WebSummarizer>>,
}

/// Parameters of `WebFetch`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WebFetchParams {
    /// The http:// or https:// URL to fetch.
    pub url: String,
    /// What you want to know from the page; a long page is then answered by a background
    /// model instead of being returned whole.
    pub prompt: Option<String>,
    /// `true`: the body as text, without extracting the readable part of HTML.
    pub raw: Option<bool>,
}

/// Fetches a URL.
pub struct WebFetch {
    settings: WebFetchSettings,
}

impl WebFetch {
    /// `WebFetch` with these settings.
    pub fn new(settings: WebFetchSettings) -> Self {
        Self { settings }
    }

    fn timeout(&self) -> Duration {
        self.settings.timeout.unwrap_or(DEFAULT_FETCH_TIMEOUT)
    }
}

impl TypedTool for WebFetch {
    type Params = WebFetchParams;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new(
            "WebFetch",
            format!(
                "Fetches a web page (http:// or https://, GET) and returns its readable content \
                 as Markdown with its title and final URL; text and JSON are returned as they \
                 are, PDFs and other binary files are refused. `raw: true` returns the body \
                 without extraction. With `prompt`, a long page is answered by a background \
                 model (when one is configured). Redirects are followed within the same host; \
                 a redirect to another host is reported so you can fetch that URL. Loopback, \
                 private and link-local addresses are refused unless the user allows the host. \
                 Limits: {} s, {} MB; pages are cached for 15 minutes.",
                self.timeout().as_secs(),
                self.settings
                    .max_response_bytes
                    .unwrap_or(MAX_RESPONSE_BYTES)
                    / (1024 * 1024),
            ),
        )
        .with_label("Fetch URL")
        .with_annotations(ToolAnnotations {
            open_world: true,
            ..ToolAnnotations::READ_ONLY
        })
        .with_sensitivity(Sensitivity::Safe)
        .with_family(PermissionFamily::Network)
    }

    /// The host, as domain rules name it; nothing for a URL the guard refuses anyway.
    fn permission_subject(&self, args: &Value) -> PermissionSubject {
        args.get("url")
            .and_then(Value::as_str)
            .and_then(|url| check_url(url).ok())
            .map_or(PermissionSubject::None, |checked| {
                PermissionSubject::Domain(checked.host)
            })
    }

    async fn run(&self, params: WebFetchParams, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let checked = check_url(&params.url).map_err(|error| ToolError::new(error.to_string()))?;
        let named = ctx.allows_explicitly(&PermissionSubject::Domain(checked.host.clone()));
        let cached = self
            .settings
            .cache
            .as_ref()
            .and_then(|cache| cache.get(&checked.url))
            .filter(|page| !page.private || named);
        let (page, from_cache) = match cached {
            Some(page) => (page, true),
            None => {
                let timeout = self.timeout();
                let work = self.fetch_page(&checked, named, &ctx);
                let page = tokio::select! {
                    biased;
                    () = ctx.cancellation().cancelled() => {
                        return Err(ToolError::new("WebFetch was cancelled"));
                    }
                    result = tokio::time::timeout(timeout, work) => result.map_err(|_| {
                        ToolError::new(format!(
                            "fetching {} timed out after {} s; try again later or another URL",
                            checked.url,
                            timeout.as_secs()
                        ))
                    })??,
                };
                match page {
                    FetchOutcome::Page(page) => (page, false),
                    FetchOutcome::Output(output) => return Ok(output),
                }
            }
        };
        self.render(&params, page, from_cache, &ctx).await
    }
}

/// A page, or a result already made (a redirect to another host).
enum FetchOutcome {
    Page(CachedPage),
    Output(ToolOutput),
}

impl WebFetch {
    async fn fetch_page(
        &self,
        checked: &CheckedUrl,
        named: bool,
        ctx: &ToolContext,
    ) -> Result<FetchOutcome, ToolError> {
        let error = |text: String| ToolError::new(text);
        let destination = resolve_destination(checked, &self.settings.resolver, named)
            .await
            .map_err(|guard| error(guard.to_string()))?;
        let max_bytes = self
            .settings
            .max_response_bytes
            .unwrap_or(MAX_RESPONSE_BYTES);
        let fetched = fetch(checked, &destination.pinned, max_bytes)
            .await
            .map_err(|fetch| error(fetch.to_string()))?;
        let page = match fetched {
            Fetched::OtherHost { from, to, status } => {
                self.refuse_private_target(&from, &to, status, ctx).await?;
                return Ok(FetchOutcome::Output(other_host_output(&from, &to, status)));
            }
            Fetched::Page(page) => page,
        };
        let body = decode_text(&page.body, &page.content_type);
        let cached = CachedPage {
            url: normalize_url(&checked.url).to_string(),
            final_url: page.final_url.to_string(),
            status: page.status,
            content_type: page.content_type,
            bytes: page.body.len(),
            body,
            cut_at_cap: page.cut_at_cap,
            private: destination.private,
            fetched_at: now_seconds(),
        };
        if let Some(cache) = &self.settings.cache
            && (200..300).contains(&cached.status)
            && let Err(problem) = cache.put(&cached)
        {
            // A cache that cannot be written is not worth failing the call for.
            tracing::warn!("WebFetch could not write its cache: {problem}");
        }
        Ok(FetchOutcome::Page(cached))
    }

    /// A redirect to another host that the guard would refuse (a private address no rule
    /// names) is an error now, rather than a URL for the model to try.
    async fn refuse_private_target(
        &self,
        from: &url::Url,
        to: &url::Url,
        status: u16,
        ctx: &ToolContext,
    ) -> Result<(), ToolError> {
        let Ok(target) = check_url(to.as_str()) else {
            return Ok(());
        };
        let named = ctx.allows_explicitly(&PermissionSubject::Domain(target.host.clone()));
        match resolve_destination(&target, &self.settings.resolver, named).await {
            Err(refusal @ GuardError::Private { .. }) => Err(ToolError::new(format!(
                "{from} redirected (HTTP {status}) to {to}, which is refused: {refusal}"
            ))),
            _ => Ok(()),
        }
    }

    async fn render(
        &self,
        params: &WebFetchParams,
        page: CachedPage,
        from_cache: bool,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let raw = params.raw.unwrap_or(false);
        let kind = body_kind(&page.content_type, page.body.as_bytes()).unwrap_or(BodyKind::Text);
        let (title, content, extraction) = match kind {
            BodyKind::Html if !raw => {
                let readable = readable_markdown(&page.body, &page.final_url);
                (readable.title, readable.markdown, readable.method)
            }
            _ => (None, page.body.clone(), if raw { "raw" } else { "text" }),
        };
        let mut head = format!("URL: {}\n", page.final_url);
        if let Some(title) = &title {
            let _ = writeln!(head, "Title: {title}");
        }
        // Tracking parameters and fragments are not a redirect: compare the normal forms.
        let redirected = url::Url::parse(&page.final_url)
            .map(|final_url| normalize_url(&final_url).as_str() != page.url)
            .unwrap_or(true);
        if redirected {
            let _ = writeln!(head, "(asked for {})", page.url);
        }
        if page.cut_at_cap {
            let _ = writeln!(
                head,
                "[The response was cut at the {} MB cap: only its first {} bytes were read.]",
                page.bytes / (1024 * 1024),
                page.bytes
            );
        }
        if from_cache {
            let _ = writeln!(
                head,
                "[From the cache: fetched {} s ago.]",
                now_seconds().saturating_sub(page.fetched_at)
            );
        }
        let mut details = json!({
            "url": page.url,
            "final_url": page.final_url,
            "status": page.status,
            "content_type": page.content_type,
            "title": title,
            "bytes": page.bytes,
            "cut_at_cap": page.cut_at_cap,
            "cached": from_cache,
            "extraction": extraction,
        });
        if page.status >= 400 {
            let (shown, _) = cut_to_chars(&content, MAX_ERROR_PAGE_CHARS);
            return Err(ToolError::new(format!(
                "{} answered HTTP {}.\n{head}\n{shown}",
                page.final_url, page.status
            ))
            .with_details(details));
        }
        let prompt = params
            .prompt
            .as_deref()
            .filter(|prompt| !prompt.trim().is_empty());
        if let Some(prompt) = prompt
            && content.len() > SUMMARY_THRESHOLD_BYTES
        {
            match &self.settings.summarizer {
                Some(summarizer) => {
                    let (input, _) = cut_to_chars(&content, MAX_SUMMARY_INPUT_CHARS);
                    let request = SummaryRequest {
                        url: &page.final_url,
                        title: title.as_deref(),
                        content: &input,
                        prompt,
                    };
                    match summarizer.answer(request, ctx.cancellation().clone()).await {
                        Ok(answer) => {
                            details["summarized_by"] = json!(summarizer.model());
                            let _ = writeln!(
                                head,
                                "[Answer by {} to the prompt, from the page's {} characters:]",
                                summarizer.model(),
                                content.chars().count()
                            );
                            return Ok(ToolOutput::text(format!("{head}\n{answer}\n"))
                                .with_details(details));
                        }
                        Err(problem) => {
                            let _ = writeln!(
                                head,
                                "[The summary model {} failed ({problem}); here is the page \
                                 itself: answer the prompt from it.]",
                                summarizer.model()
                            );
                        }
                    }
                }
                None => {
                    let _ = writeln!(
                        head,
                        "[No summary model is configured ([web] summary_model), so the page \
                         itself follows: answer the prompt from it.]"
                    );
                }
            }
        }
        let max_chars = self.settings.max_content_chars.unwrap_or(MAX_CONTENT_CHARS);
        let (shown, total) = cut_to_chars(&content, max_chars);
        let mut text = format!("{head}\n{}\n", shown.trim_end_matches('\n'));
        if let Some(total) = total {
            let _ = writeln!(
                text,
                "\n[Content cut at {max_chars} of {total} characters. Pass a `prompt` to have \
                 it answered, or fetch a more specific page.]"
            );
            details["content_cut_at_chars"] = json!(max_chars);
        }
        Ok(ToolOutput::text(text).with_details(details))
    }
}

/// The result for a redirect to another host: the new URL, to fetch again.
fn other_host_output(from: &url::Url, to: &url::Url, status: u16) -> ToolOutput {
    let text = format!(
        "{from} redirected (HTTP {status}) to another host: {to}\nWebFetch follows redirects \
         only within one host. To read it, call WebFetch again with that URL."
    );
    ToolOutput::text(text).with_details(json!({
        "url": from.as_str(),
        "redirect": to.as_str(),
        "status": status,
    }))
}

/// `text` cut to at most `max_chars` characters at a line end when there is one nearby, and
/// the whole length in characters when it was cut.
fn cut_to_chars(text: &str, max_chars: usize) -> (String, Option<usize>) {
    let Some((end, _)) = text.char_indices().nth(max_chars) else {
        return (text.to_owned(), None);
    };
    let line_end = text[..end]
        .rfind('\n')
        .filter(|at| *at >= end / 2)
        .unwrap_or(end);
    (text[..line_end].to_owned(), Some(text.chars().count()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_is_cut_at_a_line_end() {
        assert_eq!(cut_to_chars("short", 10), ("short".to_owned(), None));
        assert_eq!(
            cut_to_chars("line one\nline two\n", 12),
            ("line one".to_owned(), Some(18))
        );
        assert_eq!(cut_to_chars("éééééé", 3), ("ééé".to_owned(), Some(6)));
    }
}

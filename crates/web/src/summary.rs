//! The background model that answers a WebFetch `prompt` about a long page. toolhost-tools
//! knows no model provider: the agent crate implements [`WebSummarizer`] with its providers
//! (`[web] summary_model`) and hands it to the tool.

use tokio_util::sync::CancellationToken;

/// What the summary model is asked.
#[derive(Clone, Copy, Debug)]
pub struct SummaryRequest<'a> {
    /// The page's final URL.
    pub url: &'a str,
    /// Its title, when it has one.
    pub title: Option<&'a str>,
    /// The page as Markdown (or text), already cut to what the model may read.
    pub content: &'a str,
    /// What the calling model wants to know.
    pub prompt: &'a str,
}

/// Why the summary model gave no answer; WebFetch then returns the page itself with this.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SummaryError(pub String);

/// Answers a prompt about a page with a (small, fast) model.
#[async_trait::async_trait]
pub trait WebSummarizer: Send + Sync {
    /// The model's name, for the note in the result.
    fn model(&self) -> String;

    /// The model's answer to `request.prompt` from `request.content` alone.
    async fn answer(
        &self,
        request: SummaryRequest<'_>,
        cancel: CancellationToken,
    ) -> Result<String, SummaryError>;
}

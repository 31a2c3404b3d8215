//! `WebSearch`: numbered results (title, URL, snippet) from the first tier that is there —
//! the model provider's own search ([`NativeWebSearch`], implemented where the providers
//! live), then a configured search service ([`SearchService`]), else a result that says how
//! to configure one.

use std::fmt::Write as _;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolhost_core::{
    PermissionFamily, PermissionSubject, Sensitivity, ToolAnnotations, ToolContext, ToolError,
    ToolOutput, ToolSpec, TypedTool,
};

use super::search_service::{SearchHit, SearchService};

/// Results returned when the call does not say.
pub const DEFAULT_SEARCH_RESULTS: usize = 5;

/// The most results one call may ask for.
pub const MAX_SEARCH_RESULTS: usize = 20;

/// Characters of a snippet shown at most.
const MAX_SNIPPET_CHARS: usize = 500;

/// A model provider's own web search (Anthropic's `web_search` server tool, the OpenAI
/// Responses `web_search` tool), asked for results.
#[async_trait::async_trait]
pub trait NativeWebSearch: Send + Sync {
    /// What it is, for the result (`anthropic web_search`).
    fn name(&self) -> String;

    /// At most `count` results for `query`; `Err` says why, and the next tier is tried.
    async fn search(
        &self,
        query: &str,
        count: usize,
        cancel: CancellationToken,
    ) -> Result<Vec<SearchHit>, String>;
}

/// Where WebSearch finds results.
#[derive(Clone, Default)]
pub struct WebSearchSettings {
    /// The first tier: the provider's own search.
    pub native: Option<Arc<dyn NativeWebSearch>>,
    /// The second tier: `[web.search]`.
    pub service: Option<SearchService>,
}

/// Parameters of `WebSearch`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WebSearchParams {
    /// What to search the web for.
    pub query: String,
    /// How many results (1 to 20, default 5).
    #[schemars(range(min = 1, max = 20))]
    pub count: Option<usize>,
}

/// Searches the web.
pub struct WebSearch {
    settings: WebSearchSettings,
}

impl WebSearch {
    /// `WebSearch` over these tiers.
    pub fn new(settings: WebSearchSettings) -> Self {
        Self { settings }
    }
}

impl TypedTool for WebSearch {
    type Params = WebSearchParams;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new(
            "WebSearch",
            "Searches the web and returns numbered results, each with its title, URL and a \
             snippet. Use WebFetch to read a result.",
        )
        .with_label("Search the web")
        .with_annotations(ToolAnnotations {
            open_world: true,
            ..ToolAnnotations::READ_ONLY
        })
        .with_sensitivity(Sensitivity::Safe)
        .with_family(PermissionFamily::Network)
    }

    /// The search service's host, so that `WebFetch(domain:…)` deny rules apply to it.
    fn permission_subject(&self, _args: &Value) -> PermissionSubject {
        match (&self.settings.native, &self.settings.service) {
            (None, Some(service)) => service
                .host()
                .map_or(PermissionSubject::None, PermissionSubject::Domain),
            _ => PermissionSubject::None,
        }
    }

    async fn run(
        &self,
        params: WebSearchParams,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let query = params.query.trim();
        if query.is_empty() {
            return Err(ToolError::new("the query is empty: say what to search for"));
        }
        let count = params
            .count
            .unwrap_or(DEFAULT_SEARCH_RESULTS)
            .clamp(1, MAX_SEARCH_RESULTS);
        let mut failures: Vec<String> = Vec::new();
        if let Some(native) = &self.settings.native {
            match native
                .search(query, count, ctx.cancellation().clone())
                .await
            {
                Ok(hits) => return Ok(results(query, &native.name(), &hits)),
                Err(problem) => failures.push(format!("{}: {problem}", native.name())),
            }
        }
        if let Some(service) = &self.settings.service {
            let search = service.search(query, count);
            let found = tokio::select! {
                biased;
                () = ctx.cancellation().cancelled() => {
                    return Err(ToolError::new("WebSearch was cancelled"));
                }
                found = search => found,
            };
            match found {
                Ok(hits) => return Ok(results(query, service.provider.name(), &hits)),
                Err(problem) => failures.push(problem.to_string()),
            }
        }
        if failures.is_empty() {
            return Ok(unavailable());
        }
        Err(ToolError::new(format!(
            "WebSearch failed: {}",
            failures.join("; ")
        )))
    }
}

/// The numbered results.
fn results(query: &str, source: &str, hits: &[SearchHit]) -> ToolOutput {
    let mut text = format!("Results for \"{query}\" ({source}):\n");
    if hits.is_empty() {
        text.push_str("\nNo results. Try other words.\n");
    }
    for (number, hit) in hits.iter().enumerate() {
        let snippet: String = hit.snippet.chars().take(MAX_SNIPPET_CHARS).collect();
        let title = if hit.title.is_empty() {
            "(no title)"
        } else {
            &hit.title
        };
        let _ = write!(text, "\n{}. {title}\n   {}\n", number + 1, hit.url);
        if !snippet.is_empty() {
            let _ = writeln!(text, "   {}", snippet.replace('\n', " "));
        }
    }
    ToolOutput::text(text).with_details(json!({
        "query": query,
        "source": source,
        "results": hits.iter().map(|hit| json!({
            "title": hit.title,
            "url": hit.url,
            "snippet": hit.snippet,
        })).collect::<Vec<_>>(),
    }))
}

/// The third tier: no search is configured.
fn unavailable() -> ToolOutput {
    ToolOutput::text(concat!(
        "Web search is unavailable: the model provider offers no search of its own here and ",
        "no search service is configured. Tell the user; to enable it, add to ",
        ".toolhost/config.toml (or ~/.toolhost/config.toml):\n\n",
        "[web.search]\n",
        "provider = \"searxng\"              # or \"tavily\", \"brave\", \"jina\"\n",
        "url = \"http://localhost:8888\"     # SearXNG's address (the others have a default)\n",
        "api_key_env = \"TAVILY_API_KEY\"    # the variable holding the key (not for SearXNG)\n\n",
        "Meanwhile WebFetch can read a page whose URL you know.\n",
    ))
    .with_details(json!({"source": null, "results": []}))
}

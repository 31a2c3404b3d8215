//! `tool_search`: finds deferred tools and loads them for the following turns.

use std::fmt::Write as _;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{DeferredTools, LoadedTools, SearchHits, SessionLoads};
use crate::content::{ContentBlock, ToolOutput};
use crate::context::ToolContext;
use crate::error::ToolError;
use crate::spec::{Sensitivity, ToolAnnotations, ToolSpec, schema_for_params};
use crate::tool::TypedTool;

/// The tool's name.
pub const TOOL_SEARCH_NAME: &str = "tool_search";

/// How many tools a search loads when the call does not say.
pub const DEFAULT_SEARCH_RESULTS: usize = 5;

/// The most tools one search loads.
pub const MAX_SEARCH_RESULTS: usize = 20;

/// Parameters of `tool_search`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ToolSearchParams {
    /// Words describing the tool you need (what it does, its parameters, its server), the
    /// exact name of a deferred tool, or `select:NAME,NAME` to load tools by name.
    pub query: String,
    /// How many tools to load at most (default 5, at most 20).
    #[schemars(range(min = 1, max = 20))]
    pub max_results: Option<usize>,
}

/// The spec of `tool_search` over `deferred`, its parameters included: what it costs to offer.
pub(super) fn full_spec(deferred: &[ToolSpec]) -> ToolSpec {
    describe(deferred).with_parameters(schema_for_params::<ToolSearchParams>())
}

/// `tool_search`'s spec without its parameters: its description names every deferred tool.
fn describe(deferred: &[ToolSpec]) -> ToolSpec {
    let names: Vec<&str> = deferred.iter().map(|spec| spec.name.as_str()).collect();
    let description = format!(
        "Finds deferred tools and loads them: their definitions are not sent until loaded, \
         and a loaded tool can be called from your next turn on. Query with words of what \
         the tool does (its name, description, parameters or server), a tool's exact name, \
         or select:NAME,NAME to load tools by name. The {} deferred tools: {}.",
        names.len(),
        names.join(", ")
    );
    ToolSpec::new(TOOL_SEARCH_NAME, description)
        .with_label("Tool search")
        .with_annotations(ToolAnnotations::READ_ONLY)
        .with_sensitivity(Sensitivity::Safe)
}

/// Whose loaded set a call changes.
#[derive(Debug)]
enum Scope {
    /// One conversation's (an agent run).
    Conversation(Arc<LoadedTools>),
    /// The calling session's (a server with many clients).
    Sessions(Arc<SessionLoads>),
}

/// The `tool_search` tool.
#[derive(Debug)]
pub struct ToolSearch {
    /// The set its description names (a changed set is a new `ToolSearch`, registered anew).
    deferred: Arc<DeferredTools>,
    scope: Scope,
}

impl ToolSearch {
    /// Loads into `loaded`, the one conversation's set.
    pub fn for_conversation(loaded: Arc<LoadedTools>) -> Self {
        Self {
            deferred: loaded.deferred(),
            scope: Scope::Conversation(loaded),
        }
    }

    /// Loads into the calling session's set of `loads`.
    pub fn for_sessions(loads: Arc<SessionLoads>) -> Self {
        Self {
            deferred: loads.deferred(),
            scope: Scope::Sessions(loads),
        }
    }

    fn loaded_for(&self, ctx: &ToolContext) -> Arc<LoadedTools> {
        match &self.scope {
            Scope::Conversation(loaded) => Arc::clone(loaded),
            Scope::Sessions(loads) => {
                loads.session(ctx.session().session_id.as_deref().unwrap_or_default())
            }
        }
    }
}

impl TypedTool for ToolSearch {
    type Params = ToolSearchParams;

    fn describe(&self) -> ToolSpec {
        describe(self.deferred.specs())
    }

    async fn run(
        &self,
        params: ToolSearchParams,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let limit = params
            .max_results
            .unwrap_or(DEFAULT_SEARCH_RESULTS)
            .clamp(1, MAX_SEARCH_RESULTS);
        // The session's set, which may be newer than the one this tool was described with.
        let loaded = self.loaded_for(&ctx);
        let deferred = loaded.deferred();
        let found = match deferred.search(&params.query, limit) {
            SearchHits::Found(found) => found,
            SearchHits::UnknownNames(names) => {
                return Err(ToolError::new(format!(
                    "No deferred tool is named {}. Use names from this tool's description, or \
                     search with words.",
                    names.join(", ")
                )));
            }
        };
        if found.is_empty() {
            return Ok(ToolOutput::text(format!(
                "No deferred tool matches '{}'. Try other words (what the tool does, its \
                 server), or select:NAME with a name from this tool's description.",
                params.query
            ))
            .with_details(json!({"query": params.query, "loaded": [], "matches": []})));
        }
        let newly = loaded.load(found.iter().map(|spec| spec.name.as_str()));
        let mut text = format!(
            "Loaded {} tool(s); call them from now on as you would any other tool:",
            found.len()
        );
        for spec in &found {
            let _ = write!(text, "\n- {}: {}", spec.name, first_line(&spec.description));
            if let Some(signature) = parameter_names(&spec.parameters) {
                let _ = write!(text, " (parameters: {signature})");
            }
        }
        let matches: Vec<&str> = found.iter().map(|spec| spec.name.as_str()).collect();
        // The references let a provider that defers tools natively load the definitions
        // itself, from this result, leaving the tools list (and its cache) as it was.
        let mut output = ToolOutput::text(text);
        output.content.extend(
            matches
                .iter()
                .map(|name| ContentBlock::tool_reference(*name)),
        );
        Ok(output.with_details(json!({
            "query": params.query,
            "matches": matches,
            "loaded": newly,
        })))
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default().trim()
}

/// `path, offset?` from a schema's top-level properties (`?` marks the optional ones).
fn parameter_names(schema: &Value) -> Option<String> {
    let properties = schema.get("properties")?.as_object()?;
    if properties.is_empty() {
        return None;
    }
    let required = schema.get("required").and_then(Value::as_array);
    let names: Vec<String> = properties
        .keys()
        .map(|name| {
            let is_required =
                required.is_some_and(|list| list.iter().any(|item| item.as_str() == Some(name)));
            if is_required {
                name.clone()
            } else {
                format!("{name}?")
            }
        })
        .collect();
    Some(names.join(", "))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::origin::ToolOrigin;
    use crate::registry::ToolRegistry;

    fn deferred() -> Arc<DeferredTools> {
        Arc::new(DeferredTools::new(vec![
            ToolSpec::new("mcp__git__log", "Shows the commit log.")
                .with_origin(ToolOrigin::mcp("git"))
                .with_parameters(json!({
                    "type": "object",
                    "properties": {"repo": {"type": "string"}, "max": {"type": "integer"}},
                    "required": ["repo"],
                })),
            ToolSpec::new("mcp__web__fetch", "Fetches a page.").with_origin(ToolOrigin::mcp("web")),
        ]))
    }

    #[tokio::test]
    async fn a_search_loads_what_it_finds_through_the_pipeline() {
        let loaded = Arc::new(LoadedTools::new(deferred()));
        let registry = ToolRegistry::new();
        registry
            .register(ToolSearch::for_conversation(Arc::clone(&loaded)))
            .unwrap();
        let result = registry
            .execute(
                "1",
                TOOL_SEARCH_NAME,
                json!({"query": "commit history log"}),
            )
            .await;
        assert!(!result.is_error, "{}", result.text());
        assert_eq!(
            result.text(),
            "Loaded 1 tool(s); call them from now on as you would any other tool:\n\
             - mcp__git__log: Shows the commit log. (parameters: repo, max?)"
        );
        assert_eq!(loaded.names(), ["mcp__git__log"]);
        assert_eq!(
            result.content[1..],
            [ContentBlock::tool_reference("mcp__git__log")]
        );

        let unknown = registry
            .execute("2", TOOL_SEARCH_NAME, json!({"query": "select:nope"}))
            .await;
        assert!(unknown.is_error);
        assert!(
            unknown
                .text()
                .starts_with("No deferred tool is named nope.")
        );
    }

    #[tokio::test]
    async fn each_session_of_a_server_loads_for_itself() {
        let loads = Arc::new(SessionLoads::new(deferred()));
        let registry = ToolRegistry::new();
        registry
            .register(ToolSearch::for_sessions(Arc::clone(&loads)))
            .unwrap();
        let in_session = |id: &str| crate::context::CallOptions {
            session: Arc::new(crate::session::SessionInfo {
                session_id: Some(id.to_owned()),
                model: None,
                ..crate::session::SessionInfo::default()
            }),
            ..crate::context::CallOptions::default()
        };
        let query = json!({"query": "select:mcp__web__fetch"});
        let result = registry
            .execute_with("1", TOOL_SEARCH_NAME, query, in_session("mcp-1"))
            .await;
        assert!(!result.is_error, "{}", result.text());
        assert_eq!(loads.session("mcp-1").names(), ["mcp__web__fetch"]);
        assert_eq!(loads.session("mcp-2").names(), Vec::<String>::new());
        loads.forget("mcp-1");
        assert_eq!(loads.session("mcp-1").names(), Vec::<String>::new());
    }

    #[test]
    fn the_description_names_every_deferred_tool() {
        let tool = ToolSearch::for_sessions(Arc::new(SessionLoads::new(deferred())));
        let spec = tool.describe();
        assert!(
            spec.description
                .ends_with("The 2 deferred tools: mcp__git__log, mcp__web__fetch."),
            "{}",
            spec.description
        );
    }
}

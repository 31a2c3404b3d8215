//! Deferred tools: when the definitions of the offered tools would take more than a budget of
//! the model's context, only the built-ins and the tools marked always-loaded are sent in
//! full; the rest are *deferred*, named in the description of the [`ToolSearch`] tool, and
//! sent from the turn after `tool_search` loads them.
//!
//! The pieces:
//! - [`DeferralPolicy`] decides, from the specs, which tools are deferred;
//! - [`DeferredTools`] is that set with its search index (BM25 over name words, the MCP
//!   server's name, the description and the parameter names; an exact name and
//!   `select:NAME,NAME` always hit);
//! - [`LoadedTools`] is what one conversation has loaded, and gives the specs to offer on the
//!   next request (a new `Arc` only when the loaded set changed, so a provider that caches
//!   rendered tools by `Arc` identity renders them once per change);
//! - [`ToolSearch`] is the tool the model calls; it is registered like any other tool, so its
//!   calls go through the one pipeline, and so do the calls of the tools it loads.
//!
//! Deferral only decides what is *sent*: a deferred tool stays registered, and a call to it
//! (a model that guessed the name, an MCP client that knows it) runs as any other call would.

mod bm25;
mod loaded;
mod tool_search;

use std::collections::HashMap;

use crate::definitions::DefinitionFormat;
use crate::origin::ToolOrigin;
use crate::spec::ToolSpec;

pub use loaded::{LoadedTools, SessionLoads};
pub use tool_search::{
    DEFAULT_SEARCH_RESULTS, MAX_SEARCH_RESULTS, TOOL_SEARCH_NAME, ToolSearch, ToolSearchParams,
};

/// The share of the model's context window the offered tools' definitions may take before
/// tools are deferred, when `[tools] defer_threshold` does not say.
pub const DEFAULT_DEFER_SHARE: f64 = 0.1;

/// The budget when the model's context window is not known (an MCP server's clients): a
/// tenth of 128 000 tokens, a common window.
pub const DEFAULT_DEFER_THRESHOLD_TOKENS: u64 = 12_800;

/// How many characters of definition JSON count as one token in the estimate (the usual
/// rule of thumb for English and JSON; the budget is a threshold, not a bill).
const CHARS_PER_TOKEN: usize = 4;

/// Which tools to defer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeferralPolicy {
    /// Tools are deferred when their definitions take more than this many tokens (estimated).
    pub threshold_tokens: u64,
    /// Tools never deferred: a tool's exact name, or `mcp__SERVER` for every tool of that MCP
    /// server (as permission rules name them).
    pub always_loaded: Vec<String>,
}

impl DeferralPolicy {
    /// Defer past `threshold_tokens`, with no tool marked always-loaded.
    pub fn new(threshold_tokens: u64) -> Self {
        Self {
            threshold_tokens,
            always_loaded: Vec::new(),
        }
    }

    /// The same policy, never deferring the tools `always_loaded` names.
    #[must_use]
    pub fn with_always_loaded(mut self, always_loaded: Vec<String>) -> Self {
        self.always_loaded = always_loaded;
        self
    }

    /// The tools of `specs` to defer, or `None` when their definitions fit the budget or
    /// nothing could be deferred. Built-ins (the program's own tools) are never deferred:
    /// they are few, and the model's guidance names them.
    ///
    /// Nothing is deferred either when the deferrable definitions are smaller than
    /// `tool_search`'s own: offering it would cost more context than it saves, and a small
    /// model given a search tool beside a handful of others calls it for the wrong things.
    pub fn plan(&self, specs: &[ToolSpec]) -> Option<DeferredTools> {
        if estimate_tokens(specs) <= self.threshold_tokens {
            return None;
        }
        let deferred: Vec<ToolSpec> = specs
            .iter()
            .filter(|spec| spec.origin.is_foreign() && !self.keeps_loaded(spec))
            .cloned()
            .collect();
        let search_costs = estimate_tokens(&[tool_search::full_spec(&deferred)]);
        (!deferred.is_empty() && estimate_tokens(&deferred) > search_costs)
            .then(|| DeferredTools::new(deferred))
    }

    fn keeps_loaded(&self, spec: &ToolSpec) -> bool {
        self.always_loaded.iter().any(|entry| {
            *entry == spec.name
                || matches!(&spec.origin, ToolOrigin::Mcp { server }
                    if entry.strip_prefix("mcp__") == Some(server.as_str()))
        })
    }
}

/// The estimated tokens of `specs`' definitions as a model is sent them.
pub fn estimate_tokens(specs: &[ToolSpec]) -> u64 {
    let chars: usize = specs
        .iter()
        .map(|spec| DefinitionFormat::OpenAi.render(spec).to_string().len())
        .sum();
    (chars / CHARS_PER_TOKEN) as u64
}

/// The deferred tools of one tool set, searchable.
#[derive(Debug)]
pub struct DeferredTools {
    specs: Vec<ToolSpec>,
    positions: HashMap<String, usize>,
    index: bm25::Bm25Index,
}

/// What a search found.
#[derive(Debug, PartialEq)]
pub enum SearchHits<'a> {
    /// These tools, best first.
    Found(Vec<&'a ToolSpec>),
    /// `select:` named tools that are not deferred (unknown, or sent in full already).
    UnknownNames(Vec<String>),
}

impl DeferredTools {
    /// These tools, deferred.
    pub fn new(specs: Vec<ToolSpec>) -> Self {
        let positions = specs
            .iter()
            .enumerate()
            .map(|(position, spec)| (spec.name.clone(), position))
            .collect();
        let index = bm25::Bm25Index::new(&specs);
        Self {
            specs,
            positions,
            index,
        }
    }

    /// The deferred tools, in their registration order.
    pub fn specs(&self) -> &[ToolSpec] {
        &self.specs
    }

    /// Whether the tool of that name is deferred.
    pub fn contains(&self, name: &str) -> bool {
        self.positions.contains_key(name)
    }

    /// The deferred tool of that name.
    pub fn get(&self, name: &str) -> Option<&ToolSpec> {
        self.positions
            .get(name)
            .map(|&position| &self.specs[position])
    }

    /// The tools that best match `query`, at most `limit`: `select:A,B` names tools exactly;
    /// a query that is a deferred tool's name finds that tool; anything else is ranked by
    /// BM25.
    pub fn search(&self, query: &str, limit: usize) -> SearchHits<'_> {
        let query = query.trim();
        if let Some(names) = query.strip_prefix("select:") {
            let names: Vec<&str> = names
                .split(',')
                .map(str::trim)
                .filter(|name| !name.is_empty())
                .collect();
            let unknown: Vec<String> = names
                .iter()
                .filter(|name| !self.contains(name))
                .map(|name| (*name).to_owned())
                .collect();
            if !unknown.is_empty() {
                return SearchHits::UnknownNames(unknown);
            }
            return SearchHits::Found(names.iter().filter_map(|name| self.get(name)).collect());
        }
        if let Some(exact) = self.get(query) {
            return SearchHits::Found(vec![exact]);
        }
        SearchHits::Found(
            self.index
                .rank(query)
                .into_iter()
                .take(limit)
                .map(|(position, _)| &self.specs[position])
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn mcp(server: &str, tool: &str, description: &str) -> ToolSpec {
        ToolSpec::new(format!("mcp__{server}__{tool}"), description)
            .with_origin(ToolOrigin::mcp(server))
    }

    fn names(hits: SearchHits<'_>) -> Vec<String> {
        match hits {
            SearchHits::Found(specs) => specs.iter().map(|spec| spec.name.clone()).collect(),
            SearchHits::UnknownNames(names) => panic!("unknown names {names:?}"),
        }
    }

    /// A description long enough that deferring its tool saves more than `tool_search` costs.
    fn long(sentence: &str) -> String {
        sentence.repeat(80)
    }

    #[test]
    fn nothing_is_deferred_while_the_definitions_fit() {
        let specs = vec![mcp(
            "git",
            "status",
            &long("Shows the working tree status. "),
        )];
        assert_eq!(
            DeferralPolicy::new(10_000)
                .plan(&specs)
                .map(|d| d.specs.len()),
            None
        );
        assert_eq!(
            DeferralPolicy::new(0).plan(&specs).map(|d| d.specs.len()),
            Some(1)
        );
    }

    #[test]
    fn built_ins_and_always_loaded_tools_are_never_deferred() {
        let specs = vec![
            ToolSpec::new("Read", "Reads a file."),
            mcp("git", "status", &long("Shows the status. ")),
            mcp("git", "log", &long("Shows the log. ")),
            mcp("web", "fetch", &long("Fetches a page. ")),
            ToolSpec::new("lint", long("Lints. ")).with_origin(ToolOrigin::custom("/t/lint.js")),
        ];
        let policy =
            DeferralPolicy::new(0).with_always_loaded(vec!["mcp__git".into(), "lint".into()]);
        let deferred = policy.plan(&specs).expect("something is deferred");
        let deferred: Vec<&str> = deferred.specs().iter().map(|s| s.name.as_str()).collect();
        assert_eq!(deferred, ["mcp__web__fetch"]);
    }

    #[test]
    fn tools_smaller_than_tool_search_itself_are_not_deferred() {
        // Three short tools past a small budget: deferring them would offer a tool_search
        // bigger than what it hides.
        let specs: Vec<ToolSpec> = (0..3)
            .map(|n| mcp("git", &format!("op{n}"), "Runs one git operation."))
            .collect();
        assert!(estimate_tokens(&specs) > 50);
        assert_eq!(
            DeferralPolicy::new(50).plan(&specs).map(|d| d.specs.len()),
            None
        );
        // The same tools with long descriptions are worth deferring.
        let specs: Vec<ToolSpec> = (0..3)
            .map(|n| mcp("git", &format!("op{n}"), &long("Runs one git operation. ")))
            .collect();
        assert_eq!(
            DeferralPolicy::new(50).plan(&specs).map(|d| d.specs.len()),
            Some(3)
        );
    }

    #[test]
    fn exact_names_and_select_always_hit() {
        let deferred = DeferredTools::new(vec![
            mcp("git", "status", "Shows the working tree status."),
            mcp("git", "log", "Shows the commit log."),
            mcp("web", "fetch", "Fetches a web page."),
        ]);
        assert_eq!(
            names(deferred.search("mcp__git__log", 5)),
            ["mcp__git__log"]
        );
        assert_eq!(
            names(deferred.search("select:mcp__web__fetch, mcp__git__status", 1)),
            ["mcp__web__fetch", "mcp__git__status"]
        );
        assert_eq!(
            deferred.search("select:mcp__git__nope", 5),
            SearchHits::UnknownNames(vec!["mcp__git__nope".into()])
        );
        assert_eq!(names(deferred.search("commit log", 5)), ["mcp__git__log"]);
        assert_eq!(names(deferred.search("git", 1)).len(), 1);
    }
}

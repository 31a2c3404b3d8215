//! Okapi BM25 over tool definitions: small enough to read in one sitting, so no crate.
//!
//! A tool's document is the words of its name (weighted ×3: a name is the strongest hint),
//! of its MCP server's name (×2), of its description and of its parameters' names. Words are
//! lower-cased runs of letters and digits, with `camelCase` and `snake_case` split, so that
//! `getWeather`, `get_weather` and "get the weather" share the words `get` and `weather`.

use std::collections::HashMap;

use serde_json::Value;

use crate::spec::ToolSpec;

/// Term-frequency saturation: how quickly repeating a word stops adding to the score.
const K1: f64 = 1.2;
/// How much a long document is penalised against the average length.
const B: f64 = 0.75;
/// How many times a word of the tool's name counts.
const NAME_WEIGHT: usize = 3;
/// How many times a word of the MCP server's name counts.
const SERVER_WEIGHT: usize = 2;

/// An index of documents (tools, by position) that ranks them for a query.
#[derive(Debug, Default)]
pub(crate) struct Bm25Index {
    /// Per document, how often each word occurs.
    documents: Vec<HashMap<String, usize>>,
    /// Per document, how many words it has.
    lengths: Vec<usize>,
    /// How many documents hold each word.
    document_frequency: HashMap<String, usize>,
    average_length: f64,
}

impl Bm25Index {
    /// An index of `specs`, in their order.
    pub(crate) fn new(specs: &[ToolSpec]) -> Self {
        let mut index = Self::default();
        for spec in specs {
            let mut counts: HashMap<String, usize> = HashMap::new();
            let mut length = 0;
            for (word, weight) in document_words(spec) {
                *counts.entry(word).or_default() += weight;
                length += weight;
            }
            for word in counts.keys() {
                *index.document_frequency.entry(word.clone()).or_default() += 1;
            }
            index.documents.push(counts);
            index.lengths.push(length);
        }
        let total: usize = index.lengths.iter().sum();
        index.average_length = total as f64 / index.documents.len().max(1) as f64;
        index
    }

    /// The documents that share a word with `query`, best first, as (position, score); ties
    /// keep the documents' order.
    pub(crate) fn rank(&self, query: &str) -> Vec<(usize, f64)> {
        let mut words = words(query);
        words.sort();
        words.dedup();
        let count = self.documents.len() as f64;
        let mut scored: Vec<(usize, f64)> = self
            .documents
            .iter()
            .zip(&self.lengths)
            .enumerate()
            .filter_map(|(position, (counts, &length))| {
                let score: f64 = words
                    .iter()
                    .filter_map(|word| {
                        let frequency = *counts.get(word)? as f64;
                        let holders = self.document_frequency[word] as f64;
                        let idf = ((count - holders + 0.5) / (holders + 0.5)).ln_1p();
                        let norm = K1 * (1.0 - B + B * length as f64 / self.average_length);
                        Some(idf * frequency * (K1 + 1.0) / (frequency + norm))
                    })
                    .sum();
                (score > 0.0).then_some((position, score))
            })
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored
    }
}

/// The words of a tool's document with their weights.
fn document_words(spec: &ToolSpec) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = words(&spec.name)
        .into_iter()
        .map(|word| (word, NAME_WEIGHT))
        .collect();
    if let Some(server) = spec.origin.mcp_server() {
        out.extend(words(server).into_iter().map(|word| (word, SERVER_WEIGHT)));
    }
    out.extend(words(&spec.description).into_iter().map(|word| (word, 1)));
    if let Some(properties) = spec.parameters.get("properties").and_then(Value::as_object) {
        for name in properties.keys() {
            out.extend(words(name).into_iter().map(|word| (word, 1)));
        }
    }
    out
}

/// Lower-cased words of `text`: runs of letters and digits, split where a lower-case letter
/// or digit is followed by an upper-case one (`readFile` → `read`, `file`).
pub(crate) fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for c in text.chars() {
        if !c.is_alphanumeric() {
            flush(&mut current, &mut out);
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower {
            flush(&mut current, &mut out);
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        current.extend(c.to_lowercase());
    }
    flush(&mut current, &mut out);
    out
}

fn flush(current: &mut String, out: &mut Vec<String>) {
    if !current.is_empty() {
        out.push(std::mem::take(current));
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;
    use crate::origin::ToolOrigin;

    fn tool(name: &str, description: &str, params: &[&str]) -> ToolSpec {
        let properties: serde_json::Map<String, Value> = params
            .iter()
            .map(|param| ((*param).to_owned(), json!({"type": "string"})))
            .collect();
        ToolSpec::new(name, description)
            .with_parameters(json!({"type": "object", "properties": properties}))
    }

    fn best(index: &Bm25Index, specs: &[ToolSpec], query: &str) -> Option<String> {
        index
            .rank(query)
            .first()
            .map(|(position, _)| specs[*position].name.clone())
    }

    #[test]
    fn words_split_case_and_separators() {
        assert_eq!(
            words("mcp__github__createIssue v2-API"),
            ["mcp", "github", "create", "issue", "v2", "api"]
        );
        assert_eq!(words("HTTPServer"), ["httpserver"]);
    }

    #[test]
    fn words_of_the_description_params_and_server_find_the_tool() {
        let specs = vec![
            tool("get_forecast", "Weather forecast for a city.", &["city"]),
            tool(
                "send_mail",
                "Sends an email message.",
                &["recipient", "subject"],
            ),
            tool("list_items", "Lists things.", &["cursor"])
                .with_origin(ToolOrigin::mcp("inventory")),
        ];
        let index = Bm25Index::new(&specs);
        assert_eq!(
            best(&index, &specs, "weather").as_deref(),
            Some("get_forecast")
        );
        assert_eq!(
            best(&index, &specs, "recipient").as_deref(),
            Some("send_mail")
        );
        assert_eq!(
            best(&index, &specs, "Inventory").as_deref(),
            Some("list_items")
        );
        assert_eq!(
            best(&index, &specs, "sendMail").as_deref(),
            Some("send_mail")
        );
        assert_eq!(best(&index, &specs, "nothing here"), None);
    }

    #[test]
    fn a_word_in_the_name_outranks_the_same_word_in_a_description() {
        let specs = vec![
            tool("archive_files", "Moves old issues out of the way.", &[]),
            tool("issue_create", "Opens a ticket.", &[]),
        ];
        let index = Bm25Index::new(&specs);
        assert_eq!(
            best(&index, &specs, "issue").as_deref(),
            Some("issue_create")
        );
    }

    #[test]
    fn a_rare_word_outweighs_a_common_one() {
        let specs = vec![
            tool("a", "file read", &[]),
            tool("b", "file write", &[]),
            tool("c", "file delete", &[]),
        ];
        let index = Bm25Index::new(&specs);
        assert_eq!(best(&index, &specs, "file delete").as_deref(), Some("c"));
    }
}

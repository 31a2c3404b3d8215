//! The message for an unknown tool name (R10): what exists, and what was probably meant.

/// Below this similarity a name is not offered as a suggestion.
const MIN_SIMILARITY: f64 = 0.7;

/// "Unknown tool 'Raed'. Did you mean 'Read'? Available tools: ..." for `requested`.
pub(crate) fn unknown_tool_message<'a>(
    requested: &str,
    available: impl Iterator<Item = &'a str> + Clone,
) -> String {
    let mut message = format!("Unknown tool '{requested}'.");
    if let Some(suggestion) = closest_name(requested, available.clone()) {
        message.push_str(&format!(" Did you mean '{suggestion}'?"));
    }
    let names: Vec<&str> = available.collect();
    if names.is_empty() {
        message.push_str(" No tools are available.");
    } else {
        message.push_str(&format!(" Available tools: {}.", names.join(", ")));
    }
    message
}

fn closest_name<'a>(requested: &str, available: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let wanted = requested.to_lowercase();
    available
        .map(|name| {
            let candidate = name.to_lowercase();
            let score = if candidate == wanted {
                1.0
            } else {
                strsim::jaro_winkler(&wanted, &candidate)
            };
            (name, score)
        })
        .filter(|(_, score)| *score >= MIN_SIMILARITY)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(name, _)| name)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: [&str; 4] = ["Read", "Write", "Edit", "Grep"];

    #[test]
    fn suggests_the_closest_name() {
        let message = unknown_tool_message("Raed", NAMES.iter().copied());
        assert_eq!(
            message,
            "Unknown tool 'Raed'. Did you mean 'Read'? Available tools: Read, Write, Edit, Grep."
        );
    }

    #[test]
    fn suggests_a_name_that_differs_only_in_case() {
        let message = unknown_tool_message("grep", NAMES.iter().copied());
        assert!(message.contains("Did you mean 'Grep'?"), "{message}");
    }

    #[test]
    fn offers_nothing_for_an_unrelated_name() {
        let message = unknown_tool_message("xyzzy", NAMES.iter().copied());
        assert!(!message.contains("Did you mean"), "{message}");
    }

    #[test]
    fn says_when_no_tool_exists() {
        let message = unknown_tool_message("Read", std::iter::empty());
        assert_eq!(message, "Unknown tool 'Read'. No tools are available.");
    }
}

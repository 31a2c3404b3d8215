//! `mcp__<server>__<tool>` names that every model provider accepts (R29).
//!
//! Providers accept `^[A-Za-z0-9_-]{1,64}$`. Characters outside that set become `_`, runs of
//! `__` in the server part collapse to one `_` and a trailing `_` is dropped (so that
//! `mcp__server` permission rules find exactly that server's tools), and a name over 64 bytes, or one that another tool already has, keeps its first
//! bytes and ends with `_` and eight hex digits of a hash of the original server and tool
//! names: the same tool gets the same name in every session.

use std::collections::{BTreeMap, BTreeSet};

use sha2::{Digest, Sha256};

/// The longest tool name providers accept.
pub const MAX_TOOL_NAME_BYTES: usize = 64;

/// Hex digits of the hash suffix added on overflow or collision.
const HASH_SUFFIX_DIGITS: usize = 8;

/// `name` with every character outside `[A-Za-z0-9_-]` replaced by `_`.
pub fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The server part of tool names: sanitised, without `__`, not ending in `_`, never empty.
/// So the first `__` after `mcp__<server>` always ends the server part, whatever the tool's
/// name starts with (`mcp__git___private` is `git`'s tool `_private`), and a permission rule
/// `mcp__git` names exactly the tools of `git` (servers `git_` and `git` share the segment, so
/// their tools are both named, and told apart by a hash suffix if they collide).
pub fn server_segment(server: &str) -> String {
    let mut segment = sanitize(server);
    while segment.contains("__") {
        segment = segment.replace("__", "_");
    }
    let kept = segment.trim_end_matches('_').len();
    segment.truncate(kept);
    if segment.is_empty() {
        segment.push_str("server");
    }
    segment
}

/// Gives each (server, tool) pair a unique provider-safe name, and the same name again when
/// asked again (a server that restarts or changes its list keeps its tools' names).
#[derive(Debug, Default)]
pub struct ToolNamer {
    assigned: BTreeMap<(String, String), String>,
    taken: BTreeSet<String>,
}

impl ToolNamer {
    /// A namer that avoids nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The name of `tool` of `server`.
    pub fn name(&mut self, server: &str, tool: &str) -> String {
        let key = (server.to_owned(), tool.to_owned());
        if let Some(name) = self.assigned.get(&key) {
            return name.clone();
        }
        let plain = format!("mcp__{}__{}", server_segment(server), sanitize(tool));
        let mut name = plain.clone();
        let mut attempt = 0u32;
        while name.len() > MAX_TOOL_NAME_BYTES || self.taken.contains(&name) {
            name = with_hash_suffix(&plain, server, tool, attempt);
            attempt += 1;
        }
        self.taken.insert(name.clone());
        self.assigned.insert(key, name.clone());
        name
    }
}

fn with_hash_suffix(plain: &str, server: &str, tool: &str, attempt: u32) -> String {
    let mut hasher = Sha256::new();
    hasher.update(server.as_bytes());
    hasher.update([0]);
    hasher.update(tool.as_bytes());
    if attempt > 0 {
        hasher.update(attempt.to_le_bytes());
    }
    let digest = hasher.finalize();
    let hex: String = digest
        .iter()
        .take(HASH_SUFFIX_DIGITS / 2)
        .map(|byte| format!("{byte:02x}"))
        .collect();
    // `plain` is ASCII after sanitising, so any byte index is a character boundary.
    let keep = plain
        .len()
        .min(MAX_TOOL_NAME_BYTES - HASH_SUFFIX_DIGITS - 1);
    format!("{}_{hex}", &plain[..keep])
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn names_are_sanitised_and_keep_the_server_findable() {
        let mut namer = ToolNamer::new();
        assert_eq!(
            namer.name("github", "create_issue"),
            "mcp__github__create_issue"
        );
        assert_eq!(
            namer.name("my.server", "get/file v2"),
            "mcp__my_server__get_file_v2"
        );
        assert_eq!(namer.name("a__b", "t"), "mcp__a_b__t");
        assert_eq!(namer.name("", "t"), "mcp__server__t");
        // No segment ends in `_`: the first `__` after it always ends the server part.
        assert_eq!(namer.name("git_", "x"), "mcp__git__x");
        assert_eq!(namer.name("git", "_private"), "mcp__git___private");
        assert_eq!(namer.name("tools!", "t"), "mcp__tools__t");
    }

    #[test]
    fn long_names_are_capped_with_a_stable_hash() {
        let tool = "x".repeat(100);
        let name = ToolNamer::new().name("server", &tool);
        assert_eq!(name.len(), MAX_TOOL_NAME_BYTES);
        assert!(name.starts_with("mcp__server__xxx"), "{name}");
        assert_eq!(name, ToolNamer::new().name("server", &tool));
        let other = ToolNamer::new().name("server", &"x".repeat(101));
        assert_ne!(name, other);
    }

    #[test]
    fn collisions_get_a_hash_suffix_and_repeats_the_same_name() {
        let mut namer = ToolNamer::new();
        let first = namer.name("s", "read.file");
        let second = namer.name("s", "read file");
        assert_eq!(first, "mcp__s__read_file");
        assert_ne!(first, second);
        assert!(second.starts_with("mcp__s__read_file_"), "{second}");
        assert_eq!(namer.name("s", "read file"), second);
        assert!(second.len() <= MAX_TOOL_NAME_BYTES);
    }
}

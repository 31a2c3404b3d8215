//! Prefix matching of permission rules such as `Bash(git status:*)`, per simple command.

use super::parse::SimpleCommand;
use super::words::Word;

/// Whether `argv` starts with `rule_words` (`["git", "status", "-s"]` matches
/// `["git", "status"]`). Words compare exactly: `/usr/bin/git` is not `git`.
pub fn command_matches_prefix(argv: &[&str], rule_words: &[&str]) -> bool {
    !rule_words.is_empty()
        && argv.len() >= rule_words.len()
        && argv[..rule_words.len()] == *rule_words
}

impl SimpleCommand {
    /// The words when all are statically known.
    pub fn argv(&self) -> Option<Vec<&str>> {
        self.words.iter().map(Word::as_static).collect()
    }

    /// The program as written, when static.
    pub fn program(&self) -> Option<&str> {
        self.words.first().and_then(Word::as_static)
    }

    /// Whether this command matches a prefix rule. Conservative: the words the rule covers
    /// must be static, and a command with variable assignments (`PAGER=x git log`, which can
    /// change what the program does) never matches.
    pub fn matches_prefix(&self, rule_words: &[&str]) -> bool {
        if !self.assignments.is_empty() || self.words.len() < rule_words.len() {
            return false;
        }
        let covered: Option<Vec<&str>> = self.words[..rule_words.len()]
            .iter()
            .map(Word::as_static)
            .collect();
        covered.is_some_and(|covered| command_matches_prefix(&covered, rule_words))
    }
}

//! The configuration file given with `--config`: limits that override the named defaults.

use std::path::Path;

use anyhow::Context as _;
use serde::Deserialize;

/// What a configuration file may set.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Limits that override the built-in defaults (R42).
    pub limits: Limits,
}

/// Overrides of the named limits.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Tool results longer than this many characters are truncated (default 50 000).
    pub max_result_chars: Option<usize>,
}

impl Config {
    /// Reads `path`, or the defaults when there is none; the error names the file, the line
    /// and the problem.
    pub fn load(path: Option<&Path>) -> anyhow::Result<Self> {
        let Some(path) = path else {
            return Ok(Self::default());
        };
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read config file {}", path.display()))?;
        toml::from_str(&text).map_err(|error| {
            let location = error
                .span()
                .map(|span| {
                    let line = text[..span.start].matches('\n').count() + 1;
                    format!(" line {line}:")
                })
                .unwrap_or_default();
            anyhow::anyhow!(
                "invalid config file {}:{location} {}",
                path.display(),
                error.message()
            )
        })
    }
}

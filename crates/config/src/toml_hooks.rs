//! Hooks as the TOML configuration writes them (`[[hooks.PreToolUse]]`, and an agent's
//! `[[agents.NAME.hooks.PreToolUse]]`): a hook that cannot run is left out with a warning, the
//! others run.

use std::collections::BTreeMap;
use std::time::Duration;

use regex::Regex;
use serde::Deserialize;
use toml::Spanned;

use super::{DEFAULT_HOOK_TIMEOUT, HookCommand, HooksConfig};

/// `[hooks]`: each event's hooks.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct FileHooks {
    #[serde(rename = "PreToolUse")]
    pre_tool_use: Vec<Spanned<FileHook>>,
    #[serde(rename = "PostToolUse")]
    post_tool_use: Vec<Spanned<FileHook>>,
    #[serde(rename = "PreCompact")]
    pre_compact: Vec<Spanned<FileHook>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileHook {
    matcher: Option<String>,
    command: String,
    /// Seconds.
    timeout: Option<u64>,
}

impl FileHooks {
    /// Takes out the PreCompact hooks (an agent's are not run), giving the offset of the first.
    pub(crate) fn take_pre_compact(&mut self) -> Option<usize> {
        let first = self.pre_compact.first().map(|hook| hook.span().start);
        self.pre_compact.clear();
        first
    }
}

/// Adds the hooks of `file` to `target`; `origin` gives `path:line` of an offset in the file.
/// Returns a warning for each hook left out.
pub(crate) fn add_file_hooks(
    file: FileHooks,
    target: &mut HooksConfig,
    origin: &dyn Fn(usize) -> String,
) -> Vec<String> {
    let mut warnings = Vec::new();
    for (event, hooks, target) in [
        ("PreToolUse", file.pre_tool_use, &mut target.pre_tool_use),
        ("PostToolUse", file.post_tool_use, &mut target.post_tool_use),
        ("PreCompact", file.pre_compact, &mut target.pre_compact),
    ] {
        for hook in hooks {
            let start = hook.span().start;
            let FileHook {
                matcher,
                command,
                timeout,
            } = hook.into_inner();
            let problem = match compile_matcher(matcher.as_deref()) {
                Err(message) => Err(message),
                Ok(matcher_regex) => hook_problem(
                    event,
                    matcher.as_deref(),
                    matcher_regex.as_ref(),
                    &command,
                    timeout,
                )
                .map_or(Ok(matcher_regex), Err),
            };
            let matcher_regex = match problem {
                Ok(regex) => regex,
                Err(message) => {
                    warnings.push(format!(
                        "{}: {message}; this {event} hook is left out",
                        origin(start)
                    ));
                    continue;
                }
            };
            target.push(HookCommand {
                matcher,
                matcher_regex,
                command,
                timeout: timeout.map_or(DEFAULT_HOOK_TIMEOUT, Duration::from_secs),
                origin: origin(start),
                env: BTreeMap::new(),
            });
        }
    }
    warnings
}

/// What a PreCompact hook's matcher is matched against.
const COMPACT_TRIGGERS: [&str; 2] = ["manual", "auto"];

/// Why a TOML hook cannot run as written, if it cannot.
fn hook_problem(
    event: &str,
    matcher: Option<&str>,
    regex: Option<&Regex>,
    command: &str,
    timeout: Option<u64>,
) -> Option<String> {
    // A PreCompact matcher is matched against the trigger, not a tool: one that fits neither
    // trigger is a typo that would never run.
    if let (true, Some(regex), Some(pattern)) = (event == "PreCompact", regex, matcher)
        && !COMPACT_TRIGGERS
            .iter()
            .any(|trigger| regex.is_match(trigger))
    {
        return Some(format!(
            "the PreCompact matcher '{pattern}' matches neither trigger: use \"manual\", \
             \"auto\", or leave it out for both"
        ));
    }
    if command.trim().is_empty() {
        return Some("the hook's command is empty: give the shell command to run".to_owned());
    }
    if timeout == Some(0) {
        return Some(
            "a hook timeout of 0 seconds would stop every run: give at least 1".to_owned(),
        );
    }
    None
}

/// `None` or `*` or empty: every tool. Otherwise a regex that must match the whole name.
pub(crate) fn compile_matcher(matcher: Option<&str>) -> Result<Option<Regex>, String> {
    match matcher.map(str::trim) {
        None | Some("" | "*") => Ok(None),
        Some(pattern) => Regex::new(&format!("^(?:{pattern})$"))
            .map(Some)
            .map_err(|error| {
                format!("the hook matcher '{pattern}' is not a valid regular expression: {error}")
            }),
    }
}

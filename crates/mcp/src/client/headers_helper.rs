//! Claude Code's `headersHelper`: a shell command run each time toolhost connects to a remote
//! server, whose stdout is a JSON object of HTTP headers sent over the configured `headers`
//! (a token a script fetches, short-lived, never written in a file).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use toolhost_exec::{ProcessSpec, Termination};

/// How long a helper may run before the connection gives up on it (R42); the server's
/// `startup_timeout` bounds it too.
pub const HEADERS_HELPER_TIMEOUT: Duration = Duration::from_secs(10);

/// How much of a helper's output is read: headers are small.
const HEADERS_HELPER_OUTPUT_CAP: usize = 64 * 1024;

/// `headers` with the helper's headers over them. The helper runs with `bash -c` in
/// `workspace` through the process helper (clean environment, own process group, timeout),
/// told the server's name and URL as Claude Code tells them
/// (`CLAUDE_CODE_MCP_SERVER_NAME`, `CLAUDE_CODE_MCP_SERVER_URL`). `Err` says what went wrong
/// (it failed, timed out, or printed something that is not a JSON object of strings).
pub(super) async fn with_helper_headers(
    headers: &BTreeMap<String, String>,
    helper: Option<&str>,
    (server, url): (&str, &str),
    workspace: &Path,
) -> Result<BTreeMap<String, String>, String> {
    let Some(helper) = helper else {
        return Ok(headers.clone());
    };
    let outcome = ProcessSpec::bash(helper)
        .working_dir(workspace)
        .env("CLAUDE_CODE_MCP_SERVER_NAME", server)
        .env("CLAUDE_CODE_MCP_SERVER_URL", url)
        .timeout(HEADERS_HELPER_TIMEOUT)
        .output_cap(HEADERS_HELPER_OUTPUT_CAP)
        .run()
        .await
        .map_err(|error| format!("its headersHelper `{helper}` could not run: {error}"))?;
    let stderr = outcome.stderr.text.trim();
    match (outcome.termination, outcome.exit_code) {
        (Termination::Exited, Some(0)) => {}
        (Termination::TimedOut, _) => {
            return Err(format!(
                "its headersHelper `{helper}` did not finish within {}s",
                HEADERS_HELPER_TIMEOUT.as_secs()
            ));
        }
        (Termination::Cancelled, _) => {
            return Err(format!("its headersHelper `{helper}` was cancelled"));
        }
        (Termination::Exited, code) => {
            let status =
                code.map_or_else(|| "was killed".to_owned(), |code| format!("exited {code}"));
            let said = if stderr.is_empty() {
                String::new()
            } else {
                format!(": {stderr}")
            };
            return Err(format!("its headersHelper `{helper}` {status}{said}"));
        }
    }
    let helper_headers = parse_headers(&outcome.stdout.text)
        .map_err(|problem| format!("its headersHelper `{helper}` {problem}"))?;
    let mut merged = headers.clone();
    merged.extend(helper_headers);
    Ok(merged)
}

/// The helper's stdout as headers: a JSON object whose values are strings.
fn parse_headers(stdout: &str) -> Result<BTreeMap<String, String>, String> {
    const SHAPE: &str = "a JSON object of header names and string values, such as \
                         {\"Authorization\": \"Bearer …\"}";
    let value: serde_json::Value = serde_json::from_str(stdout.trim()).map_err(|error| {
        let shown: String = stdout.trim().chars().take(80).collect();
        format!("printed '{shown}', which is not JSON ({error}); it must print {SHAPE}")
    })?;
    let serde_json::Value::Object(object) = value else {
        return Err(format!("printed {value}, not {SHAPE}"));
    };
    object
        .into_iter()
        .map(|(name, value)| match value {
            serde_json::Value::String(text) => Ok((name, text)),
            other => Err(format!(
                "gave the header '{name}' the value {other}, which is not a string; it must \
                 print {SHAPE}"
            )),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn only_an_object_of_strings_is_headers() {
        let headers = parse_headers(" {\"X-Key\": \"k\", \"X-Team\": \"t\"}\n").unwrap();
        assert_eq!(headers["X-Key"], "k");
        assert_eq!(headers.len(), 2);
        assert!(parse_headers("token-123").unwrap_err().contains("not JSON"));
        assert!(
            parse_headers("[\"a\"]")
                .unwrap_err()
                .contains("not a JSON object")
        );
        assert!(
            parse_headers("{\"X-Count\": 3}")
                .unwrap_err()
                .contains("'X-Count' the value 3")
        );
    }
}

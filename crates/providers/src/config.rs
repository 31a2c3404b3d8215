//! How to reach a model: the wire format, the URL, the key, the timeouts and the retry policy.
//!
//! [`Api`], [`Timeouts`] and [`RetryPolicy`] deserialize (with unknown fields refused) so that
//! the agent's configuration can embed them; durations are written as whole seconds (`300`)
//! or in humantime form (`"5m"`, `"1500ms"`).

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use toolhost_config::providers::Api;

/// The named timeouts of one model request.
///
/// The defaults suit a slow local model on a CPU as well as a hosted one: a 1,500-token
/// prompt takes such a model ~25 s before its first token, a long one several minutes, so
/// the first byte may take 5 minutes; once streaming, a pause of 5 minutes means the server
/// is stuck.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Timeouts {
    /// Establishing the connection (TCP and TLS). Default 30 s.
    #[serde(with = "duration_serde")]
    pub connect: Duration,
    /// From sending the request to the first byte of the response body (the server reads
    /// the whole prompt first). Default 5 min.
    #[serde(with = "duration_serde")]
    pub first_byte: Duration,
    /// The longest silence between two pieces of a streaming response. Default 5 min.
    #[serde(with = "duration_serde")]
    pub idle: Duration,
    /// One whole attempt, from sending to the last event. Default 30 min.
    #[serde(with = "duration_serde")]
    pub request: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(30),
            first_byte: Duration::from_secs(5 * 60),
            idle: Duration::from_secs(5 * 60),
            request: Duration::from_secs(30 * 60),
        }
    }
}

/// When and how often a failed request is tried again.
///
/// Rate limits (429), timeouts and conflicts (408, 409), server errors (5xx, Anthropic's 529
/// "overloaded"), a connection that fails before the first byte of the response, and error
/// events of the same kinds inside a stream are retried up to `max_attempts` requests in all,
/// waiting `initial_delay`, then twice that, and so on up to `max_delay`, each with ±20 %
/// jitter — or what the server asked for in `retry-after-ms` / `retry-after` (capped at
/// `max_delay`). A stream that breaks after it has begun is restarted once, right away.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RetryPolicy {
    /// The most requests for one response, the first included; 1 turns retries off.
    /// Default 5.
    pub max_attempts: u32,
    /// The wait before the first retry. Default 1 s.
    #[serde(with = "duration_serde")]
    pub initial_delay: Duration,
    /// The longest wait between two attempts, the server's `retry-after` included. Default 60 s.
    #[serde(with = "duration_serde")]
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 5,
            initial_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(60),
        }
    }
}

/// Everything needed to talk to one model.
#[derive(Clone, PartialEq)]
pub struct ProviderConfig {
    /// The provider's name as configured (`openai`, `anthropic`, `local`); errors name it.
    pub name: String,
    /// The wire format.
    pub api: Api,
    /// The API's root: `https://api.openai.com/v1` for the OpenAI formats (the path
    /// `/chat/completions` or `/responses` is appended), `https://api.anthropic.com` for
    /// Anthropic (`/v1/messages` is appended).
    pub base_url: String,
    /// The key, already resolved from the environment; `None` sends no key (local servers).
    pub api_key: Option<String>,
    /// The model to ask.
    pub model: String,
    /// Extra HTTP headers sent with every request.
    pub headers: BTreeMap<String, String>,
    /// The model's context window in tokens, when known.
    pub context_window: Option<u64>,
    /// The default most tokens of an answer (a request may ask for another). Anthropic
    /// requires one; it gets [`DEFAULT_ANTHROPIC_MAX_OUTPUT_TOKENS`] when this is `None`.
    pub max_output_tokens: Option<u32>,
    /// The named timeouts.
    pub timeouts: Timeouts,
    /// The retry policy.
    pub retry: RetryPolicy,
    /// Whether to place Anthropic prompt-cache breakpoints (ignored by the other formats,
    /// whose caches need no markers).
    pub prompt_cache: bool,
    /// Whether deferred tools use the API's own deferred loading where the format has it:
    /// every tool sent, the deferred ones with `defer_loading`, loaded by `tool_search`'s
    /// results — Anthropic's `tool_reference` blocks (Claude Sonnet 4.5, Haiku 4.5, Opus 4.5
    /// and later), the Responses API's `tool_search_output` items (its client-executed tool
    /// search, gpt-5.4 and later). `false` sends only the loaded tools, appended as they
    /// load, as chat completions always does.
    pub native_tool_search: bool,
    /// The sampling temperature sent with every request; `None` sends none (the server's
    /// default). 0 makes a local model's answers repeatable.
    pub temperature: Option<f32>,
}

/// The `max_tokens` sent to Anthropic when neither the request nor the configuration gives one.
pub const DEFAULT_ANTHROPIC_MAX_OUTPUT_TOKENS: u32 = 8192;

/// The conventional OpenAI API root.
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";

/// The conventional Anthropic API root.
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";

impl ProviderConfig {
    /// A configuration with the defaults for everything but these four.
    pub fn new(
        name: impl Into<String>,
        api: Api,
        base_url: impl Into<String>,
        model: impl Into<String>,
    ) -> Self {
        Self {
            name: name.into(),
            api,
            base_url: base_url.into(),
            api_key: None,
            model: model.into(),
            headers: BTreeMap::new(),
            context_window: None,
            max_output_tokens: None,
            timeouts: Timeouts::default(),
            retry: RetryPolicy::default(),
            prompt_cache: true,
            native_tool_search: true,
            temperature: None,
        }
    }

    /// OpenAI chat completions at `https://api.openai.com/v1`, named `openai`.
    pub fn openai(model: impl Into<String>) -> Self {
        Self::new("openai", Api::OpenAiChat, OPENAI_BASE_URL, model)
    }

    /// Anthropic messages at `https://api.anthropic.com`, named `anthropic`.
    pub fn anthropic(model: impl Into<String>) -> Self {
        Self::new("anthropic", Api::Anthropic, ANTHROPIC_BASE_URL, model)
    }

    /// The same configuration with this key.
    pub fn with_api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }
}

/// Leaves the key out, so that a configuration can be logged.
impl fmt::Debug for ProviderConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderConfig")
            .field("name", &self.name)
            .field("api", &self.api)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("model", &self.model)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("context_window", &self.context_window)
            .field("max_output_tokens", &self.max_output_tokens)
            .field("timeouts", &self.timeouts)
            .field("retry", &self.retry)
            .field("prompt_cache", &self.prompt_cache)
            .field("native_tool_search", &self.native_tool_search)
            .finish()
    }
}

/// Durations as whole (or fractional) seconds or humantime strings; written as humantime.
mod duration_serde {
    use std::time::Duration;

    use serde::de::{self, Visitor};
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(duration: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&humantime::format_duration(*duration))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
        deserializer.deserialize_any(DurationVisitor)
    }

    struct DurationVisitor;

    impl Visitor<'_> for DurationVisitor {
        type Value = Duration;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a number of seconds or a duration such as \"90s\", \"5m\" or \"1500ms\"")
        }

        fn visit_u64<E: de::Error>(self, seconds: u64) -> Result<Duration, E> {
            Ok(Duration::from_secs(seconds))
        }

        fn visit_i64<E: de::Error>(self, seconds: i64) -> Result<Duration, E> {
            u64::try_from(seconds)
                .map(Duration::from_secs)
                .map_err(|_| E::custom(format!("a duration cannot be negative ({seconds})")))
        }

        fn visit_f64<E: de::Error>(self, seconds: f64) -> Result<Duration, E> {
            Duration::try_from_secs_f64(seconds)
                .map_err(|_| E::custom(format!("{seconds} is not a number of seconds")))
        }

        fn visit_str<E: de::Error>(self, text: &str) -> Result<Duration, E> {
            humantime::parse_duration(text.trim()).map_err(|error| {
                E::custom(format!(
                    "`{text}` is not a duration ({error}); write e.g. \"90s\", \"5m\" or 90"
                ))
            })
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn timeouts_read_seconds_and_humantime_and_keep_defaults() {
        let timeouts: Timeouts = serde_json::from_value(
            serde_json::json!({"connect": 5, "first_byte": "10m", "idle": "1500ms"}),
        )
        .unwrap();
        assert_eq!(
            timeouts,
            Timeouts {
                connect: Duration::from_secs(5),
                first_byte: Duration::from_secs(600),
                idle: Duration::from_millis(1500),
                request: Timeouts::default().request,
            }
        );
    }

    #[test]
    fn unknown_fields_and_bad_durations_are_refused() {
        let unknown = serde_json::from_value::<RetryPolicy>(serde_json::json!({"attempts": 3}));
        assert!(
            unknown
                .unwrap_err()
                .to_string()
                .contains("unknown field `attempts`")
        );
        let bad = serde_json::from_value::<Timeouts>(serde_json::json!({"idle": "soon"}));
        assert!(
            bad.unwrap_err()
                .to_string()
                .contains("`soon` is not a duration")
        );
    }

    #[test]
    fn api_names_are_the_config_names() {
        let apis: Vec<Api> =
            serde_json::from_str(r#"["openai-chat", "openai-responses", "anthropic"]"#).unwrap();
        assert_eq!(
            apis,
            [Api::OpenAiChat, Api::OpenAiResponses, Api::Anthropic]
        );
        assert_eq!(
            serde_json::to_string(&Api::OpenAiChat).unwrap(),
            r#""openai-chat""#
        );
        assert_eq!("anthropic".parse::<Api>(), Ok(Api::Anthropic));
        assert_eq!(
            "openai".parse::<Api>(),
            Err("unknown api `openai`: use openai-chat, openai-responses or anthropic".into())
        );
    }

    #[test]
    fn debug_output_hides_the_key() {
        let config = ProviderConfig::openai("gpt-5").with_api_key("sk-secret");
        let shown = format!("{config:?}");
        assert!(!shown.contains("sk-secret"), "{shown}");
        assert!(shown.contains("<redacted>"), "{shown}");
    }
}

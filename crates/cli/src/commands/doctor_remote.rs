//! The checks of `toolhost doctor` that look past this machine: the model provider a run would
//! use (does it answer, does it know the model) and the session store.

use std::path::Path;
use std::time::Duration;

use toolhost_config::model_choice::{ModelFlags, choose_provider};
use toolhost_config::{Api, Config};
use toolhost_session::views;

use super::doctor_check::{Check, Status};

/// How long the provider may take to list its models.
const PROVIDER_TIMEOUT: Duration = Duration::from_secs(5);

/// The provider `toolhost run` would choose, asked for its list of models (`GET /models`, the
/// request every OpenAI-compatible server and Anthropic answer): reachable, the key taken, the
/// model listed.
pub async fn provider_check(config: &Config) -> Check {
    let chosen = match choose_provider(config, &ModelFlags::default(), &|name| {
        std::env::var(name).ok()
    }) {
        Ok(chosen) => chosen,
        Err(error) => {
            return Check {
                status: Status::Warn,
                name: "provider",
                detail: format!("none for `toolhost run`: {error}"),
            };
        }
    };
    let entry = &chosen.entry;
    let (base, anthropic) = match entry.api {
        Api::Anthropic => (
            entry
                .base_url
                .as_deref()
                .unwrap_or("https://api.anthropic.com"),
            true,
        ),
        Api::OpenAiChat | Api::OpenAiResponses => (
            entry
                .base_url
                .as_deref()
                .unwrap_or("https://api.openai.com/v1"),
            false,
        ),
    };
    let url = if anthropic {
        format!("{}/v1/models", base.trim_end_matches('/'))
    } else {
        format!("{}/models", base.trim_end_matches('/'))
    };
    let named = format!("{} ({}, {})", entry.name, entry.api, base);
    let client = match reqwest::Client::builder().timeout(PROVIDER_TIMEOUT).build() {
        Ok(client) => client,
        Err(error) => return fail(&named, &format!("no HTTP client: {error}")),
    };
    let mut request = client.get(&url);
    for (header, value) in &entry.headers {
        request = request.header(header, value);
    }
    if let Some(key) = &chosen.api_key {
        request = if anthropic {
            request.header("x-api-key", key)
        } else {
            request.bearer_auth(key)
        };
    }
    if anthropic {
        request = request.header("anthropic-version", "2023-06-01");
    }
    let response = match request.send().await {
        Ok(response) => response,
        Err(error) => return fail(&named, &format!("unreachable: {}", root_cause(&error))),
    };
    let status = response.status();
    if status == reqwest::StatusCode::UNAUTHORIZED || status == reqwest::StatusCode::FORBIDDEN {
        return fail(
            &named,
            &format!(
                "reachable, but the key was refused (HTTP {status}): check the variable that holds it"
            ),
        );
    }
    if !status.is_success() {
        return Check {
            status: Status::Warn,
            name: "provider",
            detail: format!(
                "{named}: reachable, but GET {url} answered HTTP {status}: model {} not checked",
                chosen.model
            ),
        };
    }
    let models: Vec<String> = response
        .json::<serde_json::Value>()
        .await
        .ok()
        .and_then(|list| {
            list.get("data")?.as_array().map(|models| {
                models
                    .iter()
                    .filter_map(|model| model.get("id")?.as_str().map(str::to_owned))
                    .collect()
            })
        })
        .unwrap_or_default();
    if models.contains(&chosen.model) {
        Check {
            status: Status::Ok,
            name: "provider",
            detail: format!("{named}: reachable, model {} known", chosen.model),
        }
    } else {
        Check {
            status: Status::Warn,
            name: "provider",
            detail: format!(
                "{named}: reachable, but it does not list model {} (it lists: {}); a local \
                 server may answer any name",
                chosen.model,
                if models.is_empty() {
                    "nothing".to_owned()
                } else {
                    models.join(", ")
                }
            ),
        }
    }
}

fn fail(named: &str, detail: &str) -> Check {
    Check {
        status: Status::Fail,
        name: "provider",
        detail: format!("{named}: {detail}"),
    }
}

/// The innermost cause of an HTTP error ("Connection refused"), which says what happened.
fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = error;
    while let Some(source) = cause.source() {
        cause = source;
    }
    cause.to_string()
}

/// Where the session store is, and whether it opens.
pub fn sessions_check(config: &Config, home: Option<&Path>) -> Check {
    let path = match views::store_path(config, home) {
        Ok(path) => path,
        Err(error) => {
            return Check {
                status: Status::Warn,
                name: "sessions",
                detail: error.to_string(),
            };
        }
    };
    match views::open_existing(&path) {
        Ok(None) => Check {
            status: Status::Ok,
            name: "sessions",
            detail: format!(
                "{}: not created yet (the first run creates it)",
                path.display()
            ),
        },
        Ok(Some(store)) => match store.list(1_000_000, 0) {
            Ok(sessions) => Check {
                status: Status::Ok,
                name: "sessions",
                detail: format!("{}: {} sessions", path.display(), sessions.len()),
            },
            Err(error) => Check {
                status: Status::Fail,
                name: "sessions",
                detail: format!("{}: {error}", path.display()),
            },
        },
        Err(error) => Check {
            status: Status::Fail,
            name: "sessions",
            detail: error.to_string(),
        },
    }
}

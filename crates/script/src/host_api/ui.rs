//! `api.ui` and `api.hasUI`: a no-op until the host sets a real UI with
//! [`crate::ScriptHost::set_ui_context`] (R32).

use serde_json::Value;

/// A question a tool asks the person in front of the UI.
#[derive(Clone, Debug, PartialEq)]
pub enum UiRequest {
    /// Yes or no.
    Confirm {
        /// The question's title.
        title: String,
        /// Its text.
        message: String,
    },
    /// One of several options.
    Select {
        /// The question's title.
        title: String,
        /// The options, in order.
        options: Vec<String>,
    },
    /// Free text.
    Input {
        /// The question's title.
        title: String,
        /// The text shown while the field is empty.
        placeholder: String,
    },
}

/// The UI a host offers custom tools.
#[async_trait::async_trait]
pub trait UiContext: Send + Sync {
    /// Shows a message (`level` is `info`, `warning`, `error` or `status`).
    fn notify(&self, message: &str, level: &str);
    /// Asks a question: a boolean for `Confirm`, the chosen option or text (or `null` when
    /// dismissed) for `Select` and `Input`.
    async fn request(&self, request: UiRequest) -> Value;
}

/// What a tool gets when nobody set a UI: dismissed questions (`false` / `undefined`).
pub(crate) fn headless_answer(request: &UiRequest) -> Value {
    match request {
        UiRequest::Confirm { .. } => Value::Bool(false),
        UiRequest::Select { .. } | UiRequest::Input { .. } => Value::Null,
    }
}

/// Parses the JavaScript side's request.
pub(crate) fn parse_request(kind: &str, payload: &Value) -> Option<UiRequest> {
    let text = |key: &str| {
        payload
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    match kind {
        "confirm" => Some(UiRequest::Confirm {
            title: text("title"),
            message: text("message"),
        }),
        "select" => Some(UiRequest::Select {
            title: text("title"),
            options: payload
                .get("options")
                .and_then(Value::as_array)
                .map(|options| {
                    options
                        .iter()
                        .map(|option| match option {
                            Value::String(text) => text.clone(),
                            other => other.to_string(),
                        })
                        .collect()
                })
                .unwrap_or_default(),
        }),
        "input" => Some(UiRequest::Input {
            title: text("title"),
            placeholder: text("placeholder"),
        }),
        _ => None,
    }
}

//! Turning what JavaScript threw into text for the model or the log.

use rquickjs::{Ctx, Error, Value};

/// The message of a thrown value: an `Error`'s `message` (with its location for syntax and
/// reference errors during loading), or the value as text.
pub(crate) fn describe_error(ctx: &Ctx<'_>, error: Error) -> String {
    match error {
        Error::Exception => describe_value(&ctx.catch()),
        other => other.to_string(),
    }
}

/// The message of a thrown value.
pub(crate) fn describe_value(value: &Value<'_>) -> String {
    if let Some(exception) = value.as_exception() {
        let message = exception.message().unwrap_or_default();
        let name: Option<String> = exception.get("name").ok();
        return match name.as_deref() {
            Some("Error") | None => message,
            Some("InternalError") if message == "interrupted" => message,
            Some(name) => {
                let location = exception
                    .stack()
                    .and_then(|stack| stack.lines().next().map(|line| line.trim().to_owned()))
                    .filter(|line| !line.is_empty());
                match location {
                    Some(location) => format!("{name}: {message} ({location})"),
                    None => format!("{name}: {message}"),
                }
            }
        };
    }
    if let Some(text) = value.as_string().and_then(|text| text.to_string().ok()) {
        return text;
    }
    value
        .ctx()
        .json_stringify(value.clone())
        .ok()
        .flatten()
        .and_then(|text| text.to_string().ok())
        .unwrap_or_else(|| format!("{value:?}"))
}

/// Drops an exception left pending by work that nobody awaited (a job interrupted after its
/// call had already ended), so that it cannot fail the next call.
pub(crate) fn clear_stale_exception(ctx: &Ctx<'_>) {
    if ctx.has_exception() {
        let stale = ctx.catch();
        tracing::debug!("dropped a stale exception: {}", describe_value(&stale));
    }
}

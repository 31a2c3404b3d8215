//! Which failures are worth another attempt, and how long to wait before it.

use std::time::{Duration, SystemTime};

use reqwest::StatusCode;
use reqwest::header::HeaderMap;

use crate::config::RetryPolicy;

/// Whether an HTTP status is worth retrying: rate limits, request timeouts, conflicts and
/// server errors (Anthropic's 529 "overloaded" among them).
pub(crate) fn retryable_status(status: StatusCode) -> bool {
    matches!(status.as_u16(), 408 | 409 | 429) || status.is_server_error() || status.as_u16() == 529
}

/// The wait the server asked for: `retry-after-ms` (OpenAI), else `retry-after` in seconds or
/// as an HTTP date. `None` when it gave none or nothing readable.
pub(crate) fn server_delay(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .map(str::trim)
    };
    if let Some(millis) = header("retry-after-ms").and_then(|text| text.parse::<f64>().ok())
        && let Ok(delay) = Duration::try_from_secs_f64(millis / 1000.0)
    {
        return Some(delay);
    }
    let text = header("retry-after")?;
    if let Ok(seconds) = text.parse::<f64>() {
        return Duration::try_from_secs_f64(seconds).ok();
    }
    let at = httpdate::parse_http_date(text).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// The wait before attempt `next` (2 for the first retry): the server's wish if it gave one,
/// else `initial_delay · 2^(next-2)` with ±20 % jitter; both capped at `max_delay`.
pub(crate) fn delay_before(policy: &RetryPolicy, next: u32, server: Option<Duration>) -> Duration {
    if let Some(server) = server {
        return server.min(policy.max_delay);
    }
    let exponent = next.saturating_sub(2).min(20);
    let base = policy
        .initial_delay
        .saturating_mul(1 << exponent)
        .min(policy.max_delay);
    // Jitter spreads the retries of many clients that failed together.
    let unit = getrandom::u32().unwrap_or(u32::MAX / 2) as f64 / u32::MAX as f64;
    base.mul_f64(0.8 + 0.4 * unit).min(policy.max_delay)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use reqwest::header::HeaderValue;

    use super::*;
    use pretty_assertions::assert_eq;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn retry_after_is_read_in_milliseconds_seconds_and_as_a_date() {
        let now = httpdate::parse_http_date("Tue, 01 Dec 2026 10:00:00 GMT").unwrap();
        let read = |pairs: &[(&'static str, &str)]| server_delay(&headers(pairs), now);
        assert_eq!(
            read(&[("retry-after-ms", "250")]),
            Some(Duration::from_millis(250))
        );
        assert_eq!(
            read(&[("retry-after-ms", "1500"), ("retry-after", "9")]),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(read(&[("retry-after", "2")]), Some(Duration::from_secs(2)));
        assert_eq!(
            read(&[("retry-after", "0.5")]),
            Some(Duration::from_millis(500))
        );
        assert_eq!(
            read(&[("retry-after", "Tue, 01 Dec 2026 10:00:07 GMT")]),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            read(&[("retry-after", "Tue, 01 Dec 2026 09:00:00 GMT")]),
            Some(Duration::ZERO)
        );
        assert_eq!(read(&[("retry-after", "soon")]), None);
        assert_eq!(read(&[]), None);
    }

    #[test]
    fn backoff_doubles_with_jitter_and_stops_at_the_cap() {
        let policy = RetryPolicy {
            max_attempts: 10,
            initial_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(5),
        };
        for _ in 0..50 {
            let first = delay_before(&policy, 2, None);
            assert!(first >= Duration::from_millis(800) && first <= Duration::from_millis(1200));
            let third = delay_before(&policy, 4, None);
            assert!(third >= Duration::from_millis(3200) && third <= Duration::from_millis(4800));
            assert!(delay_before(&policy, 9, None) <= Duration::from_secs(5));
        }
        assert_eq!(
            delay_before(&policy, 2, Some(Duration::from_secs(600))),
            Duration::from_secs(5)
        );
    }

    #[test]
    fn rate_limits_overloads_and_server_errors_are_retried_other_client_errors_not() {
        for code in [408, 409, 429, 500, 502, 503, 529] {
            assert!(
                retryable_status(StatusCode::from_u16(code).unwrap()),
                "{code}"
            );
        }
        for code in [400, 401, 403, 404, 413, 422] {
            assert!(
                !retryable_status(StatusCode::from_u16(code).unwrap()),
                "{code}"
            );
        }
    }
}

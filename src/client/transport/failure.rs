//! How a failed call is told: the service's refusal read from either interface's shape,
//! `Retry-After`, redirects that are not followed, and the timeout, size and connection
//! errors, each saying whether a write's outcome is unknown.

use std::time::Duration;

use reqwest::header::{HeaderMap, RETRY_AFTER};
use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::client::error::{ApiFailure, Error};

use super::call::{Call, Iface};

pub(super) fn timeout_error(
    call: &Call,
    timeout: Duration,
    outcome_unknown: bool,
    source: Option<crate::client::error::Cause>,
) -> Error {
    let mut message = format!(
        "{} {} did not finish within the timeout of {:.1} s",
        call.method,
        call.shown_path(),
        timeout.as_secs_f64()
    );
    if outcome_unknown {
        message.push_str("; the service may have processed it, so it was not retried");
    }
    Error::Timeout {
        message,
        outcome_unknown,
        source,
    }
}

/// The error of an answer over `max_response_size`: a write's outcome is unknown, as its
/// answer was not read.
pub(super) fn too_large(
    call: &Call,
    status: StatusCode,
    announced: Option<u64>,
    limit: u64,
) -> Error {
    let outcome_unknown = call.method != Method::GET;
    let what = match announced {
        Some(n) => format!("announced {n} bytes (Content-Length)"),
        None => "went past it".to_string(),
    };
    let mut message = format!(
        "{} {}: the answer ({status}) {what}, over max_response_size={limit} bytes; the \
         connection was dropped without reading the rest",
        call.method,
        call.shown_path(),
    );
    if outcome_unknown {
        message.push_str("; the service may have processed it, so it was not retried");
    }
    Error::TooLarge {
        message,
        outcome_unknown,
        limit,
    }
}

pub(super) fn connection_message(call: &Call, e: &reqwest::Error, outcome_unknown: bool) -> String {
    // reqwest's error text carries the URL but never headers, so the key cannot leak here.
    let mut cause = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        cause.push_str(": ");
        cause.push_str(&s.to_string());
        source = s.source();
    }
    let mut message = format!("{} {} failed: {cause}", call.method, call.shown_path());
    if outcome_unknown {
        message.push_str(
            "; the connection failed after the request was sent, so the outcome is unknown \
             and it was not retried",
        );
    }
    message
}

/// `Retry-After` in seconds or as an HTTP date.
pub(super) fn retry_after(headers: &HeaderMap) -> Option<f64> {
    let v = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(secs) = v.parse::<f64>() {
        return Some(secs.max(0.0));
    }
    let at = chrono::DateTime::parse_from_rfc2822(v).ok()?;
    let secs = (at.timestamp_millis() - chrono::Utc::now().timestamp_millis()) as f64 / 1e3;
    Some(secs.max(0.0))
}

/// An answer's headers as text, in the order received (a value that is not UTF-8 read
/// lossily: an error must still be told).
pub(super) fn header_pairs(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(name, value)| {
            let text = match value.to_str() {
                Ok(v) => v.to_string(),
                Err(_) => String::from_utf8_lossy(value.as_bytes()).into_owned(),
            };
            (name.as_str().to_string(), text)
        })
        .collect()
}

/// The error an answer carries, whichever interface's shape it has.
pub(super) fn api_failure(
    iface: Iface,
    status: StatusCode,
    headers: &HeaderMap,
    body: &[u8],
) -> ApiFailure {
    let parsed: Value = serde_json::from_slice(body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()));
    let mut failure = failure_from_body(status.as_u16(), parsed);
    if failure.message.is_empty() {
        failure.message = status
            .canonical_reason()
            .unwrap_or("request failed")
            .to_string();
    }
    failure.retry_after = retry_after(headers);
    failure.headers = header_pairs(headers);
    match iface {
        Iface::Events => with_events_code(failure),
        Iface::Main => failure,
    }
}

/// What a redirect is told as: its target, and that it was not followed. The target as a
/// log may show it: percent-decoded (an encoded key would pass a search for the key), the
/// key blanked, control characters dropped, at most 300 characters.
pub(super) fn redirect_message(
    status: StatusCode,
    headers: &HeaderMap,
    secret: Option<&str>,
) -> String {
    let target = match headers.get(reqwest::header::LOCATION) {
        Some(v) => {
            let raw = String::from_utf8_lossy(v.as_bytes());
            let (shown, _) = crate::client::error::decoded_without_secret(&raw, secret);
            let mut shown: String = shown.chars().filter(|c| !c.is_control()).collect();
            if let Some((cut, _)) = shown.char_indices().nth(300) {
                shown.truncate(cut);
                shown.push_str("...");
            }
            format!("to {shown}")
        }
        None => "with no Location".to_string(),
    };
    format!(
        "the server answered {status} {target}; the service never redirects an API call, so \
         pushwire does not follow it and nothing was sent there (check base_url and events_url)"
    )
}

pub(super) fn failure_from_body(status: u16, body: Value) -> ApiFailure {
    let text = |v: Option<&Value>| -> Option<String> {
        match v? {
            Value::String(s) if !s.is_empty() => Some(s.clone()),
            Value::Null => None,
            Value::String(_) => None,
            other => Some(other.to_string()),
        }
    };
    let error = body.get("error");
    let message = text(body.get("message"))
        .or_else(|| text(error.and_then(|e| e.get("message"))))
        .or_else(|| error.filter(|e| e.is_string()).and_then(|e| text(Some(e))))
        .or_else(|| body.as_str().map(|s| s.chars().take(500).collect()))
        .unwrap_or_default();
    let code = error.and_then(|e| e.get("code")).and_then(code_of);
    let details = error
        .and_then(|e| e.get("details"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    ApiFailure {
        status,
        message,
        body,
        code,
        details,
        retry_after: None,
        outcome_unknown: false,
        headers: Vec::new(),
        unreadable: false,
    }
}

/// An error code given as a number or as its text.
pub(super) fn code_of(c: &Value) -> Option<i64> {
    c.as_i64()
        .or_else(|| c.as_str().and_then(|s| s.trim().parse().ok()))
}

/// The events interface's code of a failure whose `error` object has none: its top-level
/// `error_code`, when not 0 (the success code).
pub(super) fn with_events_code(mut failure: ApiFailure) -> ApiFailure {
    if failure.code.is_none() {
        failure.code = failure
            .body
            .get("error_code")
            .and_then(code_of)
            .filter(|c| *c != 0);
    }
    failure
}

//! Track event (4.14): the Joi-style checks of the events interface, which lists every
//! failing field rather than the first.

use super::violation::{field, Message, Part, FIELD};
use crate::message;
use serde_json::{Map, Value};

use super::limits::{DATA_KEY_MAX, DATA_PAYLOAD_MAX_BYTES, EVENT_NAME_MAX, RESERVED_EVENT_PREFIX};
use super::violation::Violation;

fn valid_data_key(k: &str) -> bool {
    let mut chars = k.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphanumeric())
        && k.len() <= DATA_KEY_MAX
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// The body of 4.14, as JSON: every failing field, as the events interface lists them all.
/// A message in the events interface's words: the field quoted, then `rest`.
fn quoted(rest: impl Into<Part>) -> Message {
    message!["\"", FIELD, "\"", rest.into()]
}

pub fn event(body: &Map<String, Value>) -> Vec<Violation> {
    let mut out = Vec::new();
    match body.get("event_name") {
        None | Some(Value::Null) => out.push(Violation::new("event_name", quoted(" is required"))),
        Some(Value::String(name)) => {
            if name.is_empty() {
                out.push(Violation::new(
                    "event_name",
                    quoted(" is not allowed to be empty"),
                ));
            } else if name.chars().count() > EVENT_NAME_MAX {
                out.push(Violation::new(
                    "event_name",
                    quoted(format!(
                        " length must be less than or equal to {EVENT_NAME_MAX} characters long"
                    )),
                ));
            }
            if name.starts_with(RESERVED_EVENT_PREFIX) {
                out.push(Violation::new(
                    "event_name",
                    quoted(format!(
                        " must not begin with the reserved prefix \"{RESERVED_EVENT_PREFIX}\""
                    )),
                ));
            }
        }
        Some(_) => out.push(Violation::new("event_name", quoted(" must be a string"))),
    }
    let mut identified = false;
    for key in ["profile_id", "device_token_hash"] {
        match body.get(key) {
            None => {}
            Some(Value::String(s)) if s.is_empty() => {
                out.push(Violation::new(key, quoted(" is not allowed to be empty")))
            }
            Some(Value::String(_)) => identified = true,
            Some(_) => out.push(Violation::new(key, quoted(" must be a string"))),
        }
    }
    if !identified
        && !out
            .iter()
            .any(|v| v.field == "profile_id" || v.field == "device_token_hash")
    {
        out.push(Violation::new(
            "profile_id",
            message![
                "\"value\" must contain at least one of [",
                field("device_token_hash"),
                ", ",
                FIELD,
                "]"
            ],
        ));
    }
    match body.get("data") {
        None => {}
        Some(Value::Object(data)) => {
            for (k, v) in data {
                if !valid_data_key(k) {
                    out.push(Violation::new(
                        format!("data.{k}"),
                        quoted(format!(" key must start with a letter or digit and contain only letters, digits, hyphens and underscores (at most {DATA_KEY_MAX} characters)")),
                    ));
                } else if !matches!(v, Value::String(_) | Value::Number(_) | Value::Bool(_)) {
                    out.push(Violation::new(
                        format!("data.{k}"),
                        quoted(" must be a string, number, boolean or ISO 8601 date"),
                    ));
                }
            }
            let size = serde_json::to_vec(data)
                .map(|v| v.len())
                .unwrap_or(usize::MAX);
            if size > DATA_PAYLOAD_MAX_BYTES {
                out.push(Violation::new(
                    "data",
                    quoted(format!(" payload must be at most {DATA_PAYLOAD_MAX_BYTES} bytes (4 KB), got {size}")),
                ));
            }
        }
        Some(_) => out.push(Violation::new("data", quoted(" must be of type object"))),
    }
    for key in body.keys() {
        if !matches!(
            key.as_str(),
            "event_name" | "profile_id" | "device_token_hash" | "data"
        ) {
            out.push(Violation::new(key.clone(), quoted(" is not allowed")));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn event_reports_every_failing_field() {
        let body = json!({"data": {"_bad": 1, "ok": [1]}});
        let v = event(body.as_object().unwrap());
        let fields: Vec<_> = v.iter().map(|v| v.field.as_str()).collect();
        assert_eq!(fields, ["event_name", "profile_id", "data._bad", "data.ok"]);
    }

    #[test]
    fn event_payload_limit_is_4kb() {
        let inside =
            json!({"event_name": "x", "profile_id": "p", "data": {"k": "a".repeat(4096 - 8)}});
        assert!(event(inside.as_object().unwrap()).is_empty());
        let outside =
            json!({"event_name": "x", "profile_id": "p", "data": {"k": "a".repeat(4096 - 7)}});
        assert_eq!(event(outside.as_object().unwrap())[0].field, "data");
    }
}

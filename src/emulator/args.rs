//! Reading an admin operation's arguments (a JSON object, or a query string made into one):
//! each reader names the argument in its refusal.

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

/// An optional text argument (a number is taken as its text).
pub fn str_arg(args: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(Value::Number(n)) => Ok(Some(n.to_string())),
        Some(_) => Err(format!("{key} must be a string")),
    }
}

/// An optional instant: RFC 3339, a date (its midnight, UTC) or a date-time without a zone
/// (UTC).
pub fn time_arg(args: &Map<String, Value>, key: &str) -> Result<Option<DateTime<Utc>>, String> {
    let Some(s) = str_arg(args, key)? else {
        return Ok(None);
    };
    if let Ok(t) = DateTime::parse_from_rfc3339(&s) {
        return Ok(Some(t.with_timezone(&Utc)));
    }
    if let Ok(d) = chrono::NaiveDate::parse_from_str(&s, "%Y-%m-%d") {
        return Ok(Some(d.and_hms_opt(0, 0, 0).unwrap_or_default().and_utc()));
    }
    if let Ok(t) = chrono::NaiveDateTime::parse_from_str(&s, "%Y-%m-%dT%H:%M:%S%.f") {
        return Ok(Some(t.and_utc()));
    }
    Err(format!("{key} must be an ISO 8601 date or date-time"))
}

/// An optional whole-number argument.
pub fn int_arg(args: &Map<String, Value>, key: &str) -> Result<Option<i64>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_i64()
            .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
            .map(Some)
            .ok_or_else(|| format!("{key} must be a whole number")),
    }
}

/// An optional boolean argument (false when not given).
pub fn flag(args: &Map<String, Value>, key: &str) -> Result<bool, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(format!("{key} must be true or false")),
    }
}

//! Timestamps as the service writes them.

use chrono::{DateTime, SecondsFormat, Utc};

/// Timestamps as the service gives them: UTC ISO 8601 with milliseconds and `Z`.
pub fn iso(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

pub(crate) fn ser_time<S: serde::Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&iso(*t))
}

pub(crate) fn ser_opt_time<S: serde::Serializer>(
    t: &Option<DateTime<Utc>>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match t {
        Some(t) => s.serialize_str(&iso(*t)),
        None => s.serialize_none(),
    }
}

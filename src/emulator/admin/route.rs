//! `/_emulator/{op}` over HTTP: the arguments from the JSON body and the query string (its
//! text read as the JSON body would carry it), the answer or `{"error": ...}` with a 400.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Map, Value};

use super::ops::{dispatch, operations};
use crate::emulator::emu::Emu;
use crate::emulator::guard::cross_site;

/// `/_emulator/{op}`: arguments from the JSON body and the query string.
pub async fn route(
    State(emu): State<Arc<Emu>>,
    op: Result<Path<String>, axum::extract::rejection::PathRejection>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Ok(Path(op)) = op else {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": "the operation must be text"})),
        )
            .into_response();
    };
    // A write a browser sends from another page is refused before it is read: any page the
    // developer opens could otherwise reset the emulator or inject faults mid-test.
    let writes = operations().any(|(name, reads)| name == op && !reads);
    if let Some(why) = writes.then(|| cross_site(&headers)).flatten() {
        let message = format!(
            "{op} changes the emulator's state and was refused: {why}. The inspector's own \
             page and clients that are not browsers (curl, the Python admin, test suites) are \
             not affected; nothing was changed"
        );
        return (StatusCode::FORBIDDEN, Json(json!({ "error": message }))).into_response();
    }
    let mut args = if body.is_empty() {
        Map::new()
    } else {
        match serde_json::from_slice::<Value>(&body) {
            Ok(Value::Object(m)) => m,
            _ => {
                return (
                    StatusCode::BAD_REQUEST,
                    Json(json!({"error": "the body must be a JSON object"})),
                )
                    .into_response()
            }
        }
    };
    for (k, v) in form_urlencoded::parse(uri.query().unwrap_or("").as_bytes()) {
        let value = query_value(&k, v.into_owned());
        args.entry(k.into_owned()).or_insert(value);
    }
    match dispatch(&emu, &op, Value::Object(args)) {
        Ok(v) => Json(v).into_response(),
        Err(e) => (StatusCode::BAD_REQUEST, Json(json!({"error": e}))).into_response(),
    }
}

/// The arguments that are booleans or numbers, which a query string can only spell as text.
const TYPED_ARGS: [&str; 20] = [
    "site_id",
    "meta",
    "limit",
    "offset",
    "notification_id",
    "source_id",
    "retention",
    "online",
    "enabled",
    "frozen",
    "processed",
    "drop",
    "status",
    "times",
    "retry_after",
    "delay",
    "rate",
    "seed",
    "seconds",
    "delivery_id",
];

/// A query-string argument as the JSON body would carry it: `true`/`false` and numbers for
/// the arguments that take them (an `online=false` read as text would be ignored, and the
/// subscriber made online), text for every other (a hash of digits stays a hash).
fn query_value(key: &str, raw: String) -> Value {
    if !TYPED_ARGS.contains(&key) {
        return Value::String(raw);
    }
    match raw.trim() {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        // A number however it is written (`2`, `02`, `2.0`, `1e3`, `.5`): a whole one as an
        // integer, which the counting arguments want; anything else, `inf` included, stays
        // text and is refused by the argument's own check.
        t => t
            .parse::<i64>()
            .map(serde_json::Number::from)
            .or_else(|_| t.parse::<u64>().map(serde_json::Number::from))
            .ok()
            .or_else(|| {
                let f = t.parse::<f64>().ok().filter(|f| f.is_finite())?;
                if f.fract() == 0.0 && f.abs() < 9.0e15 {
                    Some(serde_json::Number::from(f as i64))
                } else {
                    serde_json::Number::from_f64(f)
                }
            })
            .map(Value::Number)
            .unwrap_or(Value::String(raw)),
    }
}

//! A model read from what the caller wrote, with nothing dropped or changed without a word:
//! the model readers are lenient for what the service sends (a field it adds later, a
//! number as text), so a caller's input is read and then compared with what the model kept
//! (`lossy_field`, `unknown_field`), and serde's errors are worded as Python's.

use crate::message;
use crate::validate::{Message, FIELD};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use pyo3::prelude::*;

use super::convert::{of_path, to_json};
use crate::client::Error;

/// A model from a model object or a plain dict (or any mix of both in nested fields). A key
/// the model does not have (a typo like `include_segment`) is refused, not dropped.
pub fn model<T: DeserializeOwned + serde::Serialize>(
    obj: &Bound<'_, PyAny>,
    path: &str,
) -> Result<T, Error> {
    model_of(to_json(obj, path)?, path)
}

/// [`model`] from the JSON already made of the Python value.
pub fn model_of<T: DeserializeOwned + serde::Serialize>(v: Value, path: &str) -> Result<T, Error> {
    let m: T = match from_json(v.clone(), path) {
        Ok(m) => m,
        // A list where a model goes (`send_to=[12]`) is read as its fields in order, and the
        // error would be about its first item; an empty dict reading as `T` tells a model.
        Err(_)
            if v.is_array() && serde_json::from_value::<T>(Value::Object(Map::new())).is_ok() =>
        {
            let rest = " must be a dict (or its model), not a list";
            return Err(Error::validation(path, of_path(path, rest)));
        }
        Err(e) => return Err(e),
    };
    let kept = serde_json::to_value(&m).unwrap_or_default();
    if let Some((field, message)) = lossy_field(&v, &kept, path) {
        return Err(Error::validation(field, message));
    }
    match unknown_field(&v, &kept, path) {
        None => Ok(m),
        Some(field) => Err(Error::validation(
            field.clone(),
            message![FIELD, " is not a field of this model"],
        )),
    }
}

/// The first value of `given` that the decoded model holds as something else, losing what
/// the caller wrote: a bool read as a number or a string (`require_interaction=True`), a
/// fraction cut off (`expiry=86400.9`), a list read as an object's fields in order
/// (`Action.from_dict(["Shop", url])`). The readers are lenient for what the service sends;
/// a caller's input must say what it means. Returns the field and the message.
pub fn lossy_field(given: &Value, kept: &Value, path: &str) -> Option<(String, Message)> {
    let join = |k: &str| {
        if path.is_empty() {
            k.to_string()
        } else {
            format!("{path}.{k}")
        }
    };
    let wanted = |kv: &Value| match kv {
        Value::Number(n) if n.is_f64() => "a number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Object(_) => "a dict",
        Value::Array(_) => "a list",
        _ => "something else",
    };
    match (given, kept) {
        (Value::Object(g), Value::Object(k)) => g
            .iter()
            .find_map(|(key, v)| k.get(key).and_then(|kv| lossy_field(v, kv, &join(key)))),
        (Value::Array(g), Value::Array(k)) => g
            .iter()
            .zip(k)
            .enumerate()
            .find_map(|(i, (gv, kv))| lossy_field(gv, kv, &format!("{path}[{i}]"))),
        (Value::Array(_), Value::Object(_)) => Some((
            path.to_string(),
            message![FIELD, " must be a dict, not a list"],
        )),
        (Value::Bool(_), kv) if !kv.is_boolean() => Some((
            path.to_string(),
            message![FIELD, format!(" must be {}, not a bool", wanted(kv))],
        )),
        (Value::Number(n), Value::Number(m)) if n.is_f64() && !m.is_f64() => {
            let f = n.as_f64().unwrap_or_default();
            if f.fract() != 0.0 {
                Some((
                    path.to_string(),
                    message![FIELD, format!(" must be an integer, not {f}")],
                ))
            } else if f.abs() >= 9.2e18 {
                // 1e30 would be read as the largest integer
                Some((path.to_string(), message![FIELD, " is out of range"]))
            } else {
                None
            }
        }
        // A number where text goes: only ids may be given as numbers (`include_segments=
        // [12]`); a title of 5 is a slip the text would hide.
        (Value::Number(n), Value::String(_)) if !takes_ids(path) => Some((
            path.to_string(),
            message![
                FIELD,
                format!(
                    " must be a string, not {}",
                    if n.is_f64() { "a float" } else { "an int" }
                )
            ],
        )),
        // None where text is required (an optional text is None in the model too).
        (Value::Null, Value::String(_)) => Some((
            path.to_string(),
            message![FIELD, " must be a string, not None"],
        )),
        // An integer the readers could not hold as it is (past i64: capped, or made a
        // float's text).
        (Value::Number(n), Value::Number(m)) if !n.is_f64() && !m.is_f64() && n != m => {
            Some((path.to_string(), message![FIELD, " is out of range"]))
        }
        (Value::Number(n), Value::String(t)) if !n.is_f64() && *t != n.to_string() => {
            Some((path.to_string(), message![FIELD, " is out of range"]))
        }
        // "86400.9" read as 86400
        (Value::String(t), Value::Number(m)) if !m.is_f64() => {
            let f = t.trim().parse::<f64>().ok()?;
            (f.fract() != 0.0).then(|| {
                (
                    path.to_string(),
                    message![FIELD, format!(" must be an integer, not {t:?}")],
                )
            })
        }
        _ => None,
    }
}

/// Whether the text field at `path` holds ids, which callers may give as numbers: its name
/// (list indices aside) ends in `_id`, `_ids`, `segments` or `_hash`.
fn takes_ids(path: &str) -> bool {
    let name = path.rsplit('.').next().unwrap_or(path);
    let name = name.split('[').next().unwrap_or(name);
    ["_id", "_ids", "segments", "_hash", "_hashes"]
        .iter()
        .any(|end| name.ends_with(end))
}

/// The first key of `given` (with a value: null and empty ones are defaults) that the
/// decoded model dropped, searched through nested objects and lists of objects.
pub fn unknown_field(given: &Value, kept: &Value, path: &str) -> Option<String> {
    let join = |k: &str| {
        if path.is_empty() {
            k.to_string()
        } else {
            format!("{path}.{k}")
        }
    };
    match (given, kept) {
        (Value::Object(g), Value::Object(k)) => g.iter().find_map(|(key, v)| {
            let empty = v.is_null()
                || v.as_str().is_some_and(str::is_empty)
                || v.as_array().is_some_and(|a| a.is_empty())
                || v.as_object().is_some_and(|o| o.is_empty());
            match k.get(key) {
                None if !empty => Some(join(key)),
                Some(kv) => unknown_field(v, kv, &join(key)),
                None => None,
            }
        }),
        (Value::Array(g), Value::Array(k)) => g
            .iter()
            .zip(k)
            .enumerate()
            .find_map(|(i, (gv, kv))| unknown_field(gv, kv, &format!("{path}[{i}]"))),
        _ => None,
    }
}

pub fn from_json<T: DeserializeOwned>(v: Value, path: &str) -> Result<T, Error> {
    serde_path_to_error::deserialize(v).map_err(|e| {
        let mut inner = e.path().to_string();
        let cause = e.into_inner().to_string();
        // serde names a missing field in its message, at the path of the object that lacks
        // it; the field is the better name for the error.
        if let Some(missing) = cause
            .strip_prefix("missing field `")
            .and_then(|r| r.split('`').next())
        {
            inner = if inner == "." {
                missing.to_string()
            } else {
                format!("{inner}.{missing}")
            };
        }
        let field = match (path.is_empty(), inner.as_str()) {
            (_, ".") => path.to_string(),
            (true, _) => inner.clone(),
            (false, _) => format!("{path}.{inner}"),
        };
        let message: Message = match (plain_cause(&cause), field.is_empty()) {
            // A value of the wrong kind at the top: the model itself.
            (Plain::Kind(k), true) => format!("{} {k}", model_name::<T>()).into(),
            (Plain::Kind(k), false) => message![FIELD, format!(" {k}")],
            (Plain::Other(c), true) => c.into(),
            (Plain::Other(c), false) => message![FIELD, format!(": {c}")],
        };
        Error::validation(field, message)
    })
}

/// The model's name for a message: `pushwire::model::misc::Product` is `Product`.
fn model_name<T>() -> &'static str {
    let full = std::any::type_name::<T>();
    full.rsplit("::").next().unwrap_or(full)
}

/// A decoding failure in Python's words: what kind of value was wanted, or serde's own
/// message when it is not about a kind.
enum Plain {
    Kind(String),
    Other(String),
}

/// serde's wording of a decoding failure in Python's: "invalid type: boolean `true`,
/// expected i64" is "must be an integer, not a bool".
fn plain_cause(cause: &str) -> Plain {
    if cause.starts_with("missing field `") {
        return Plain::Kind("is required".to_string());
    }
    let Some((got, expected)) = cause
        .strip_prefix("invalid type: ")
        .or_else(|| cause.strip_prefix("invalid value: "))
        .and_then(|r| r.split_once(", expected "))
    else {
        return Plain::Other(cause.to_string());
    };
    let expected = match expected {
        "i64" | "i32" | "u64" | "u32" | "an integer" => "an integer",
        "f64" | "f32" | "a number" => "a number",
        // an enum's name (serde reads one from a string or a one-key map)
        "a string" | "string or map" => "a string",
        // the lenient readers of the models take any scalar
        "a number, a string, a boolean or null" => "a string or a number",
        "a boolean" => "a boolean",
        "a sequence" => "a list",
        e if e == "a map" || e.starts_with("struct ") => "a dict",
        e => e,
    };
    let kind = got.split([' ', '`']).next().unwrap_or(got);
    if kind == "integer" && expected == "an integer" {
        // serde names a value past the field's range by its value
        return Plain::Kind("is out of range".to_string());
    }
    let got = match kind {
        "boolean" => "a bool".to_string(),
        "integer" => "an int".to_string(),
        "floating" => "a float".to_string(),
        "string" => format!("the string {}", &got["string ".len().min(got.len())..]),
        "map" => "a dict".to_string(),
        "sequence" => "a list".to_string(),
        "null" | "unit" => "None".to_string(),
        _ => got.to_string(),
    };
    Plain::Kind(format!("must be {expected}, not {got}"))
}

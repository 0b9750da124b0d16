//! Deserializers that accept what the real service sends, not only what the spec's tables
//! say: ids arrive as numbers or as numeric strings, numbers sometimes as strings, and a
//! missing or `null` field means its default.

use serde::de::{self, Deserializer, Unexpected};
use serde::Deserialize;
use serde_json::Value;

fn int_of(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
        Value::String(s) => s.trim().parse::<i64>().ok().or_else(|| {
            s.trim()
                .parse::<f64>()
                .ok()
                .filter(|f| f.is_finite())
                .map(|f| f as i64)
        }),
        Value::Bool(b) => Some(i64::from(*b)),
        _ => None,
    }
}

/// An integer sent as a number or a numeric string; `null` or missing is 0.
pub fn int<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    let v = Value::deserialize(d)?;
    if v.is_null() {
        return Ok(0);
    }
    int_of(&v)
        .ok_or_else(|| de::Error::invalid_type(Unexpected::Other(&v.to_string()), &"an integer"))
}

/// An optional integer sent as a number or a numeric string.
pub fn opt_int<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    let v = Value::deserialize(d)?;
    if v.is_null() || v == Value::String(String::new()) {
        return Ok(None);
    }
    int_of(&v)
        .map(Some)
        .ok_or_else(|| de::Error::invalid_type(Unexpected::Other(&v.to_string()), &"an integer"))
}

/// A float sent as a number or a numeric string; `null` or missing is 0.
pub fn float<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    let v = Value::deserialize(d)?;
    match &v {
        Value::Null => Ok(0.0),
        Value::Number(n) => Ok(n.as_f64().unwrap_or(0.0)),
        Value::String(s) => s
            .trim()
            .parse::<f64>()
            .map_err(|_| de::Error::invalid_type(Unexpected::Str(s), &"a number")),
        _ => Err(de::Error::invalid_type(
            Unexpected::Other(&v.to_string()),
            &"a number",
        )),
    }
}

/// A string that may arrive as a number; `null` or missing is empty.
pub fn string<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let v = Value::deserialize(d)?;
    Ok(match v {
        Value::Null => String::new(),
        Value::String(s) => s,
        other => other.to_string(),
    })
}

/// An optional string that may arrive as a number.
pub fn opt_string<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let v = Value::deserialize(d)?;
    Ok(match v {
        Value::Null => None,
        Value::String(s) => Some(s),
        other => Some(other.to_string()),
    })
}

//! Reading a request's parameters as the service does: a form (urlencoded, multipart, or a
//! JSON object by mistake), a JSON object, the query string, an integer parameter.

use crate::message;
use crate::validate::FIELD;
use axum::body::Bytes;
use axum::http::HeaderMap;
use serde_json::{Map, Value};

use crate::form::Form;
use crate::validate::Violation;

fn content_type(headers: &HeaderMap) -> String {
    headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// The `charset` a body declares, if any, is UTF-8 (or its subset ASCII): a form in another
/// one (`caf%E9` in ISO-8859-1) would be read as replacement characters and stored so.
fn utf8_charset(headers: &HeaderMap) -> Result<(), String> {
    let raw = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    for param in raw.split(';').skip(1) {
        let Some((name, value)) = param.split_once('=') else {
            continue;
        };
        if !name.trim().eq_ignore_ascii_case("charset") {
            continue;
        }
        let value = value.trim().trim_matches('"');
        if !["utf-8", "utf8", "us-ascii"]
            .iter()
            .any(|ok| value.eq_ignore_ascii_case(ok))
        {
            return Err(format!("Unsupported charset {value}: send UTF-8"));
        }
    }
    Ok(())
}

/// A JSON object body; `None` names what is wrong with it.
pub fn json_object(headers: &HeaderMap, body: &Bytes) -> Result<Map<String, Value>, String> {
    let ct = content_type(headers);
    if !(ct == "application/json" || ct.ends_with("+json")) {
        return Err(if ct.is_empty() {
            "Content-Type must be application/json".to_string()
        } else {
            format!("Unsupported Content-Type {ct}: send application/json")
        });
    }
    utf8_charset(headers)?;
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err("The request's body must be a JSON object".to_string()),
        Err(e) => Err(format!("Malformed JSON body: {e}")),
    }
}

/// A form body. The spec's endpoints are form-encoded; a JSON object is accepted too (its
/// arrays become lists, `attributes` stays the JSON it is), since clients send one by
/// mistake and the service reads both.
pub async fn form_body(headers: &HeaderMap, body: &Bytes) -> Result<Form, String> {
    let ct = content_type(headers);
    if ct == "application/x-www-form-urlencoded" {
        utf8_charset(headers)?;
    }
    match ct.as_str() {
        "" | "application/x-www-form-urlencoded" => checked(Form::parse(body)),
        "multipart/form-data" => checked(multipart_form(headers, body).await?),
        "application/json" => {
            let obj = json_object(headers, body)?;
            let mut w = crate::form::FormWriter::new();
            for (k, v) in &obj {
                match v {
                    // A JSON-encoded parameter (the attribute filter of 2.14) sent as JSON
                    // itself: its groups are one value, carried as their JSON text.
                    Value::Array(_) | Value::Object(_) if k.eq_ignore_ascii_case("attributes") => {
                        w.field(k, &v.to_string());
                    }
                    // A form cannot carry an empty list, and dropping the key would lift the
                    // filter (a broadcast to everyone): refused, as anything that could
                    // silently widen a broadcast is.
                    // An empty exclusion excludes no one: it cannot widen a broadcast.
                    Value::Array(items) if items.is_empty() && k.starts_with("exclude_") => {}
                    Value::Array(items) if items.is_empty() => {
                        return Err(format!("The {k} field must not be an empty array."));
                    }
                    Value::Array(items) => {
                        let items: Vec<String> = items.iter().map(scalar_text).collect();
                        w.list(k, &items);
                    }
                    // A targeting parameter sent as null would be no filter: everyone.
                    Value::Null if is_targeting(k) => {
                        return Err(format!("The {k} field must not be null."));
                    }
                    Value::Null => {}
                    other => {
                        w.field(k, &scalar_text(other));
                    }
                }
            }
            checked(Form::parse(w.finish().as_bytes()))
        }
        other => Err(format!(
            "Unsupported Content-Type {other}: send application/x-www-form-urlencoded"
        )),
    }
}

/// The fields of a `multipart/form-data` body (Node's `form-data`, a browser's `FormData`),
/// named as in a form body: indexed, `[]` and repeated names. The body was already read
/// under the request body cap. A file part is refused: no parameter of the API is a file,
/// and its name would be read as a field nobody set.
async fn multipart_form(headers: &HeaderMap, body: &Bytes) -> Result<Form, String> {
    let ct = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let boundary = multer::parse_boundary(ct)
        .map_err(|e| format!("Malformed multipart/form-data Content-Type: {e}"))?;
    let whole = body.clone();
    let stream = futures::stream::once(async move { Ok::<Bytes, std::io::Error>(whole) });
    let mut parts = multer::Multipart::new(stream, boundary);
    let malformed = |e: multer::Error| format!("Malformed multipart/form-data body: {e}");
    let mut pairs = Vec::new();
    while let Some(part) = parts.next_field().await.map_err(malformed)? {
        let Some(name) = part.name().map(str::to_string) else {
            return Err("A multipart/form-data part has no name".to_string());
        };
        if let Some(file) = part.file_name() {
            return Err(format!(
                "The {name} part is a file ({file:?}): this endpoint takes fields only"
            ));
        }
        let value = part.text().await.map_err(malformed)?;
        pairs.push((name, value));
    }
    Ok(Form::from_pairs(pairs))
}

/// The broadcast parameters (4.13) that narrow who receives it: a blank or null one would
/// lift its filter. (The exclusions only ever narrow.)
pub fn is_targeting(key: &str) -> bool {
    key.starts_with("include_")
        || matches!(
            key,
            "profile_id"
                | "subscriber_hash"
                | "attributes"
                | "Attributes"
                | "from_date"
                | "to_date"
        )
}

fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A form with no key whose brackets are not an array index: such a key would be read as
/// a field nobody sent (and the one meant left out, which can widen a broadcast).
fn checked(form: Form) -> Result<Form, String> {
    match form.bad_key() {
        Some(key) => Err(Form::bad_key_message(key)),
        None => Ok(form),
    }
}

/// The query string as a form (same array spellings, same refusal of bad indexes).
pub fn query(uri: &axum::http::Uri) -> Result<Form, String> {
    checked(Form::parse(uri.query().unwrap_or("").as_bytes()))
}

/// An optional integer query parameter; a value that is not one is a violation. An integer
/// past the 64-bit range is taken as the range's end, so that the bounds of the parameter
/// give the message (`limit must be between 1 and 500`).
pub fn int_param(q: &Form, name: &str) -> Result<Option<i64>, Violation> {
    use std::num::IntErrorKind;
    match q.text(name) {
        None => Ok(None),
        Some(s) => match s.parse::<i64>() {
            Ok(v) => Ok(Some(v)),
            Err(e) if *e.kind() == IntErrorKind::PosOverflow => Ok(Some(i64::MAX)),
            Err(e) if *e.kind() == IntErrorKind::NegOverflow => Ok(Some(i64::MIN)),
            Err(_) => Err(Violation::new(name, message![FIELD, " must be an integer"])),
        },
    }
}

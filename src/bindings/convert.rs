//! Conversions between Python objects and the core's types, and the core's errors as the
//! exceptions of `pushwire.errors`.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDate, PyDateTime, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use pythonize::pythonize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::client::Error;
use crate::model::common::{Extra, Json};

impl<'py> IntoPyObject<'py> for Json {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Self::Output> {
        Ok(pythonize(py, &self.0)?)
    }
}

impl<'py> IntoPyObject<'py> for Extra {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Self::Output> {
        Ok(pythonize(py, &self.0)?)
    }
}

/// A Python value as JSON: dicts, lists, tuples, scalars; dates and datetimes as ISO 8601;
/// model objects (anything with `to_dict`) as their dict. `path` names the spot for errors.
pub fn to_json(obj: &Bound<'_, PyAny>, path: &str) -> Result<Value, Error> {
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if obj.is_instance_of::<PyBool>() {
        return Ok(Value::Bool(obj.is_truthy().unwrap_or(false)));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return text(s, path).map(Value::String);
    }
    if obj.is_instance_of::<PyInt>() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::from(i));
        }
        // JSON has them, and a result may carry one in `extra` (a pickle goes through here).
        return obj
            .extract::<u64>()
            .map(Value::from)
            .map_err(|_| Error::validation(path, format!("{path} is out of range")));
    }
    if obj.is_instance_of::<PyFloat>() {
        let f: f64 = obj.extract().unwrap_or(f64::NAN);
        return serde_json::Number::from_f64(f)
            .map(Value::Number)
            .ok_or_else(|| Error::validation(path, "must be a finite number"));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut m = Map::new();
        for (k, v) in d.iter() {
            let key = k
                .cast::<PyString>()
                .map_err(|_| Error::validation(path, "dict keys must be strings"))
                .and_then(|s| text(s, path))?;
            let child = if path.is_empty() {
                key.clone()
            } else {
                format!("{path}.{key}")
            };
            m.insert(key, to_json(&v, &child)?);
        }
        return Ok(Value::Object(m));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let mut out = Vec::new();
        for (i, item) in obj
            .try_iter()
            .map_err(|_| Error::validation(path, "not iterable"))?
            .enumerate()
        {
            let item = item.map_err(|e| Error::validation(path, e.to_string()))?;
            out.push(to_json(&item, &format!("{path}[{i}]"))?);
        }
        return Ok(Value::Array(out));
    }
    if let Some(value) = pandas_or_numpy_time(obj, path) {
        return value;
    }
    if obj.is_instance_of::<PyDateTime>() || obj.is_instance_of::<PyDate>() {
        let iso = obj
            .call_method0("isoformat")
            .and_then(|s| s.extract::<String>())
            .map_err(|e| Error::validation(path, e.to_string()))?;
        return Ok(Value::String(iso));
    }
    match obj.call_method0("to_dict") {
        Ok(d) => return to_json(&d, path),
        // Ctrl-C landed in the object's own code: the call stops, not reads it otherwise.
        Err(e) if !e.is_instance_of::<pyo3::exceptions::PyException>(obj.py()) => {
            return Err(super::stop::stash(e));
        }
        Err(_) => {}
    }
    // A Decimal (Django's DecimalField, a price) as the number it is: a whole one as an
    // integer (an expiry of Decimal("60")), any other as a float.
    if obj.get_type().name().is_ok_and(|n| n == "Decimal")
        && obj.get_type().module().is_ok_and(|m| m == "decimal")
    {
        // Only within 19 digits: `int()` of Decimal("1e1000000") would build a million-digit
        // integer with the GIL held. Past them, the float path says what is wrong.
        let small = obj
            .call_method0("adjusted")
            .and_then(|e| e.extract::<i64>())
            .is_ok_and(|e| e <= 18);
        let whole = small
            && obj
                .call_method0("to_integral_value")
                .and_then(|w| obj.eq(w))
                .unwrap_or(false);
        if whole {
            if let Ok(i) = obj.call_method0("__int__").and_then(|i| i.extract::<i64>()) {
                return Ok(Value::from(i));
            }
        }
        return as_float(obj, path);
    }
    // numpy's floats that are no Python float (float32, float16)
    if obj
        .get_type()
        .module()
        .is_ok_and(|m| m.to_string().starts_with("numpy"))
        && !obj.hasattr("__index__").unwrap_or(true)
        && obj.hasattr("__float__").unwrap_or(false)
        && !obj
            .get_type()
            .name()
            .is_ok_and(|n| n == "bool_" || n == "bool")
    {
        // Its own text is the shortest decimal of its precision (`19.99` for float32's
        // 19.9899997...): the number the caller wrote, not float64's reading of it.
        let shortest = obj
            .str()
            .ok()
            .and_then(|t| t.to_cow().ok().and_then(|t| t.trim().parse::<f64>().ok()))
            .and_then(serde_json::Number::from_f64);
        return match shortest {
            Some(n) => Ok(Value::Number(n)),
            None => as_float(obj, path),
        };
    }
    // numpy's bool (no __index__, and no subclass of bool)
    if obj
        .get_type()
        .name()
        .is_ok_and(|n| n == "bool_" || n == "bool")
        && obj
            .get_type()
            .module()
            .is_ok_and(|m| m.to_string().starts_with("numpy"))
    {
        return Ok(Value::Bool(obj.is_truthy().unwrap_or(false)));
    }
    // numpy and pandas integers: anything with __index__.
    if obj.hasattr("__index__").unwrap_or(false) {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::from(i));
        }
    }
    let type_name = obj
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".into());
    Err(Error::validation(
        path,
        format!("{path}: {type_name} is not a JSON value, a model or a dict"),
    ))
}

/// A Python string as UTF-8. A lone surrogate (what `surrogateescape` decoding leaves of a
/// byte that was not UTF-8) has no UTF-8 form: refused, never sent as a replacement
/// character, which would name another profile or segment.
pub fn text(s: &Bound<'_, PyString>, path: &str) -> Result<String, Error> {
    s.to_cow().map(|t| t.into_owned()).map_err(|_| {
        let name = if path.is_empty() { "the value" } else { path };
        Error::validation(
            path,
            format!(
                "{name} holds a lone surrogate (a byte that was not UTF-8, decoded with \
                 surrogateescape?), which is not text that can be sent"
            ),
        )
    })
}

/// pandas' missing values (`pd.NaT`, `pd.NA`) as `null`, and numpy's times: a `datetime64`
/// as its ISO 8601 text (its own `str`), a `timedelta64` refused (a duration has no JSON
/// form the service reads). `None` for anything else. Checked by type name: pandas and
/// numpy are not dependencies.
fn pandas_or_numpy_time(obj: &Bound<'_, PyAny>, path: &str) -> Option<Result<Value, Error>> {
    let ty = obj.get_type();
    let name = ty.name().ok()?;
    let name = name.to_cow().ok()?;
    match name.as_ref() {
        "NaTType" | "NAType" => Some(Ok(Value::Null)),
        "datetime64" | "timedelta64" => {
            let numpy = ty
                .module()
                .is_ok_and(|m| m.to_string().starts_with("numpy"));
            if !numpy {
                return None;
            }
            let text = obj.str().ok()?.to_string();
            Some(match (name.as_ref(), text.as_str()) {
                (_, "NaT") => Ok(Value::Null),
                ("datetime64", _) => Ok(Value::String(text)),
                _ => Err(Error::validation(
                    path,
                    format!("{path} is a duration (numpy.timedelta64): send it as a number"),
                )),
            })
        }
        _ => None,
    }
}

/// Whether `v` is a missing value: `None`, NaN, or pandas' and numpy's missing markers
/// (`pd.NA`, `pd.NaT`, numpy's `NaT`). A row of a DataFrame has one where a column does not
/// apply.
pub fn is_missing(v: &Bound<'_, PyAny>) -> bool {
    if v.is_none() {
        return true;
    }
    if let Ok(f) = v.cast::<PyFloat>() {
        return f.value().is_nan();
    }
    if v.is_instance_of::<PyString>() || v.is_instance_of::<PyInt>() || v.is_instance_of::<PyDict>()
    {
        return false;
    }
    matches!(pandas_or_numpy_time(v, ""), Some(Ok(Value::Null)))
        || v.get_type()
            .module()
            .is_ok_and(|m| m.to_string().starts_with("numpy"))
            && v.hasattr("__float__").unwrap_or(false)
            && !v.hasattr("__index__").unwrap_or(true)
            && v.call_method0("__float__")
                .and_then(|f| f.extract::<f64>())
                .is_ok_and(f64::is_nan)
}

/// A number that is no Python float (a Decimal, numpy's float32) as a JSON float.
fn as_float(obj: &Bound<'_, PyAny>, path: &str) -> Result<Value, Error> {
    let f: f64 = obj
        .call_method0("__float__")
        .and_then(|f| f.extract())
        .unwrap_or(f64::NAN);
    serde_json::Number::from_f64(f)
        .map(Value::Number)
        .ok_or_else(|| Error::validation(path, format!("{path} must be a finite number")))
}

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
            let name = if path.is_empty() { "the value" } else { path };
            return Err(Error::validation(
                path,
                format!("{name} must be a dict (or its model), not a list"),
            ));
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
            format!("{field} is not a field of this model"),
        )),
    }
}

/// The first value of `given` that the decoded model holds as something else, losing what
/// the caller wrote: a bool read as a number or a string (`require_interaction=True`), a
/// fraction cut off (`expiry=86400.9`), a list read as an object's fields in order
/// (`Action.from_dict(["Shop", url])`). The readers are lenient for what the service sends;
/// a caller's input must say what it means. Returns the field and the message.
pub fn lossy_field(given: &Value, kept: &Value, path: &str) -> Option<(String, String)> {
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
            format!("{path} must be a dict, not a list"),
        )),
        (Value::Bool(_), kv) if !kv.is_boolean() => Some((
            path.to_string(),
            format!("{path} must be {}, not a bool", wanted(kv)),
        )),
        (Value::Number(n), Value::Number(m)) if n.is_f64() && !m.is_f64() => {
            let f = n.as_f64().unwrap_or_default();
            if f.fract() != 0.0 {
                Some((
                    path.to_string(),
                    format!("{path} must be an integer, not {f}"),
                ))
            } else if f.abs() >= 9.2e18 {
                // 1e30 would be read as the largest integer
                Some((path.to_string(), format!("{path} is out of range")))
            } else {
                None
            }
        }
        // A number where text goes: only ids may be given as numbers (`include_segments=
        // [12]`); a title of 5 is a slip the text would hide.
        (Value::Number(n), Value::String(_)) if !takes_ids(path) => Some((
            path.to_string(),
            format!(
                "{path} must be a string, not {}",
                if n.is_f64() { "a float" } else { "an int" }
            ),
        )),
        // None where text is required (an optional text is None in the model too).
        (Value::Null, Value::String(_)) => Some((
            path.to_string(),
            format!("{path} must be a string, not None"),
        )),
        // An integer the readers could not hold as it is (past i64: capped, or made a
        // float's text).
        (Value::Number(n), Value::Number(m)) if !n.is_f64() && !m.is_f64() && n != m => {
            Some((path.to_string(), format!("{path} is out of range")))
        }
        (Value::Number(n), Value::String(t)) if !n.is_f64() && *t != n.to_string() => {
            Some((path.to_string(), format!("{path} is out of range")))
        }
        // "86400.9" read as 86400
        (Value::String(t), Value::Number(m)) if !m.is_f64() => {
            let f = t.trim().parse::<f64>().ok()?;
            (f.fract() != 0.0).then(|| {
                (
                    path.to_string(),
                    format!("{path} must be an integer, not {t:?}"),
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
        let message = match (plain_cause(&cause), field.is_empty()) {
            // A value of the wrong kind at the top: the model itself.
            (Plain::Kind(k), true) => format!("{} {k}", model_name::<T>()),
            (Plain::Kind(k), false) => format!("{field} {k}"),
            (Plain::Other(c), true) => c,
            (Plain::Other(c), false) => format!("{field}: {c}"),
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

/// A `YYYY-MM-DD` parameter from a str, a date or a datetime (its date). The service's
/// analytics dates are UTC days (spec 4.1), so an aware datetime is first moved to UTC: 01:00
/// in Paris on the 2nd is the 1st. A naive one is taken as it is.
pub fn date_text(obj: &Bound<'_, PyAny>, field: &str) -> Result<String, Error> {
    if obj.is_instance_of::<PyDateTime>() {
        let py = obj.py();
        let aware = !obj
            .call_method0("utcoffset")
            .map_err(|e| Error::validation(field, e.to_string()))?
            .is_none();
        let in_utc = if aware {
            py.import("datetime")
                .and_then(|m| m.getattr("timezone"))
                .and_then(|tz| tz.getattr("utc"))
                .and_then(|utc| obj.call_method1("astimezone", (utc,)))
        } else {
            Ok(obj.clone())
        };
        let d = in_utc
            .and_then(|o| o.call_method0("date"))
            .and_then(|d| d.call_method0("isoformat"))
            .and_then(|s| s.extract::<String>())
            .map_err(|e| Error::validation(field, e.to_string()))?;
        return Ok(d);
    }
    match to_json(obj, field)? {
        Value::String(s) => Ok(s),
        _ => Err(Error::validation(
            field,
            format!("{field} must be a date or a YYYY-MM-DD string"),
        )),
    }
}

static ERRORS: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

fn errors_module(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    ERRORS
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(py.import("pushwire.errors")?.unbind())
        })
        .map(|m| m.bind(py))
}

/// The exception of `pushwire.errors` for a core error. `rename` maps a spec parameter
/// name to the Python argument that carries it.
pub fn to_pyerr(py: Python<'_>, err: Error, rename: fn(&str) -> String) -> PyErr {
    // A Ctrl-C that stopped the conversion (`stop::stash`) is what the caller gets, in
    // place of the error standing in for it (and only there).
    if super::stop::is_placeholder(&err) {
        if let Some(stopped) = super::stop::take() {
            return stopped;
        }
    }
    match build_exception(py, err, rename) {
        Ok(e) => e,
        Err(e) => e,
    }
}

/// `message` with every whole word that names a spec field (letters, digits and `_`) named
/// as the Python argument: "from must not be after to" is "start must not be after end" for
/// `analytics.summary(start, end)`, while `device_type` in "type must be one of ...
/// device_type" stays as it is, being a different word. What is quoted (`"..."` or
/// `` `...` ``) is the caller's own data and stays as written.
fn rename_words(message: &str, rename: fn(&str) -> String) -> String {
    let mut out = String::with_capacity(message.len() + 8);
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    for c in message.chars() {
        if quote.is_none() && is_word(c) {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            out.push_str(&rename(&word));
            word.clear();
        }
        match quote {
            // `\"` inside a quoted value (Rust's `{:?}`) does not end it
            Some(_) if escaped => escaped = false,
            Some(_) if c == '\\' => escaped = true,
            Some(q) if c == q => quote = None,
            None if c == '"' || c == '`' => quote = Some(c),
            _ => {}
        }
        out.push(c);
    }
    if !word.is_empty() {
        out.push_str(&rename(&word));
    }
    out
}

fn build_exception(py: Python<'_>, err: Error, rename: fn(&str) -> String) -> PyResult<PyErr> {
    let m = errors_module(py)?;
    let kwargs = PyDict::new(py);
    let (class, message) = match err {
        Error::Validation(v) => {
            let field = rename(&v.field);
            let message = if v.message.contains(&v.field) || v.message.contains(&field) {
                rename_words(&v.message, rename)
            } else {
                format!("{field}: {}", v.message)
            };
            kwargs.set_item("field", field)?;
            ("ValidationError", message)
        }
        Error::Config(m) => ("PushwireError", m),
        Error::Connection {
            message,
            outcome_unknown,
        } => {
            kwargs.set_item("outcome_unknown", outcome_unknown)?;
            ("APIConnectionError", message)
        }
        Error::Timeout {
            message,
            outcome_unknown,
        } => {
            kwargs.set_item("outcome_unknown", outcome_unknown)?;
            ("APITimeoutError", message)
        }
        Error::TooLarge {
            message,
            outcome_unknown,
            limit,
        } => {
            kwargs.set_item("outcome_unknown", outcome_unknown)?;
            kwargs.set_item("max_response_size", limit)?;
            ("ResponseTooLargeError", message)
        }
        Error::Api(a) => {
            kwargs.set_item("status_code", a.status)?;
            kwargs.set_item("body", pythonize(py, &a.body)?)?;
            kwargs.set_item("code", a.code)?;
            kwargs.set_item("details", pythonize(py, &a.details)?)?;
            kwargs.set_item("outcome_unknown", a.outcome_unknown)?;
            let class = match a.status {
                401 => "AuthenticationError",
                400 => "BadRequestError",
                404 => "NotFoundError",
                429 => {
                    kwargs.set_item("retry_after", a.retry_after)?;
                    "RateLimitError"
                }
                s if s >= 500 => "ServerError",
                _ => "APIError",
            };
            (class, a.message)
        }
    };
    let cls = m.getattr(class)?;
    if class == "PushwireError" {
        return Ok(PyErr::from_value(cls.call1((message,))?));
    }
    let exc = cls.call((message,), Some(&kwargs))?;
    Ok(PyErr::from_value(exc))
}

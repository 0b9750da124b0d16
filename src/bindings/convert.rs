//! Python values as the core's JSON: what a caller passes (dicts, models, dates, and the
//! scalars of numpy, pandas and `decimal`) as the values the core sends, and the core's
//! JSON values back as Python objects.

use crate::message;
use crate::validate::{Message, FIELD};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDate, PyDateTime, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use pythonize::pythonize;
use serde_json::{Map, Value};

use crate::client::Error;
use crate::model::common::{Extra, Json};
use crate::model::Timestamp;

/// The model fields that hold free-form JSON (`Json`, `Extra`) as the Python values it reads as.
macro_rules! json_into_py {
    ($($ty:ty),*) => {$(
        impl<'py> IntoPyObject<'py> for $ty {
            type Target = PyAny;
            type Output = Bound<'py, PyAny>;
            type Error = PyErr;

            fn into_pyobject(self, py: Python<'py>) -> PyResult<Self::Output> {
                Ok(pythonize(py, &self.0)?)
            }
        }
    )*};
}

json_into_py!(Json, Extra);

/// A model's timestamp as Python reads it: an aware `datetime` in UTC, `None` for a text the
/// service sent that names no instant (the text itself stays in `to_dict()`).
impl<'py> IntoPyObject<'py> for Timestamp {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Self::Output> {
        Ok(self.at().into_pyobject(py)?.into_any())
    }
}

/// A value as JSON text, compact or indented by `indent` spaces.
pub fn json_text<T: serde::Serialize>(value: &T, indent: Option<usize>) -> PyResult<String> {
    let failed = |e: serde_json::Error| pyo3::exceptions::PyValueError::new_err(e.to_string());
    let Some(n) = indent else {
        return serde_json::to_string(value).map_err(failed);
    };
    let spaces = vec![b' '; n];
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(
        &mut out,
        serde_json::ser::PrettyFormatter::with_indent(&spaces),
    );
    value.serialize(&mut ser).map_err(failed)?;
    String::from_utf8(out).map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))
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
            .map_err(|_| Error::validation(path, message![FIELD, " is out of range"]));
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
        message![
            FIELD,
            format!(": {type_name} is not a JSON value, a model or a dict")
        ],
    ))
}

/// `rest` after the field at `path`, or after "the value" for a value given alone.
pub fn of_path(path: &str, rest: &'static str) -> Message {
    if path.is_empty() {
        format!("the value{rest}").into()
    } else {
        message![FIELD, rest]
    }
}

/// A Python string as UTF-8. A lone surrogate (what `surrogateescape` decoding leaves of a
/// byte that was not UTF-8) has no UTF-8 form: refused, never sent as a replacement
/// character, which would name another profile or segment.
pub fn text(s: &Bound<'_, PyString>, path: &str) -> Result<String, Error> {
    s.to_cow().map(|t| t.into_owned()).map_err(|_| {
        let rest = " holds a lone surrogate (a byte that was not UTF-8, decoded with \
                    surrogateescape?), which is not text that can be sent";
        Error::validation(path, of_path(path, rest))
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
                    message![
                        FIELD,
                        " is a duration (numpy.timedelta64): send it as a number"
                    ],
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
        .ok_or_else(|| Error::validation(path, message![FIELD, " must be a finite number"]))
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
            message![FIELD, " must be a date or a YYYY-MM-DD string"],
        )),
    }
}

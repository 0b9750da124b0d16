//! Python arguments read as the core's values, each named for the error that refuses it:
//! the readers every resource's parsing shares.

use crate::message;
use crate::validate::FIELD;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyMapping, PyString};
use reqwest::header::{HeaderName, HeaderValue};
use serde_json::Value;

use crate::bindings::convert::{self, date_text, is_missing};
use crate::client::transport::extra_header;
use crate::client::Error;
use crate::model::{AnalyticsRange, CampaignQuery, ListQuery};

pub fn concurrency(obj: &Bound<'_, PyAny>) -> Result<usize, Error> {
    match opt_int(obj, "concurrency")? {
        Some(c) if (1..=1024).contains(&c) => Ok(c as usize),
        Some(_) => Err(Error::validation(
            "concurrency",
            message![FIELD, " must be between 1 and 1024"],
        )),
        None => Ok(8),
    }
}

pub fn opt_int(obj: &Bound<'_, PyAny>, field: &str) -> Result<Option<i64>, Error> {
    if obj.is_none() {
        return Ok(None);
    }
    // Ints and whatever has __index__ (numpy's), never a bool or a float.
    if !obj.is_instance_of::<PyBool>() && !obj.is_instance_of::<PyFloat>() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Some(i));
        }
        if obj.is_instance_of::<PyInt>() {
            return Err(Error::validation(
                field,
                message![FIELD, " is out of range"],
            ));
        }
    }
    Err(Error::validation(
        field,
        message![FIELD, " must be an integer"],
    ))
}

/// A resource id: an int, or a str of digits (an id taken from a URL or a form).
pub fn id_int(obj: &Bound<'_, PyAny>, field: &str) -> Result<i64, Error> {
    if let Ok(s) = obj.cast::<PyString>() {
        let s = convert::text(s, field)?;
        let digits = !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        return match s.parse::<i64>() {
            Ok(i) if digits => Ok(i),
            _ if digits => Err(Error::validation(
                field,
                message![FIELD, " is out of range"],
            )),
            _ => Err(Error::validation(
                field,
                message![
                    FIELD,
                    format!(" must be an integer or a string of digits, not {s:?}")
                ],
            )),
        };
    }
    int(obj, field)
}

pub fn int(obj: &Bound<'_, PyAny>, field: &str) -> Result<i64, Error> {
    opt_int(obj, field)?.ok_or_else(|| Error::validation(field, message![FIELD, " is required"]))
}

/// An id given as an int or a str.
pub fn id_text(obj: &Bound<'_, PyAny>, field: &str) -> Result<String, Error> {
    if let Ok(s) = obj.cast::<PyString>() {
        return convert::text(s, field);
    }
    if is_missing(obj) {
        return Err(Error::validation(
            field,
            message![
                FIELD,
                " is missing (None or NaN): drop the empty entries first"
            ],
        ));
    }
    int(obj, field).map(|i| i.to_string())
}

pub fn opt_text(obj: &Bound<'_, PyAny>, field: &str) -> Result<Option<String>, Error> {
    if obj.is_none() {
        return Ok(None);
    }
    match obj.cast::<PyString>() {
        Ok(s) => convert::text(s, field).map(Some),
        Err(_) => Err(Error::validation(
            field,
            message![FIELD, " must be a string"],
        )),
    }
}

/// A flag: `True` or `False` alone (a string such as `"false"` would read as true).
pub fn flag(obj: &Bound<'_, PyAny>, field: &str) -> Result<bool, Error> {
    obj.cast::<pyo3::types::PyBool>()
        .map(|b| b.is_true())
        .map_err(|_| Error::validation(field, message![FIELD, " must be True or False"]))
}

pub fn text(obj: &Bound<'_, PyAny>, field: &str) -> Result<String, Error> {
    opt_text(obj, field)?.ok_or_else(|| Error::validation(field, message![FIELD, " is required"]))
}

/// A list of strings (ints allowed, as ids); a bare string is refused, as it would be read
/// as a list of its characters.
pub fn str_list(obj: &Bound<'_, PyAny>, field: &str) -> Result<Vec<String>, Error> {
    if obj.is_instance_of::<PyString>()
        || obj.is_instance_of::<PyBytes>()
        || obj.is_instance_of::<PyByteArray>()
        || obj.is_instance_of::<PyDict>()
    {
        return Err(Error::validation(
            field,
            message![FIELD, " must be a list of strings, not a single value"],
        ));
    }
    each_item(obj, field, "a list of strings", id_text)
}

/// The analytics range of a campaign read: `analytics_start_at` and `analytics_end_at`.
pub fn range(start: &Bound<'_, PyAny>, end: &Bound<'_, PyAny>) -> Result<AnalyticsRange, Error> {
    let d = |given: &Bound<'_, PyAny>, name: &str| match given.is_none() {
        true => Ok(None),
        false => date_text(given, name).map(Some),
    };
    Ok(AnalyticsRange {
        start: d(start, "analytics_start_at")?,
        end: d(end, "analytics_end_at")?,
    })
}

/// The request of a campaign read by id (`get(id, analytics_start_at, analytics_end_at)`),
/// the id named `id_field`.
pub fn campaign_query(
    id: &Bound<'_, PyAny>,
    id_field: &str,
    range: AnalyticsRange,
) -> Result<CampaignQuery, Error> {
    Ok(CampaignQuery {
        id: id_int(id, id_field)?,
        range,
    })
}

/// The request of a campaign list (`list(page, limit, analytics_start_at, analytics_end_at)`).
pub fn list_query(
    page: &Bound<'_, PyAny>,
    limit: &Bound<'_, PyAny>,
    range: AnalyticsRange,
) -> Result<ListQuery, Error> {
    Ok(ListQuery {
        page: opt_int(page, "page")?,
        limit: opt_int(limit, "limit")?,
        range,
    })
}

/// The `get` and `list` functions of a campaign resource (triggers, drips), read the same
/// way: `$get` makes the request of the operation `$get_op` (the id named `$id`, as the
/// method's parameter), `$list` that of `$list_op`.
macro_rules! campaign_reads {
    ($get:ident $get_op:ident, $list:ident $list_op:ident, $id:ident) => {
        #[doc = concat!("The call of [`", stringify!($get_op), "`].")]
        #[pyfunction]
        #[pyo3(signature = ($id, *, analytics_start_at, analytics_end_at))]
        fn $get(
            $id: &Bound<'_, PyAny>,
            analytics_start_at: &Bound<'_, PyAny>,
            analytics_end_at: &Bound<'_, PyAny>,
        ) -> PyResult<PreparedCall> {
            prepare_request::<$get_op>($id.py(), || {
                let range = range(analytics_start_at, analytics_end_at)?;
                campaign_query($id, stringify!($id), range)
            })
        }

        #[doc = concat!("The call of [`", stringify!($list_op), "`].")]
        #[pyfunction]
        #[pyo3(signature = (*, page, limit, analytics_start_at, analytics_end_at))]
        fn $list(
            page: &Bound<'_, PyAny>,
            limit: &Bound<'_, PyAny>,
            analytics_start_at: &Bound<'_, PyAny>,
            analytics_end_at: &Bound<'_, PyAny>,
        ) -> PyResult<PreparedCall> {
            prepare_request::<$list_op>(page.py(), || {
                list_query(page, limit, range(analytics_start_at, analytics_end_at)?)
            })
        }
    };
}
pub(crate) use campaign_reads;

/// The items of the list `obj`, each as `each` makes it JSON (given the item's path).
pub fn items_of(
    obj: &Bound<'_, PyAny>,
    field: &str,
    each: impl Fn(&Bound<'_, PyAny>, &str) -> Result<Value, Error>,
) -> Result<Vec<Value>, Error> {
    if obj.is_none() {
        return Err(Error::validation(field, message![FIELD, " is required"]));
    }
    if obj.is_instance_of::<PyDict>() || obj.is_instance_of::<PyString>() {
        return Err(Error::validation(field, message![FIELD, " must be a list"]));
    }
    each_item(obj, field, "a list", each)
}

/// Each item of the iterable `obj` as `each` reads it, given the item's path (`field[i]`);
/// `obj` not iterable is refused as not being `kind`.
fn each_item<T>(
    obj: &Bound<'_, PyAny>,
    field: &str,
    kind: &str,
    each: impl Fn(&Bound<'_, PyAny>, &str) -> Result<T, Error>,
) -> Result<Vec<T>, Error> {
    let iter = obj
        .try_iter()
        .map_err(|_| Error::validation(field, message![FIELD, format!(" must be {kind}")]))?;
    let mut out = Vec::new();
    for (i, item) in iter.enumerate() {
        let item = item.map_err(|e| Error::validation(field, e.to_string()))?;
        out.push(each(&item, &format!("{field}[{i}]"))?);
    }
    Ok(out)
}

/// A mapping of header names to str values, each checked by [`extra_header`] as `field`'s.
pub fn headers(
    value: &Bound<'_, PyAny>,
    field: &str,
) -> Result<Vec<(HeaderName, HeaderValue)>, Error> {
    let mut out = Vec::new();
    for (k, v) in pairs(value, field)? {
        let Ok(text) = v.cast::<PyString>() else {
            return Err(Error::validation(
                field,
                message![FIELD, format!("[{k:?}] must be a str")],
            ));
        };
        out.push(extra_header(field, &k, &text.to_string_lossy())?);
    }
    Ok(out)
}

/// A mapping's items with str keys, or an error naming the option.
pub fn pairs<'py>(
    value: &Bound<'py, PyAny>,
    option: &str,
) -> Result<Vec<(String, Bound<'py, PyAny>)>, Error> {
    let not_a_mapping = || {
        Error::validation(
            option,
            message![
                FIELD,
                format!(
                    " must be a mapping of names to values, not {}",
                    value
                        .get_type()
                        .name()
                        .map_or_else(|_| "?".to_string(), |n| n.to_string())
                )
            ],
        )
    };
    let mapping = value.cast::<PyMapping>().map_err(|_| not_a_mapping())?;
    let items = mapping.items().map_err(|_| not_a_mapping())?;
    let mut out = Vec::new();
    for item in items.iter() {
        let (k, v): (Bound<'py, PyAny>, Bound<'py, PyAny>) =
            item.extract().map_err(|_| not_a_mapping())?;
        let Ok(key) = k.cast::<PyString>() else {
            return Err(Error::validation(
                option,
                message![FIELD, format!("'s names must be str, not {}", k.get_type())],
            ));
        };
        let key = key.to_string_lossy().into_owned();
        if key.is_empty() {
            return Err(Error::validation(
                option,
                message![FIELD, " has an empty name"],
            ));
        }
        out.push((key, v));
    }
    Ok(out)
}

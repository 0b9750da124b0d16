//! A call's result as the Python object its method returns (with the GIL): models,
//! `Page`s, lists, and per-item outcomes of batches with their exceptions.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use pythonize::pythonize;
use serde_json::{Map, Value};

use crate::bindings::errors::{to_pyerr, SAME};
use crate::bindings::page::Page;
use crate::client::checkpoint::Prior;
use crate::client::transport::RawAnswer;
use crate::client::{bulk, Error};
use crate::model::{Drip, Page as ListPage, Segment, SummaryRead, TriggeredCampaign};

pub enum Output {
    Trigger(Box<TriggeredCampaign>),
    Triggers(ListPage<TriggeredCampaign>),
    Drip(Box<Drip>),
    Drips(ListPage<Drip>),
    Id(i64),
    Segments(Vec<Segment>),
    Text(String),
    Nothing,
    Rows(Vec<SummaryRead>),
    Distribution(Map<String, Value>),
    /// An answer's body as JSON (`client.request`).
    Json(Value),
    Batch(Vec<Result<(), Error>>),
    Chunks(Vec<bulk::Chunk>),
    /// A result with the answer it was read from (`with_raw_response`): a `(result, raw)`
    /// tuple in Python.
    WithRaw(Box<Output>, crate::client::transport::RawAnswer),
    /// A successful answer the typed read could not take, kept for `with_raw_response`:
    /// the error as an exception object, which `APIResponse.parse()` raises.
    Unread(Error),
}

/// Each operation's response as the output its method returns (see `sends!`).
macro_rules! outputs {
    ($($response:ty => $make:expr;)*) => {$(
        impl From<$response> for Output {
            fn from(response: $response) -> Output {
                let make: fn($response) -> Output = $make;
                make(response)
            }
        }
    )*};
}

outputs! {
    TriggeredCampaign => |campaign| Output::Trigger(Box::new(campaign));
    ListPage<TriggeredCampaign> => Output::Triggers;
    Drip => |drip| Output::Drip(Box::new(drip));
    ListPage<Drip> => Output::Drips;
    i64 => Output::Id;
    Vec<Segment> => Output::Segments;
    String => Output::Text;
    () => |()| Output::Nothing;
    Vec<SummaryRead> => Output::Rows;
    Map<String, Value> => Output::Distribution;
}

fn page<T>(py: Python<'_>, p: ListPage<T>) -> PyResult<Py<PyAny>>
where
    T: pyo3::PyClass + Into<pyo3::PyClassInitializer<T>>,
{
    let list = PyList::empty(py);
    for item in p.data {
        list.append(Py::new(py, item)?)?;
    }
    let page = Page {
        data: list.unbind(),
        total: p.meta.total,
        page: p.meta.page,
        per_page: p.meta.per_page,
        last_page: p.meta.last_page,
    };
    Ok(Py::new(py, page)?.into_any())
}

impl Output {
    pub fn into_py(self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(match self {
            Output::Trigger(t) => Py::new(py, *t)?.into_any(),
            Output::Triggers(p) => page(py, p)?,
            Output::Drip(d) => Py::new(py, *d)?.into_any(),
            Output::Drips(p) => page(py, p)?,
            Output::Id(id) => id.into_pyobject(py)?.into_any().unbind(),
            Output::Segments(s) => {
                let list = PyList::empty(py);
                for seg in s {
                    list.append(Py::new(py, seg)?)?;
                }
                list.into_any().unbind()
            }
            Output::Text(s) => s.into_pyobject(py)?.into_any().unbind(),
            Output::Nothing => py.None(),
            Output::WithRaw(out, raw) => {
                let raw = raw_into_py(py, raw)?;
                (out.into_py(py)?, raw)
                    .into_pyobject(py)?
                    .into_any()
                    .unbind()
            }
            Output::Rows(rows) => {
                let list = PyList::empty(py);
                for SummaryRead { row, extra } in rows {
                    let dict = pythonize(py, &row)?;
                    // A day, also when the service writes it with a midnight time, given as
                    // a `datetime.date`: a calendar day (a UTC one), not an instant, which
                    // polars, pyarrow and duckdb read as their date type and a CSV or JSON
                    // writer as `YYYY-MM-DD`. A text that names no day is kept as it came.
                    let day = match row.date.as_bytes().get(10) {
                        Some(b' ' | b'T') => &row.date[..10],
                        _ => row.date.as_str(),
                    };
                    if let Ok(d) = chrono::NaiveDate::parse_from_str(day, "%Y-%m-%d") {
                        dict.set_item("date", d)?;
                    }
                    for (key, value) in &extra {
                        dict.set_item(key, pythonize(py, value)?)?;
                    }
                    list.append(dict)?;
                }
                list.into_any().unbind()
            }
            Output::Distribution(m) => pythonize(py, &m)?.unbind(),
            Output::Json(v) => pythonize(py, &v)?.unbind(),
            Output::Unread(e) => to_pyerr(py, e, SAME).into_value(py).into_any(),
            Output::Batch(results) => {
                let list = PyList::empty(py);
                for r in results {
                    match r {
                        Ok(()) => list.append(py.None())?,
                        Err(e) => list.append(to_pyerr(py, e, SAME).into_value(py))?,
                    }
                }
                list.into_any().unbind()
            }
            Output::Chunks(chunks) => {
                let list = PyList::empty(py);
                for c in chunks {
                    let stored_before = c.prior == Some(Prior::Stored);
                    let (message, error) = match c.outcome {
                        Ok(_) if stored_before => (None, None),
                        Ok(m) => (Some(m), None),
                        Err(e) => (None, Some(to_pyerr(py, e, SAME).into_value(py))),
                    };
                    let prior = c.prior.map(Prior::name);
                    list.append((c.index, c.items.start, c.items.len(), message, error, prior))?;
                }
                list.into_any().unbind()
            }
        })
    }
}

/// The raw answer as `pushwire.APIResponse` takes it: `(status_code, http_version, headers
/// as (name, value) pairs, body, method, url, elapsed seconds, retries)`.
fn raw_into_py(py: Python<'_>, raw: RawAnswer) -> PyResult<Py<PyAny>> {
    let tuple = (
        raw.status,
        raw.http_version,
        raw.headers,
        PyBytes::new(py, &raw.body),
        raw.method,
        raw.url,
        raw.elapsed.as_secs_f64(),
        raw.retries,
    );
    Ok(tuple.into_pyobject(py)?.into_any().unbind())
}

//! `events.track` and `events.track_many`: each event read as its JSON body (a DataFrame's
//! row included, its missing values left out), then sent by `crate::client::events` and
//! `crate::client::bulk`. A blocking `track_many` may instead be shared with the I/O threads
//! (`crate::bindings::batch_across_threads`), which reads its events with [`event`].

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use serde_json::{Map, Value};

use super::args::{arg, concurrency};
use super::output::Output;
use crate::bindings::convert::{is_missing, to_json};
use crate::bindings::stop;
use crate::client::{bulk, events, Error, Transport};

/// The calls of this resource, as the Python wrapper names them after `events.`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Name {
    Track,
    TrackMany,
}

pub enum Call {
    Track(Map<String, Value>),
    /// Each event as sent, or why it is not; the requests in flight at most.
    TrackMany(Vec<Result<Map<String, Value>, Error>>, usize),
}

/// Reads the arguments of `name`, in the order the Python wrapper passes them.
pub fn parse(name: Name, args: &Bound<'_, PyTuple>) -> Result<Call, Error> {
    Ok(match name {
        Name::Track => Call::Track(track_body(args)?),
        Name::TrackMany => {
            let (items, concurrency) = track_many_args(args)?;
            let mut out = Vec::with_capacity(items.len());
            for item in items.iter() {
                out.push(event(&item));
                if stop::pending() {
                    // Ctrl-C in a row's own code: the caller raises it (`stop::take`).
                    return Err(stop::placeholder());
                }
            }
            Call::TrackMany(out, concurrency)
        }
    })
}

/// The body of `events.track(event_name, profile_id, device_token_hash, data)`.
fn track_body(args: &Bound<'_, PyTuple>) -> Result<Map<String, Value>, Error> {
    let a = |i| arg(args, i);
    let mut body = Map::new();
    body.insert("event_name".into(), to_json(&a(0), "event_name")?);
    for (i, key) in [(1, "profile_id"), (2, "device_token_hash")] {
        if !a(i).is_none() {
            body.insert(key.into(), to_json(&a(i), key)?);
        }
    }
    if !a(3).is_none() {
        // A DataFrame row's missing values are absent fields, as in `track_many`.
        let data = match a(3).cast::<PyDict>() {
            Ok(d) => without_missing(d)?.into_any(),
            Err(_) => a(3),
        };
        body.insert("data".into(), to_json(&data, "data")?);
    }
    body.retain(|_, v| !v.is_null());
    ids_as_text(&mut body);
    events::check(&body)?;
    Ok(body)
}

impl Call {
    /// Whether the call sends a batch of requests rather than one (with its retries).
    pub fn is_batch(&self) -> bool {
        matches!(self, Call::TrackMany(..))
    }

    pub async fn run(self, t: &Transport) -> Result<Output, Error> {
        Ok(match self {
            Call::Track(body) => {
                events::track_checked(t, &body).await?;
                Output::Nothing
            }
            Call::TrackMany(items, concurrency) => {
                Output::Batch(bulk::track_many(t, items, concurrency).await)
            }
        })
    }
}

/// An event dict without its NaN values: a dataframe's empty cell (pandas puts NaN where a
/// column of strings has none). Anything else is returned as it is; None values are dropped
/// after conversion.
fn without_blanks<'py>(item: &Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>, Error> {
    // A pandas row (`df.iterrows()`) is a Series: its dict.
    let as_dict;
    let d = match item.cast::<PyDict>() {
        Ok(d) => d,
        Err(_) => match item
            .call_method0("to_dict")
            .map(|d| d.cast_into::<PyDict>())
        {
            Ok(Ok(d)) => {
                as_dict = d;
                &as_dict
            }
            // Ctrl-C landed in the row's own code: the call stops (see `stop::take`).
            Err(e) if !e.is_instance_of::<pyo3::exceptions::PyException>(item.py()) => {
                return Err(stop::stash(e));
            }
            _ => return Ok(item.clone()),
        },
    };
    // The event's own fields, and those of its `data`, one level down.
    let data = d
        .get_item("data")
        .ok()
        .flatten()
        .and_then(|v| v.cast_into::<PyDict>().ok());
    let data_blank = data
        .as_ref()
        .is_some_and(|data| data.iter().any(|(_, v)| is_missing(&v)));
    if !data_blank && !d.iter().any(|(_, v)| is_missing(&v)) {
        return Ok(d.clone().into_any());
    }
    let out = without_missing(d)?;
    if let Some(data) = data.filter(|_| data_blank) {
        out.set_item("data", without_missing(&data)?)
            .map_err(|e| Error::validation("events", e.to_string()))?;
    }
    Ok(out.into_any())
}

/// A copy of `d` without its missing values (`convert::is_missing`).
fn without_missing<'py>(d: &Bound<'py, PyDict>) -> Result<Bound<'py, PyDict>, Error> {
    let out = PyDict::new(d.py());
    for (k, v) in d.iter() {
        if !is_missing(&v) {
            out.set_item(k, v)
                .map_err(|e| Error::validation("events", e.to_string()))?;
        }
    }
    Ok(out)
}

/// An event's subscriber ids as the text the service's schema wants: an integer id (a
/// DataFrame's int64 `user_id` column) is sent as its digits.
fn ids_as_text(body: &mut Map<String, Value>) {
    for key in ["profile_id", "device_token_hash"] {
        if let Some(v) = body.get_mut(key) {
            if v.is_i64() || v.is_u64() {
                *v = Value::String(v.to_string());
            }
        }
    }
}

/// The events of `events.track_many` (the Python wrapper passes them as a list) and its
/// concurrency.
pub fn track_many_args<'py>(
    args: &Bound<'py, PyTuple>,
) -> Result<(Bound<'py, PyList>, usize), Error> {
    let concurrency = concurrency(&arg(args, 1))?;
    let items = arg(args, 0)
        .cast_into::<PyList>()
        .map_err(|_| Error::validation("events", "events must be a list of dicts"))?;
    Ok((items, concurrency))
}

/// One event of a batch, as sent, or why it is not sent. Never raises: a batch may have
/// started sending the events before it.
pub fn event(item: &Bound<'_, PyAny>) -> Result<Map<String, Value>, Error> {
    match to_json(&without_blanks(item)?, "") {
        Ok(Value::Object(mut body)) => {
            // A None is an absent field, as for `track()`: the service's schema refuses
            // `null` ("must be a string"), and a row of a dataframe has None where a column
            // does not apply.
            body.retain(|_, v| !v.is_null());
            ids_as_text(&mut body);
            events::check(&body).map(|_| body)
        }
        Ok(_) => Err(Error::validation("events", "each event must be a dict")),
        Err(e) => Err(e),
    }
}

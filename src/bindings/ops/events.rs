//! `events.track` and `events.track_many`: each event read as its JSON body (a DataFrame's
//! row included, its missing values left out), then sent by `crate::client::events` and
//! `crate::client::bulk`. A blocking `track_many` may instead be shared with the I/O threads
//! (`crate::bindings::batch_across_threads`), which reads its events with [`event`].

use crate::message;
use crate::validate::FIELD;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde_json::{Map, Value};

use super::args::concurrency;
use super::operation::{
    keyed_call, prepare, request, sends, Known, Op, PreparedCall, Ready, Run, Running, SAME,
};
use super::output::Output;
use crate::bindings::convert::{is_missing, to_json};
use crate::bindings::stop;
use crate::client::{bulk, events, Error, Transport};
use crate::operations::EventsTrack;

// An event's body is checked when it is read (`track_body`).
sends! {
    EventsTrack: events::track_checked;
}

/// `track_many`'s events, each read as its body or its error, and the concurrency.
pub struct TrackMany(Vec<Result<Map<String, Value>, Error>>, usize);

keyed_call! {
    /// `client.events.track`'s call. A dataframe's missing cell (NaN, `pd.NA`) in
    /// `profile_id`, `device_token_hash` or `data` is an absent field, as in `track_many`.
    fn events_track(event_name; profile_id, device_token_hash, data) -> EventsTrack {
        request::<EventsTrack>(track_body(&event_name, &profile_id, &device_token_hash, &data)?)
    }
}

/// `client.events.track_many`'s call: the list of events and the concurrency checked, the
/// events read when the call runs (see [`Ready::Events`]).
#[pyfunction]
#[pyo3(signature = (events, *, concurrency))]
fn events_track_many(
    events: &Bound<'_, PyAny>,
    concurrency: &Bound<'_, PyAny>,
) -> PyResult<PreparedCall> {
    prepare(events.py(), Known::as_("events.track_many", SAME), || {
        let concurrency = self::concurrency(concurrency)?;
        let events = events.cast::<PyList>().map_err(|_| {
            Error::validation("events", message![FIELD, " must be a list of dicts"])
        })?;
        Ok(Ready::Events(events.clone().unbind(), concurrency))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(events_track, m)?)?;
    m.add_function(wrap_pyfunction!(events_track_many, m)?)
}

/// `track_many`'s events read, in order, each as its body or its error; the call stops at a
/// Ctrl-C landed in an event's own code.
pub fn read_events(events: &Bound<'_, PyList>, concurrency: usize) -> Result<Op, Error> {
    let mut out = Vec::with_capacity(events.len());
    for item in events.iter() {
        out.push(event(&item));
        if stop::pending() {
            // Ctrl-C in a row's own code: the caller raises it (`stop::take`).
            return Err(stop::placeholder());
        }
    }
    Ok(Box::new(TrackMany(out, concurrency)))
}

fn track_body(
    event_name: &Bound<'_, PyAny>,
    profile_id: &Bound<'_, PyAny>,
    device_token_hash: &Bound<'_, PyAny>,
    data: &Bound<'_, PyAny>,
) -> Result<Map<String, Value>, Error> {
    let mut body = Map::new();
    body.insert("event_name".into(), to_json(event_name, "event_name")?);
    for (value, key) in [
        (profile_id, "profile_id"),
        (device_token_hash, "device_token_hash"),
    ] {
        if !is_missing(value) {
            body.insert(key.into(), to_json(value, key)?);
        }
    }
    if !is_missing(data) {
        // A DataFrame row's missing values are absent fields, as in `track_many`.
        let data = match data.cast::<PyDict>() {
            Ok(d) => without_missing(d)?.into_any(),
            Err(_) => data.clone(),
        };
        body.insert("data".into(), to_json(&data, "data")?);
    }
    body.retain(|_, v| !v.is_null());
    ids_as_text(&mut body);
    events::check(&body)?;
    Ok(body)
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

impl Run for TrackMany {
    fn run(self: Box<Self>, t: &Transport) -> Running<'_> {
        let TrackMany(items, concurrency) = *self;
        Box::pin(async move { Ok(Output::Batch(bulk::track_many(t, items, concurrency).await)) })
    }

    fn is_single_request(&self) -> bool {
        false
    }
}

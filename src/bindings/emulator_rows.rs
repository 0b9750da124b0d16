//! A page of the emulator's subscribers or deliveries made into Python dicts directly, with
//! the same keys, values and order as the admin API's JSON read through `json.loads` and
//! its times made aware datetimes: a million-row read costs well under a microsecond a
//! row, where the JSON text, its decoding and the times parsed in Python cost several.
//!
//! Written by hand rather than through `pythonize`: its dicts would hold the times as
//! text, to be parsed again in Python, and make each key and each broadcast's shared text
//! once per row; here the keys are interned once, a send's title, message and URL are made
//! once for all its rows, and an interned profile field once per value.

use std::collections::HashMap;
use std::sync::Arc;

use chrono::{DateTime, Datelike, Timelike, Utc};
use pyo3::prelude::*;
use pyo3::types::{PyDateTime, PyDict, PyList, PyModule, PyString, PyTzInfo};
use pythonize::pythonize;

use crate::emulator::admin::{DeliveryRow, Rows, PROFILE_FIELDS};
use crate::emulator::state::{Dispatch, Scalar, Subscriber, Sym};

/// `rows` as a list of dicts.
pub fn to_python(py: Python<'_>, rows: Rows) -> PyResult<Py<PyList>> {
    let mut made = Made::new(py)?;
    // Python's cycle collector paused while the rows are made: a page of a hundred thousand
    // dicts, each holding a list, would otherwise run it a hundred times over objects that
    // can hold no cycle yet, half the time of the read. No Python code runs meanwhile (the
    // GIL is held throughout), so no other thread sees it paused.
    let _paused = GcPaused::new(py)?;
    match rows {
        Rows::Subscribers(rows) => {
            let keys = ["subscriber_hash", "profile_id"]
                .into_iter()
                .chain(PROFILE_FIELDS)
                .chain([
                    "attributes",
                    "subscribed_at",
                    "unsubscribed_at",
                    "segments",
                    "online",
                ]);
            each(py, &mut made, keys, &rows, subscriber)
        }
        Rows::Deliveries(rows) => each(
            py,
            &mut made,
            DELIVERY_KEYS.iter().copied(),
            &rows,
            delivery,
        ),
    }
}

/// A list of `make`'s dict of each row, each a copy of a dict of `keys` (in the admin API's
/// order) given its values: a dict made at its size at once, where one grown key by key is
/// resized twice.
fn each<'py, T>(
    py: Python<'py>,
    made: &mut Made,
    keys: impl Iterator<Item = &'static str>,
    rows: &[T],
    make: impl Fn(&Bound<'py, PyDict>, &T, &mut Made) -> PyResult<()>,
) -> PyResult<Py<PyList>> {
    let template = PyDict::new(py);
    for k in keys {
        template.set_item(PyString::intern(py, k), py.None())?;
    }
    let out = PyList::empty(py);
    for row in rows {
        let d = template.copy()?;
        make(&d, row, made)?;
        out.append(d)?;
    }
    Ok(out.unbind())
}

/// The keys of a delivery's row, in the admin API's order.
const DELIVERY_KEYS: &[&str] = &[
    "delivery_id",
    "subscriber_hash",
    "title",
    "message",
    "url",
    "image_url",
    "big_image_url",
    "actions",
    "source",
    "source_id",
    "notification_id",
    "status",
    "queued_at",
    "sent_at",
    "expires_at",
    "viewed_at",
    "clicked_at",
];

/// Pauses Python's cycle collector until dropped, if it was running.
struct GcPaused<'py>(Option<Bound<'py, PyModule>>);

impl<'py> GcPaused<'py> {
    fn new(py: Python<'py>) -> PyResult<GcPaused<'py>> {
        let gc = py.import("gc")?;
        if gc.call_method0("isenabled")?.is_truthy()? {
            gc.call_method0("disable")?;
            return Ok(GcPaused(Some(gc)));
        }
        Ok(GcPaused(None))
    }
}

impl Drop for GcPaused<'_> {
    fn drop(&mut self) {
        if let Some(gc) = &self.0 {
            // Enabling cannot fail but by a broken `gc` module; the rows are made either way.
            let _ = gc.call_method0("enable");
        }
    }
}

/// The Python values one read has made already and gives out again: immutable ones only
/// (strings, UTC), so that no row can change another's.
struct Made {
    syms: HashMap<Sym, Py<PyString>>,
    /// A send's title, message, URL and images, by the send (its `Dispatch`'s address,
    /// kept alive by the rows that point at it).
    sends: HashMap<*const Dispatch, [Option<Py<PyString>>; 5]>,
    utc: Py<PyTzInfo>,
    /// The keys of a subscriber's profile fields, in `Subscriber::profile`'s order.
    profile_keys: [Py<PyString>; 7],
}

impl Made {
    fn new(py: Python<'_>) -> PyResult<Made> {
        Ok(Made {
            syms: HashMap::new(),
            sends: HashMap::new(),
            utc: PyTzInfo::utc(py)?.to_owned().unbind(),
            profile_keys: PROFILE_FIELDS.map(|k| PyString::intern(py, k).unbind()),
        })
    }

    /// A time as the admin API gives it: to the millisecond (its JSON text's precision), in
    /// UTC.
    fn time<'py>(&self, py: Python<'py>, t: Option<DateTime<Utc>>) -> PyResult<Bound<'py, PyAny>> {
        let Some(t) = t else {
            return Ok(py.None().into_bound(py));
        };
        let (date, time) = (t.date_naive(), t.time());
        let micro = time.nanosecond().min(999_999_999) / 1_000_000 * 1_000;
        let made = PyDateTime::new(
            py,
            date.year(),
            date.month() as u8,
            date.day() as u8,
            time.hour() as u8,
            time.minute() as u8,
            time.second() as u8,
            micro,
            Some(self.utc.bind(py)),
        )?;
        Ok(made.into_any())
    }

    fn sym<'py>(&mut self, py: Python<'py>, sym: Option<Sym>) -> Bound<'py, PyAny> {
        match sym {
            None => py.None().into_bound(py),
            Some(s) => self
                .syms
                .entry(s)
                .or_insert_with(|| PyString::new(py, s.as_str()).unbind())
                .bind(py)
                .clone()
                .into_any(),
        }
    }
}

fn scalar<'py>(py: Python<'py>, v: &Scalar) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Scalar::Null => py.None().into_bound(py),
        Scalar::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Scalar::Text(t) => PyString::new(py, t).into_any(),
        Scalar::Number(n) => pythonize(py, n)?,
        Scalar::Other(v) => pythonize(py, v.as_ref())?,
    })
}

fn subscriber(d: &Bound<'_, PyDict>, s: &Subscriber, made: &mut Made) -> PyResult<()> {
    let py = d.py();
    d.set_item(
        pyo3::intern!(py, "subscriber_hash"),
        &*s.subscriber_hash.text(),
    )?;
    d.set_item(pyo3::intern!(py, "profile_id"), s.profile_id.as_deref())?;
    for (i, value) in s.profile().into_iter().enumerate() {
        let key = made.profile_keys[i].clone_ref(py);
        d.set_item(key, made.sym(py, value))?;
    }
    let attributes = PyDict::new(py);
    for (name, value) in s.attributes.iter() {
        attributes.set_item(name, scalar(py, value)?)?;
    }
    d.set_item(pyo3::intern!(py, "attributes"), attributes)?;
    d.set_item(
        pyo3::intern!(py, "subscribed_at"),
        made.time(py, Some(s.subscribed_at))?,
    )?;
    d.set_item(
        pyo3::intern!(py, "unsubscribed_at"),
        made.time(py, s.unsubscribed_at)?,
    )?;
    // Ids as `str`, as `create_segment` and `segments.list()` give them.
    let segments = PyList::empty(py);
    for id in s.segments.iter() {
        segments.append(id.to_string())?;
    }
    d.set_item(pyo3::intern!(py, "segments"), segments)?;
    d.set_item(pyo3::intern!(py, "online"), s.online)
}

fn delivery(d: &Bound<'_, PyDict>, r: &DeliveryRow, made: &mut Made) -> PyResult<()> {
    let py = d.py();
    let send = &r.dispatch;
    let c = &send.content;
    let texts = made.sends.entry(Arc::as_ptr(send)).or_insert_with(|| {
        let text = |t: Option<&str>| t.map(|t| PyString::new(py, t).unbind());
        [
            text(Some(&c.title)),
            text(Some(&c.message)),
            text(Some(&c.url)),
            text(c.image_url.as_deref()),
            text(c.big_image_url.as_deref()),
        ]
    });
    let [title, message, url, image, big_image] =
        texts.each_ref().map(|t| t.as_ref().map(|t| t.bind(py)));
    d.set_item(pyo3::intern!(py, "delivery_id"), r.delivery_id)?;
    d.set_item(
        pyo3::intern!(py, "subscriber_hash"),
        &*r.subscriber_hash.text(),
    )?;
    d.set_item(pyo3::intern!(py, "title"), title)?;
    d.set_item(pyo3::intern!(py, "message"), message)?;
    d.set_item(pyo3::intern!(py, "url"), url)?;
    d.set_item(pyo3::intern!(py, "image_url"), image)?;
    d.set_item(pyo3::intern!(py, "big_image_url"), big_image)?;
    // A list of its own for each row: a dict a test changes must not change another's.
    let actions = if c.actions.is_empty() {
        PyList::empty(py).into_any()
    } else {
        pythonize(py, &c.actions)?
    };
    d.set_item(pyo3::intern!(py, "actions"), actions)?;
    d.set_item(pyo3::intern!(py, "source"), source_name(py, send))?;
    d.set_item(pyo3::intern!(py, "source_id"), send.source_id)?;
    d.set_item(pyo3::intern!(py, "notification_id"), send.notification_id)?;
    d.set_item(pyo3::intern!(py, "status"), status_name(py, r))?;
    d.set_item(
        pyo3::intern!(py, "queued_at"),
        made.time(py, Some(send.queued_at))?,
    )?;
    d.set_item(pyo3::intern!(py, "sent_at"), made.time(py, r.sent_at)?)?;
    d.set_item(
        pyo3::intern!(py, "expires_at"),
        made.time(py, Some(send.expires_at))?,
    )?;
    d.set_item(pyo3::intern!(py, "viewed_at"), made.time(py, r.viewed_at)?)?;
    d.set_item(
        pyo3::intern!(py, "clicked_at"),
        made.time(py, r.clicked_at)?,
    )?;
    Ok(())
}

fn source_name<'py>(py: Python<'py>, send: &Dispatch) -> &'py Bound<'py, PyString> {
    use crate::emulator::state::Source;
    match send.source {
        Source::Broadcast => pyo3::intern!(py, "broadcast"),
        Source::Drip => pyo3::intern!(py, "drip"),
        Source::Trigger => pyo3::intern!(py, "trigger"),
    }
}

fn status_name<'py>(py: Python<'py>, r: &DeliveryRow) -> &'py Bound<'py, PyString> {
    use crate::emulator::state::Status;
    match r.status {
        Status::Delivered => pyo3::intern!(py, "delivered"),
        Status::Pending => pyo3::intern!(py, "pending"),
        Status::Expired => pyo3::intern!(py, "expired"),
        Status::Capped => pyo3::intern!(py, "capped"),
    }
}

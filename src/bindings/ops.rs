//! Every API call the Python face can make: parsed from Python arguments (with the GIL,
//! before anything is sent), run on the runtime (without it), and turned back into Python
//! objects (with it again).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple,
};
use pythonize::pythonize;
use serde_json::{Map, Value};

use super::convert::{self, date_text, is_missing, model, model_of, to_json, to_pyerr};
use super::models::Page;
use super::stop;
use super::utm;
use crate::client::{
    analytics, bulk, drips, events, notifications, products, segments, triggers, AnalyticsRange,
    Error, Transport,
};
use crate::model::{
    Audience, Drip, DripNotification, NewDrip, NewDripNotification, NewNotification, Product,
    Segment, SendTo, TriggeredCampaign, UtmParams,
};

pub enum Op {
    TriggerGet(i64, AnalyticsRange),
    TriggerList(Option<i64>, Option<i64>, AnalyticsRange),
    DripCreate(Box<NewDrip>),
    DripGet(i64, AnalyticsRange),
    DripList(Option<i64>, Option<i64>, AnalyticsRange),
    SegmentList {
        segment_id: Option<String>,
        limit: Option<i64>,
        offset: Option<i64>,
        segment_type: Option<String>,
    },
    SegmentDelete(String),
    SegmentAdd(String, Vec<String>),
    Profiles(String, Vec<String>, &'static str),
    Summary(String, String, String),
    Subscribers(Option<Vec<String>>),
    Products(Vec<Product>),
    Notify(Box<NewNotification>),
    Track(Map<String, Value>),
    TrackMany(Vec<Result<Map<String, Value>, Error>>, usize),
    Bulk {
        what: BulkKind,
        target: String,
        items: Vec<String>,
        concurrency: usize,
        progress: Option<Py<PyAny>>,
        /// Report progress from a thread of its own rather than the one running the call
        /// (set for async calls, see [`Op::on_io_thread`]).
        offload_progress: bool,
    },
}

impl Op {
    /// Whether the op sends one request (with its retries), rather than a batch of them.
    pub fn is_single_request(&self) -> bool {
        !matches!(self, Op::TrackMany(..) | Op::Bulk { .. })
    }

    /// Marks the op as running on one of the client's I/O threads, which every async call
    /// shares: a progress callback must not wait for the GIL there (it would hold up every
    /// other call on that thread for as long), so reports go through a thread of their own.
    pub fn on_io_thread(mut self) -> Op {
        if let Op::Bulk {
            offload_progress, ..
        } = &mut self
        {
            *offload_progress = true;
        }
        self
    }
}

#[derive(Clone, Copy)]
pub enum BulkKind {
    AddHashes,
    AddProfiles,
    RemoveProfiles,
}

pub enum Output {
    Trigger(Box<TriggeredCampaign>),
    Triggers(crate::client::Page<TriggeredCampaign>),
    Drip(Box<Drip>),
    Drips(crate::client::Page<Drip>),
    Id(i64),
    Segments(Vec<Segment>),
    Text(String),
    Nothing,
    Rows(Vec<analytics::Row>),
    Distribution(Map<String, Value>),
    Batch(Vec<Result<(), Error>>),
    Chunks(Vec<bulk::Chunk>),
}

/// How a violation's field is named to the Python caller of `op`: the shared checks name
/// fields as the spec does (`notification_title`, `subscriber_hash`, `from`), the error names
/// the Python argument that carries them (`title`, `subscriber_hashes`, `start`).
pub fn renamer(op: &str) -> fn(&str) -> String {
    match op {
        "notifications.create" => |f| match f {
            "notification_title"
            | "notification_message"
            | "notification_url"
            | "notification_type"
            | "notification_expiry" => f["notification_".len()..].to_string(),
            _ => button_field(f).unwrap_or_else(|| f.to_string()),
        },
        "segments.add_subscribers" => |f| rename_head(f, "subscriber_hash", "subscriber_hashes"),
        "segments.add_profiles" | "segments.remove_profiles" => {
            |f| rename_head(f, "profile_id", "profile_ids")
        }
        "analytics.summary" => |f| match f {
            "from" => "start".to_string(),
            "to" => "end".to_string(),
            other => other.to_string(),
        },
        "analytics.subscribers" => |f| rename_head(f, "type", "types"),
        _ => |f| f.to_string(),
    }
}

/// A broadcast button's form field (`multi_element_url2`) as the Python argument that
/// carries it (`actions[1].url`).
fn button_field(f: &str) -> Option<String> {
    let rest = f.strip_prefix("multi_element_")?;
    let (part, slot) = rest.split_at(rest.find(|c: char| c.is_ascii_digit())?);
    let slot: usize = slot.parse().ok().filter(|k| *k >= 1)?;
    let attr = match part {
        "title" => "label",
        "url" => "url",
        "image" => "image_url",
        _ => return None,
    };
    Some(format!("actions[{}].{attr}", slot - 1))
}

/// `spec` (or `spec[i]...`) as `python` (or `python[i]...`); anything else unchanged.
fn rename_head(field: &str, spec: &str, python: &str) -> String {
    match field.strip_prefix(spec) {
        Some(rest) if rest.is_empty() || rest.starts_with('[') || rest.starts_with('.') => {
            format!("{python}{rest}")
        }
        _ => field.to_string(),
    }
}

fn arg<'py>(args: &Bound<'py, PyTuple>, i: usize) -> Bound<'py, PyAny> {
    args.get_item(i)
        .unwrap_or_else(|_| args.py().None().into_bound(args.py()))
}

fn concurrency(obj: &Bound<'_, PyAny>) -> Result<usize, Error> {
    match opt_int(obj, "concurrency")? {
        Some(c) if (1..=1024).contains(&c) => Ok(c as usize),
        Some(_) => Err(Error::validation(
            "concurrency",
            "concurrency must be between 1 and 1024",
        )),
        None => Ok(8),
    }
}

fn opt_int(obj: &Bound<'_, PyAny>, field: &str) -> Result<Option<i64>, Error> {
    if obj.is_none() {
        return Ok(None);
    }
    // Ints and whatever has __index__ (numpy's), never a bool or a float.
    if !obj.is_instance_of::<PyBool>() && !obj.is_instance_of::<PyFloat>() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Some(i));
        }
        if obj.is_instance_of::<PyInt>() {
            return Err(Error::validation(field, format!("{field} is out of range")));
        }
    }
    Err(Error::validation(
        field,
        format!("{field} must be an integer"),
    ))
}

/// A resource id: an int, or a str of digits (an id taken from a URL or a form).
fn id_int(obj: &Bound<'_, PyAny>, field: &str) -> Result<i64, Error> {
    if let Ok(s) = obj.cast::<PyString>() {
        let s = convert::text(s, field)?;
        let digits = !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        return match s.parse::<i64>() {
            Ok(i) if digits => Ok(i),
            _ if digits => Err(Error::validation(field, format!("{field} is out of range"))),
            _ => Err(Error::validation(
                field,
                format!("{field} must be an integer or a string of digits, not {s:?}"),
            )),
        };
    }
    int(obj, field)
}

fn int(obj: &Bound<'_, PyAny>, field: &str) -> Result<i64, Error> {
    opt_int(obj, field)?.ok_or_else(|| Error::validation(field, format!("{field} is required")))
}

/// An id given as an int or a str.
fn id_text(obj: &Bound<'_, PyAny>, field: &str) -> Result<String, Error> {
    if let Ok(s) = obj.cast::<PyString>() {
        return convert::text(s, field);
    }
    if is_missing(obj) {
        return Err(Error::validation(
            field,
            format!("{field} is missing (None or NaN): drop the empty entries first"),
        ));
    }
    int(obj, field).map(|i| i.to_string())
}

fn opt_text(obj: &Bound<'_, PyAny>, field: &str) -> Result<Option<String>, Error> {
    if obj.is_none() {
        return Ok(None);
    }
    match obj.cast::<PyString>() {
        Ok(s) => convert::text(s, field).map(Some),
        Err(_) => Err(Error::validation(
            field,
            format!("{field} must be a string"),
        )),
    }
}

fn text(obj: &Bound<'_, PyAny>, field: &str) -> Result<String, Error> {
    opt_text(obj, field)?.ok_or_else(|| Error::validation(field, format!("{field} is required")))
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
            format!("{field} must be a list of strings, not a single value"),
        ));
    }
    let iter = obj
        .try_iter()
        .map_err(|_| Error::validation(field, format!("{field} must be a list of strings")))?;
    let mut out = Vec::new();
    for (i, item) in iter.enumerate() {
        let item = item.map_err(|e| Error::validation(field, e.to_string()))?;
        out.push(id_text(&item, &format!("{field}[{i}]"))?);
    }
    Ok(out)
}

fn range(args: &Bound<'_, PyTuple>, at: usize) -> Result<AnalyticsRange, Error> {
    let d = |i: usize, name: &str| -> Result<Option<String>, Error> {
        let a = arg(args, i);
        if a.is_none() {
            Ok(None)
        } else {
            date_text(&a, name).map(Some)
        }
    };
    Ok(AnalyticsRange {
        start: d(at, "analytics_start_at")?,
        end: d(at + 1, "analytics_end_at")?,
    })
}

/// The items of the list `obj`, each as `each` makes it JSON (given the item's path).
fn items_of(
    obj: &Bound<'_, PyAny>,
    field: &str,
    each: impl Fn(&Bound<'_, PyAny>, &str) -> Result<Value, Error>,
) -> Result<Vec<Value>, Error> {
    if obj.is_none() {
        return Err(Error::validation(field, format!("{field} is required")));
    }
    if obj.is_instance_of::<PyDict>() || obj.is_instance_of::<PyString>() {
        return Err(Error::validation(field, format!("{field} must be a list")));
    }
    let iter = obj
        .try_iter()
        .map_err(|_| Error::validation(field, format!("{field} must be a list")))?;
    let mut out = Vec::new();
    for (i, item) in iter.enumerate() {
        let item = item.map_err(|e| Error::validation(field, e.to_string()))?;
        out.push(each(&item, &format!("{field}[{i}]"))?);
    }
    Ok(out)
}

/// A drip notification to create, as JSON: a notification read from a drip
/// (`drips.get(id).notifications`, or its `to_dict()`) is taken without its read-only
/// fields, so that a drip can be copied; anything else is read as given.
///
/// A dict with all of the read shape's own fields (`id`, `order`, `analytics`) is a read
/// notification's: the fields the service sent beyond the spec are left out with them (its
/// model keeps them in `extra`), the create shape's fields checked as any input's. A
/// hand-written dict keeps every check: a misspelt field is refused.
fn drip_notification_json(item: &Bound<'_, PyAny>, path: &str) -> Result<Value, Error> {
    if let Ok(read) = item.cast::<DripNotification>() {
        let new = NewDripNotification::from(read.get().clone());
        return serde_json::to_value(new).map_err(|e| Error::validation(path, e.to_string()));
    }
    let mut v = to_json(item, path)?;
    if let Value::Object(m) = &mut v {
        let read = NewDripNotification::READ_ONLY
            .iter()
            .all(|k| m.contains_key(*k));
        if read {
            m.retain(|k, _| NewDripNotification::FIELDS.contains(&k.as_str()));
        }
        for key in NewDripNotification::READ_ONLY {
            m.remove(key);
        }
    }
    Ok(v)
}

/// A drip's `send_to`: a `SendTo` or its dict, or a read drip's `audience` (an `Audience`
/// or its dict), which becomes the `send_to` that selects the same subscribers.
fn send_to_of(obj: &Bound<'_, PyAny>) -> Result<Option<SendTo>, Error> {
    if obj.is_none() {
        return Ok(None);
    }
    let given = to_json(obj, "send_to")?;
    let is_audience = obj.is_instance_of::<Audience>()
        || given
            .as_object()
            .is_some_and(|m| m.len() == 1 && m.contains_key("filter"));
    if is_audience {
        let audience: Audience = model_of(given, "send_to")?;
        return Ok(Some(SendTo::from_audience(&audience, "send_to")?));
    }
    if let Some(key) = crate::validate::empty_include(&given) {
        let field = format!("send_to.{key}");
        return Err(Error::validation(
            field.clone(),
            format!("{field} is empty, which would send to everyone: leave it out for no filter"),
        ));
    }
    Ok(Some(model_of(given, "send_to")?))
}

/// A product update: a `Product` or its dict, or an entry of the emulator's `products()`
/// (`{product, updated_at}`), which is its product.
fn product_json(item: &Bound<'_, PyAny>, path: &str) -> Result<Value, Error> {
    let v = to_json(item, path)?;
    let recorded = v.as_object().is_some_and(|m| {
        m.get("product").is_some_and(Value::is_object)
            && m.keys()
                .all(|k| matches!(k.as_str(), "product" | "updated_at"))
    });
    Ok(match v {
        Value::Object(mut m) if recorded => m.remove("product").unwrap_or_default(),
        v => v,
    })
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

/// Reads the arguments of `op`, in the order the Python wrappers pass them.
pub fn parse(op: &str, args: &Bound<'_, PyTuple>) -> Result<Op, Error> {
    let a = |i| arg(args, i);
    Ok(match op {
        "triggers.get" => Op::TriggerGet(id_int(&a(0), "trigger_id")?, range(args, 1)?),
        "triggers.list" => Op::TriggerList(
            opt_int(&a(0), "page")?,
            opt_int(&a(1), "limit")?,
            range(args, 2)?,
        ),
        "drips.get" => Op::DripGet(id_int(&a(0), "drip_id")?, range(args, 1)?),
        "drips.list" => Op::DripList(
            opt_int(&a(0), "page")?,
            opt_int(&a(1), "limit")?,
            range(args, 2)?,
        ),
        "drips.create" => {
            let notifications = items_of(&a(1), "notifications", drip_notification_json)?;
            let send_to = send_to_of(&a(2))?;
            // The same JSON type checks as the service, before the lenient model reading
            // (which would turn 3600.5 into 3600 or true into 1 without a word).
            let mut body = Map::new();
            body.insert("notifications".into(), Value::Array(notifications));
            crate::validate::drip_json_types(&body).map_err(|m| {
                let field = m.split(' ').next().unwrap_or("notifications").to_string();
                Error::validation(field, m)
            })?;
            let notifications = match body.remove("notifications") {
                Some(Value::Array(notifications)) => notifications,
                _ => Vec::new(),
            };
            let notifications = notifications
                .into_iter()
                .enumerate()
                .map(|(i, v)| model_of(v, &format!("notifications[{i}]")))
                .collect::<Result<Vec<NewDripNotification>, Error>>()?;
            let utm_params = if a(3).is_none() {
                None
            } else {
                let v = to_json(&a(3), "utm_params")?;
                utm::check_keys(&v)?;
                UtmParams::from_either(&v).map_err(|m| Error::validation("utm_params", m))?
            };
            Op::DripCreate(Box::new(NewDrip {
                campaign_name: text(&a(0), "campaign_name")?,
                notifications,
                send_to,
                utm_params,
            }))
        }
        "segments.list" => Op::SegmentList {
            segment_id: if a(0).is_none() {
                None
            } else {
                Some(id_text(&a(0), "segment_id")?)
            },
            limit: opt_int(&a(1), "limit")?,
            offset: opt_int(&a(2), "offset")?,
            segment_type: match opt_text(&a(3), "segment_type")? {
                // The spec names one value; anything else would be read as the default
                // (custom segments only) without a word, so a typo ("All") is refused.
                Some(t) if t != "all" => {
                    return Err(Error::validation(
                        "segment_type",
                        format!("segment_type must be \"all\" (every segment) or None (custom segments only), not {t:?}"),
                    ))
                }
                t => t,
            },
        },
        "segments.delete" => Op::SegmentDelete(id_text(&a(0), "segment_id")?),
        "segments.add_subscribers" => Op::SegmentAdd(
            id_text(&a(0), "segment_id")?,
            str_list(&a(1), "subscriber_hashes")?,
        ),
        "segments.add_profiles" | "segments.remove_profiles" => Op::Profiles(
            text(&a(0), "segment_name")?,
            str_list(&a(1), "profile_ids")?,
            if op == "segments.add_profiles" {
                "add"
            } else {
                "delete"
            },
        ),
        "analytics.summary" => Op::Summary(
            date_text(&a(0), "start")?,
            date_text(&a(1), "end")?,
            text(&a(2), "group_by")?,
        ),
        "analytics.subscribers" => Op::Subscribers(if a(0).is_none() {
            None
        } else {
            let types = str_list(&a(0), "types")?;
            // Sent as `type=`, which the service reads as no filter: every dimension.
            if types.is_empty() {
                return Err(Error::validation(
                    "types",
                    "types is empty: leave it out (None) for every dimension",
                ));
            }
            Some(types)
        }),
        "products.update" => Op::Products(
            items_of(&a(0), "products", product_json)?
                .into_iter()
                .enumerate()
                .map(|(i, v)| model_of(v, &format!("products[{i}]")))
                .collect::<Result<_, Error>>()?,
        ),
        "notifications.create" => {
            let n: NewNotification = model(&a(0), "")?;
            Op::Notify(Box::new(n))
        }
        "events.track_many" => {
            let (items, concurrency) = track_many_args(args)?;
            let mut out = Vec::with_capacity(items.len());
            for item in items.iter() {
                out.push(event(&item));
                if stop::pending() {
                    // Ctrl-C in a row's own code: the caller raises it (`stop::take`).
                    return Err(stop::placeholder());
                }
            }
            Op::TrackMany(out, concurrency)
        }
        "segments.add_subscribers_bulk"
        | "segments.add_profiles_bulk"
        | "segments.remove_profiles_bulk" => {
            let (what, target, field) = match op {
                "segments.add_subscribers_bulk" => {
                    let id = id_text(&a(0), "segment_id")?;
                    crate::validate::segment_id(&id)?;
                    (BulkKind::AddHashes, id, "hashes")
                }
                "segments.add_profiles_bulk" => (
                    BulkKind::AddProfiles,
                    text(&a(0), "segment_name")?,
                    "profile_ids",
                ),
                _ => (
                    BulkKind::RemoveProfiles,
                    text(&a(0), "segment_name")?,
                    "profile_ids",
                ),
            };
            let items = str_list(&a(1), field)?;
            if items.is_empty() {
                return Err(Error::validation(
                    field,
                    format!("{field} must not be empty"),
                ));
            }
            if let Some(i) = items.iter().position(|h| h.trim().is_empty()) {
                return Err(Error::validation(
                    field,
                    format!("{field}[{i}] must not be empty"),
                ));
            }
            let progress = if a(3).is_none() {
                None
            } else {
                Some(a(3).unbind())
            };
            Op::Bulk {
                what,
                target,
                items,
                concurrency: concurrency(&a(2))?,
                progress,
                offload_progress: false,
            }
        }
        "events.track" => {
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
            Op::Track(body)
        }
        other => return Err(Error::Config(format!("unknown operation {other}"))),
    })
}

pub async fn run(t: &Transport, op: Op) -> Result<Output, Error> {
    Ok(match op {
        Op::TriggerGet(id, r) => Output::Trigger(Box::new(triggers::get(t, id, &r).await?)),
        Op::TriggerList(p, l, r) => Output::Triggers(triggers::list(t, p, l, &r).await?),
        Op::DripCreate(d) => Output::Id(drips::create(t, &d).await?),
        Op::DripGet(id, r) => Output::Drip(Box::new(drips::get(t, id, &r).await?)),
        Op::DripList(p, l, r) => Output::Drips(drips::list(t, p, l, &r).await?),
        Op::SegmentList {
            segment_id,
            limit,
            offset,
            segment_type,
        } => Output::Segments(
            segments::list(
                t,
                segment_id.as_deref(),
                limit,
                offset,
                segment_type.as_deref(),
            )
            .await?,
        ),
        Op::SegmentDelete(id) => Output::Text(segments::delete(t, &id).await?),
        Op::SegmentAdd(id, hashes) => {
            Output::Text(segments::add_subscribers(t, &id, &hashes).await?)
        }
        Op::Profiles(name, ids, operation) => {
            segments::profiles(t, &name, &ids, operation).await?;
            Output::Nothing
        }
        Op::Summary(from, to, g) => Output::Rows(analytics::summary(t, &from, &to, &g).await?),
        Op::Subscribers(types) => {
            Output::Distribution(analytics::subscribers(t, types.as_deref()).await?)
        }
        Op::Products(p) => {
            products::update(t, &p).await?;
            Output::Nothing
        }
        Op::Notify(n) => Output::Id(notifications::create(t, &n).await?),
        Op::TrackMany(items, concurrency) => {
            Output::Batch(bulk::track_many(t, items, concurrency).await)
        }
        Op::Bulk {
            what,
            target,
            items,
            concurrency,
            progress,
            offload_progress,
        } => {
            let total = items.len();
            let membership = match what {
                BulkKind::AddHashes => bulk::Membership::AddHashes {
                    segment_id: &target,
                },
                BulkKind::AddProfiles => bulk::Membership::AddProfiles {
                    segment_name: &target,
                },
                BulkKind::RemoveProfiles => bulk::Membership::RemoveProfiles {
                    segment_name: &target,
                },
            };
            let call = move |cb: &Py<PyAny>, done: usize| {
                Python::attach(|py| {
                    if let Err(e) = cb.call1(py, (done, total)) {
                        log::warn!(target: "pushwire", "progress callback failed: {e}");
                    }
                })
            };
            // In place, on the thread of a blocking call: a failing callback is logged and
            // the call goes on, but Ctrl-C (or a SystemExit) raised in it, where Python runs
            // signal handlers, stops the call (see `stop::take`).
            let call_in_place = move |cb: &Py<PyAny>, done: usize| {
                if stop::pending() {
                    return;
                }
                Python::attach(|py| match cb.call1(py, (done, total)) {
                    Ok(_) => {}
                    Err(e) if e.is_instance_of::<pyo3::exceptions::PyException>(py) => {
                        log::warn!(target: "pushwire", "progress callback failed: {e}");
                    }
                    Err(e) => stop::request(e),
                })
            };
            match progress {
                Some(cb) if offload_progress => {
                    // In order, from one blocking-pool thread; the call ends after its last
                    // report, as when reports are made in place.
                    let (tx, rx) = std::sync::mpsc::channel::<usize>();
                    // Set when the call is dropped unfinished (cancelled): reports still
                    // queued then are not delivered.
                    let gone = Arc::new(AtomicBool::new(false));
                    let seen = gone.clone();
                    let reporter = tokio::task::spawn_blocking(move || {
                        while let Ok(done) = rx.recv() {
                            if !seen.load(Ordering::Acquire) {
                                call(&cb, done);
                            }
                        }
                    });
                    struct SetOnDrop(Arc<AtomicBool>);
                    impl Drop for SetOnDrop {
                        fn drop(&mut self) {
                            self.0.store(true, Ordering::Release);
                        }
                    }
                    let unfinished = SetOnDrop(gone);
                    let report = move |done: usize| {
                        let _ = tx.send(done);
                    };
                    let out = bulk::membership(t, membership, &items, concurrency, report).await;
                    let _ = reporter.await;
                    drop(unfinished); // every report was delivered
                    Output::Chunks(out)
                }
                Some(cb) => {
                    let report = |done: usize| call_in_place(&cb, done);
                    Output::Chunks(
                        bulk::membership(t, membership, &items, concurrency, report).await,
                    )
                }
                None => Output::Chunks(
                    bulk::membership(t, membership, &items, concurrency, |_| {}).await,
                ),
            }
        }
        Op::Track(body) => {
            events::track_checked(t, &body).await?;
            Output::Nothing
        }
    })
}

fn page<T>(py: Python<'_>, p: crate::client::Page<T>) -> PyResult<Py<PyAny>>
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
            Output::Rows(rows) => {
                let list = PyList::empty(py);
                for analytics::Row { row, extra } in rows {
                    let dict = pythonize(py, &row)?;
                    // A day, also when the service writes it with a midnight time.
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
            Output::Batch(results) => {
                let list = PyList::empty(py);
                for r in results {
                    match r {
                        Ok(()) => list.append(py.None())?,
                        Err(e) => list.append(to_pyerr(py, e, |f| f.to_string()).into_value(py))?,
                    }
                }
                list.into_any().unbind()
            }
            Output::Chunks(chunks) => {
                let list = PyList::empty(py);
                for c in chunks {
                    let (message, error) = match c.outcome {
                        Ok(m) => (Some(m), None),
                        Err(e) => (
                            None,
                            Some(to_pyerr(py, e, |f| f.to_string()).into_value(py)),
                        ),
                    };
                    list.append((c.index, c.start, c.size, message, error))?;
                }
                list.into_any().unbind()
            }
        })
    }
}

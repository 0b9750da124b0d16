//! `drips.create`, `drips.get` and `drips.list`: their arguments read (a drip read back
//! may be given to create a copy of it), then sent by `crate::client::drips`.

use pyo3::prelude::*;
use serde_json::{Map, Value};

use super::args::{campaign_query, campaign_reads, flag, items_of, list_query, range, text};
use super::operation::{checked, keyed_call, prepare_request, sends, PreparedCall};
use crate::bindings::convert::to_json;
use crate::bindings::model_input::model_of;
use crate::bindings::utm;
use crate::client::known_segments::{canonical, named_ids};
use crate::client::{drips, Error};
use crate::model::{Audience, DripNotification, NewDrip, NewDripNotification, SendTo, UtmParams};
use crate::operations::{DripsCreate, DripsGet, DripsList};

sends! {
    DripsCreate: drips::create;
    DripsGet: drips::get;
    DripsList: drips::list;
}

keyed_call! {
    /// `client.drips.create`'s call.
    /// Unless `check_segments` is false, a segment id of `send_to` the site does not have is
    /// refused when the call runs (`client::known_segments`).
    fn drips_create(campaign_name, notifications; send_to, utm_params, check_segments) -> DripsCreate {
        let mut drip = new_drip(&campaign_name, &notifications, &send_to, &utm_params)?;
        if let Some(to) = drip.send_to.as_mut() {
            to.include_segments.iter_mut().for_each(|ids| canonical(ids));
            canonical(&mut to.exclude_segments);
        }
        let segments = match &drip.send_to {
            // Only when its shape is sound, as for a broadcast.
            Some(to)
                if flag(&check_segments, "check_segments")?
                    && crate::validate::drip(&drip).is_ok() =>
            {
                named_ids([
                    ("send_to.include_segments", to.include_segments.as_deref()),
                    ("send_to.exclude_segments", Some(to.exclude_segments.as_slice())),
                ])
            }
            _ => Vec::new(),
        };
        checked::<DripsCreate>(drip, segments)
    }
}

campaign_reads!(drips_get DripsGet, drips_list DripsList, drip_id);

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(drips_create, m)?)?;
    m.add_function(wrap_pyfunction!(drips_get, m)?)?;
    m.add_function(wrap_pyfunction!(drips_list, m)?)
}

/// The drip `drips.create(campaign_name, notifications, send_to, utm_params)` makes.
fn new_drip(
    campaign_name: &Bound<'_, PyAny>,
    notifications: &Bound<'_, PyAny>,
    send_to: &Bound<'_, PyAny>,
    utm_params: &Bound<'_, PyAny>,
) -> Result<NewDrip, Error> {
    let notifications = items_of(notifications, "notifications", drip_notification_json)?;
    let send_to = send_to_of(send_to)?;
    // The same JSON type checks as the service, before the lenient model reading
    // (which would turn 3600.5 into 3600 or true into 1 without a word).
    let mut body = Map::new();
    body.insert("notifications".into(), Value::Array(notifications));
    crate::validate::drip_json_types(&body)?;
    let notifications = match body.remove("notifications") {
        Some(Value::Array(notifications)) => notifications,
        _ => Vec::new(),
    };
    let notifications = notifications
        .into_iter()
        .enumerate()
        .map(|(i, v)| model_of(v, &format!("notifications[{i}]")))
        .collect::<Result<Vec<NewDripNotification>, Error>>()?;
    let utm_params = if utm_params.is_none() {
        None
    } else {
        let v = to_json(utm_params, "utm_params")?;
        utm::check_keys(&v)?;
        UtmParams::from_either(&v).map_err(crate::validate::utm_refused)?
    };
    Ok(NewDrip {
        campaign_name: text(campaign_name, "campaign_name")?,
        notifications,
        send_to,
        utm_params,
    })
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
    Ok(Some(model_of(given, "send_to")?))
}

//! Triggered campaigns (4.1, 4.2) and drip autoresponders (4.3-4.5).

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, Uri};
use axum::Extension;
use serde_json::{json, Value};

use crate::emulator::api_error::{ok, ApiError, ApiResult};
use crate::emulator::emu::{Admitted, Emu};
use crate::emulator::engine::analytics::{fill_drip, fill_trigger, Range};
use crate::emulator::request::{int_param, json_object, query};
use crate::emulator::state::{iso, Counters, DripRec, Site};
use crate::form::Form;
use crate::model::{
    Analytics, Audience, Drip, DripNotification, DripOptions, Meta, NewDrip, UtmParams,
};
use crate::validate::{self, Violation};

fn bad(v: Violation) -> ApiError {
    ApiError::bad_campaign(v.message)
}

/// `page` and `limit` of a campaign list, and its analytics range.
fn list_params(q: &Form) -> Result<(i64, u32, Range), ApiError> {
    let raw_page = int_param(q, "page").map_err(bad)?;
    // Any page past the last is an empty one, but a page number must be one that `meta`
    // can give back.
    if raw_page == Some(i64::MAX) && q.text("page").is_some_and(|p| p.parse::<i64>().is_err()) {
        return Err(ApiError::bad_campaign(format!(
            "page must be at most {}",
            i64::MAX
        )));
    }
    let page = validate::page(raw_page).map_err(bad)?;
    let limit = validate::limit(int_param(q, "limit").map_err(bad)?).map_err(bad)?;
    let range = analytics_range(q)?;
    Ok((page, limit, range))
}

fn analytics_range(q: &Form) -> Result<Range, ApiError> {
    let (start, end) = validate::analytics_range(
        q.text("analytics_start_at").as_deref(),
        q.text("analytics_end_at").as_deref(),
    )
    .map_err(bad)?;
    Ok(Range { start, end })
}

/// Newest first, one page of it, and the `meta` of 4.2.
fn paginate<T: Clone>(items: &[T], page: i64, limit: u32) -> (Vec<T>, Meta) {
    let start = usize::try_from(page - 1)
        .unwrap_or(usize::MAX)
        .saturating_mul(limit as usize);
    let data = items
        .iter()
        .rev()
        .skip(start)
        .take(limit as usize)
        .cloned()
        .collect();
    (data, Meta::new(items.len(), page, limit))
}

/// The id of a campaign path. The path segment is taken whatever it holds (bytes that do
/// not decode to text included), so that every refusal is the spec's `InvalidRequestException`
/// rather than axum's plain-text rejection.
fn path_id(raw: Result<Path<String>, PathRejection>, what: &str) -> Result<i64, ApiError> {
    raw.ok()
        .and_then(|Path(raw)| raw.trim().parse::<i64>().ok())
        .filter(|id| *id > 0)
        .ok_or_else(|| ApiError::bad_campaign(format!("{what} must be a positive integer")))
}

pub async fn list_triggers(
    State(emu): State<Arc<Emu>>,
    Extension(site): Extension<Admitted>,
    uri: Uri,
) -> ApiResult {
    let (page, limit, range) = list_params(&query(&uri).map_err(ApiError::bad_campaign)?)?;
    let (data, meta) = emu.in_site(site, |s, _, _| {
        let (mut data, meta) = paginate(&s.triggers, page, limit);
        for t in &mut data {
            t.notifications = None;
            fill_trigger(s, t, range);
        }
        (data, meta)
    })?;
    ok(json!({"success": true, "data": data, "meta": meta}))
}

pub async fn get_trigger(
    State(emu): State<Arc<Emu>>,
    Extension(site): Extension<Admitted>,
    raw: Result<Path<String>, PathRejection>,
    uri: Uri,
) -> ApiResult {
    let id = path_id(raw, "trigger_id")?;
    let range = analytics_range(&query(&uri).map_err(ApiError::bad_campaign)?)?;
    let found = emu.in_site(site, |s, _, _| {
        let mut t = s.triggers.iter().find(|t| t.trigger_id == id).cloned()?;
        fill_trigger(s, &mut t, range);
        Some(t)
    })?;
    match found {
        Some(t) => ok(json!({"success": true, "data": t})),
        None => Err(ApiError::bad_campaign(format!(
            "Triggered campaign {id} does not exist"
        ))),
    }
}

pub async fn list_drips(
    State(emu): State<Arc<Emu>>,
    Extension(site): Extension<Admitted>,
    uri: Uri,
) -> ApiResult {
    let (page, limit, range) = list_params(&query(&uri).map_err(ApiError::bad_campaign)?)?;
    let (data, meta) = emu.in_site(site, |s, _, _| {
        let (recs, meta) = paginate(&s.drips, page, limit);
        let data: Vec<Drip> = recs
            .into_iter()
            .map(|r| {
                let mut d = Drip {
                    notifications: None,
                    ..r.drip
                };
                fill_drip(s, &mut d, range);
                d
            })
            .collect();
        (data, meta)
    })?;
    ok(json!({"success": true, "data": data, "meta": meta}))
}

pub async fn get_drip(
    State(emu): State<Arc<Emu>>,
    Extension(site): Extension<Admitted>,
    raw: Result<Path<String>, PathRejection>,
    uri: Uri,
) -> ApiResult {
    let id = path_id(raw, "drip_id")?;
    let range = analytics_range(&query(&uri).map_err(ApiError::bad_campaign)?)?;
    let found = emu.in_site(site, |s, _, _| {
        let mut d = s.drips.iter().find(|d| d.drip.drip_id == id)?.drip.clone();
        fill_drip(s, &mut d, range);
        Some(d)
    })?;
    match found {
        Some(d) => ok(json!({"success": true, "data": d})),
        None => Err(ApiError::bad_campaign(format!(
            "Drip autoresponder {id} does not exist"
        ))),
    }
}

/// Reads the body of 4.3; `utm_params` may come in either shape of 2.5.
pub fn parse_new_drip(mut obj: serde_json::Map<String, Value>) -> Result<NewDrip, String> {
    // An unknown key (`sendTo` for `send_to`) would be dropped and could widen the audience.
    const KEYS: [&str; 4] = ["campaign_name", "notifications", "send_to", "utm_params"];
    if let Some(k) = obj.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(format!(
            "{k} is not allowed: the body takes {}",
            KEYS.join(", ")
        ));
    }
    let utm = match obj.remove("utm_params") {
        None | Some(Value::Null) => None,
        Some(v) => UtmParams::from_either(&v)?,
    };
    for key in ["campaign_name", "notifications"] {
        if !obj.contains_key(key) {
            return Err(format!("{key} is required"));
        }
    }
    validate::drip_json_types(&obj)?;
    // An empty list of who to include is no filter: everyone. Refused, as for broadcasts.
    if let Some(key) = obj.get("send_to").and_then(validate::empty_include) {
        return Err(format!(
            "The send_to.{key} field must not be an empty array."
        ));
    }
    let mut drip: NewDrip =
        serde_json::from_value(Value::Object(obj)).map_err(|e| format!("Invalid body: {e}"))?;
    drip.utm_params = utm;
    Ok(drip)
}

pub async fn create_drip(
    State(emu): State<Arc<Emu>>,
    Extension(site): Extension<Admitted>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult {
    let obj = json_object(&headers, &body).map_err(ApiError::bad_campaign)?;
    let new = parse_new_drip(obj).map_err(ApiError::bad_campaign)?;
    validate::drip(&new).map_err(|v| ApiError::bad_campaign(v.message_with_field()))?;
    let drip_id = emu.in_site(site, |s, ids, now| store_drip(s, ids, now, new))?;
    ok(json!({"success": true, "drip_id": drip_id}))
}

fn store_drip(
    s: &mut Site,
    ids: &mut Counters,
    now: chrono::DateTime<chrono::Utc>,
    new: NewDrip,
) -> i64 {
    let drip_id = Counters::next(&mut ids.drip);
    let send_to = new.send_to.unwrap_or_default();
    let notifications = new
        .notifications
        .into_iter()
        .enumerate()
        .map(|(i, content)| {
            DripNotification::from_new(
                Counters::next(&mut ids.campaign_notification),
                i as i64 + 1,
                content,
            )
        })
        .collect();
    let drip = Drip {
        drip_id,
        campaign_name: new.campaign_name.trim().to_string(),
        drip_type: "generic".into(),
        status: "active".into(),
        site_id: s.site_id,
        created_at_utc: iso(now),
        updated_at_utc: iso(now),
        audience: Audience::from_send_to(&send_to),
        options: DripOptions::default(),
        analytics: Analytics::default(),
        notifications: Some(notifications),
        utm_params: new.utm_params,
        extra: Default::default(),
    };
    s.drips.push(DripRec { drip, send_to });
    drip_id
}

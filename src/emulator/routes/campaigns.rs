//! Triggered campaigns (4.1, 4.2) and drip autoresponders (4.3-4.5).

use axum::extract::rejection::PathRejection;
use axum::extract::Path;
use serde_json::{json, Value};

use super::extract::{JsonBody, QueryForm, SiteContext};
use crate::emulator::api_error::{ok, ApiError, ApiResult};
use crate::emulator::engine::analytics::{fill_drip, fill_trigger, Range};
use crate::emulator::request::int_param;
use crate::emulator::state::{Counters, DripRec, Site};
use crate::form::Form;
use crate::model::{
    Analytics, Audience, Drip, DripNotification, DripOptions, Meta, NewDrip, Timestamp, UtmParams,
};
use crate::validate::{self, Violation};

fn bad(v: Violation) -> ApiError {
    ApiError::bad_campaign(v.message())
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

/// A campaign path's id segment as sent.
type RawId = Result<Path<String>, PathRejection>;

/// The id of a campaign path. The path segment is taken whatever it holds (bytes that do
/// not decode to text included), so that every refusal is the spec's `InvalidRequestException`
/// rather than axum's plain-text rejection.
fn path_id(raw: RawId, what: &str) -> Result<i64, ApiError> {
    raw.ok()
        .and_then(|Path(raw)| raw.trim().parse::<i64>().ok())
        .filter(|id| *id > 0)
        .ok_or_else(|| ApiError::bad_campaign(format!("{what} must be a positive integer")))
}

/// A campaign list (4.2, 4.5): one page, newest first, each campaign as `read` gives it
/// (its analytics over the range, without its notifications).
fn list<T: Clone, R: serde::Serialize>(
    ctx: &SiteContext,
    q: Result<Form, String>,
    items: impl FnOnce(&Site) -> &[T],
    read: impl Fn(&Site, T, Range) -> R,
) -> ApiResult {
    let (page, limit, range) = list_params(&q.map_err(ApiError::bad_campaign)?)?;
    let (data, meta) = ctx.in_site(|s, _, _| {
        let (page, meta) = paginate(items(s), page, limit);
        let data: Vec<R> = page.into_iter().map(|item| read(s, item, range)).collect();
        (data, meta)
    })?;
    ok(json!({"success": true, "data": data, "meta": meta}))
}

/// One campaign (4.1, 4.4) by the id in its path, with its analytics over the range; `what`
/// names it in the refusal when the site has none of that id.
fn get<R: serde::Serialize>(
    ctx: &SiteContext,
    raw: RawId,
    q: Result<Form, String>,
    (id_name, what): (&str, &str),
    find: impl FnOnce(&Site, i64, Range) -> Option<R>,
) -> ApiResult {
    let id = path_id(raw, id_name)?;
    let range = analytics_range(&q.map_err(ApiError::bad_campaign)?)?;
    match ctx.in_site(|s, _, _| find(s, id, range))? {
        Some(found) => ok(json!({"success": true, "data": found})),
        None => Err(ApiError::bad_campaign(format!(
            "{what} {id} does not exist"
        ))),
    }
}

pub async fn list_triggers(ctx: SiteContext, QueryForm(q): QueryForm) -> ApiResult {
    list(
        &ctx,
        q,
        |s| &s.triggers,
        |s, mut t, range| {
            t.notifications = None;
            fill_trigger(s, &mut t, range);
            t
        },
    )
}

pub async fn get_trigger(ctx: SiteContext, raw: RawId, QueryForm(q): QueryForm) -> ApiResult {
    get(
        &ctx,
        raw,
        q,
        ("trigger_id", "Triggered campaign"),
        |s, id, range| {
            let mut t = s.trigger(id).cloned()?;
            fill_trigger(s, &mut t, range);
            Some(t)
        },
    )
}

pub async fn list_drips(ctx: SiteContext, QueryForm(q): QueryForm) -> ApiResult {
    list(
        &ctx,
        q,
        |s| &s.drips,
        |s, r, range| {
            let mut d = Drip {
                notifications: None,
                ..r.drip
            };
            fill_drip(s, &mut d, range);
            d
        },
    )
}

pub async fn get_drip(ctx: SiteContext, raw: RawId, QueryForm(q): QueryForm) -> ApiResult {
    get(
        &ctx,
        raw,
        q,
        ("drip_id", "Drip autoresponder"),
        |s, id, range| {
            let mut d = s.drip(id)?.drip.clone();
            fill_drip(s, &mut d, range);
            Some(d)
        },
    )
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
        Some(v) => UtmParams::from_either(&v).map_err(|k| validate::utm_refused(k).message())?,
    };
    for key in ["campaign_name", "notifications"] {
        if !obj.contains_key(key) {
            return Err(format!("{key} is required"));
        }
    }
    validate::drip_json_types(&obj).map_err(|v| v.message())?;
    // An empty or null list of who to include is no filter: everyone. Refused, as for
    // broadcasts.
    if let Some(key) = obj.get("send_to").and_then(validate::lost_include) {
        return Err(format!(
            "The send_to.{key} field must be a non-empty array."
        ));
    }
    let mut drip: NewDrip =
        serde_json::from_value(Value::Object(obj)).map_err(|e| format!("Invalid body: {e}"))?;
    drip.utm_params = utm;
    Ok(drip)
}

pub async fn create_drip(ctx: SiteContext, JsonBody(obj): JsonBody) -> ApiResult {
    let obj = obj.map_err(ApiError::bad_campaign)?;
    let new = parse_new_drip(obj).map_err(ApiError::bad_campaign)?;
    validate::drip(&new).map_err(|v| ApiError::bad_campaign(v.message_with_field()))?;
    let drip_id = ctx.in_site(|s, ids, now| store_drip(s, ids, now, new))?;
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
        created_at_utc: Timestamp::new(now),
        updated_at_utc: Timestamp::new(now),
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

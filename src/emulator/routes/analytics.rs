//! Summary analytics (4.10) and the subscriber distribution (4.11).

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use axum::extract::State;
use axum::http::Uri;
use axum::Extension;
use chrono::{Datelike, Days, Months, NaiveDate};
use serde_json::{json, Map, Value};

use crate::emulator::engine::Source;
use crate::emulator::http::{ok, query, ApiError, ApiResult};
use crate::emulator::state::{Admitted, Emu, Site, Subscriber};
use crate::model::common::ctr;
use crate::model::SummaryRow;
use crate::validate::{self, GroupBy};

pub async fn summary(
    State(emu): State<Arc<Emu>>,
    Extension(site): Extension<Admitted>,
    uri: Uri,
) -> ApiResult {
    let q = query(&uri).map_err(ApiError::bad)?;
    let (from, to, group_by) =
        validate::summary_query(q.get("from"), q.get("to"), q.get("group_by"))
            .map_err(|v| ApiError::bad(v.message))?;
    let rows = emu.in_site(site, |s, _, _| summary_rows(s, from, to, group_by))?;
    ok(json!({"success": true, "data": rows}))
}

/// The first day of the period `d` falls in (weeks start on Monday).
fn period_start(d: NaiveDate, g: GroupBy) -> NaiveDate {
    match g {
        GroupBy::Day => d,
        GroupBy::Week => d - Days::new(d.weekday().num_days_from_monday() as u64),
        GroupBy::Month => d.with_day(1).unwrap_or(d),
    }
}

fn next_period(start: NaiveDate, g: GroupBy) -> NaiveDate {
    let next = match g {
        GroupBy::Day => start.checked_add_days(Days::new(1)),
        GroupBy::Week => start.checked_add_days(Days::new(7)),
        GroupBy::Month => start.checked_add_months(Months::new(1)),
    };
    next.unwrap_or(NaiveDate::MAX)
}

fn is_mobile(sub: &Subscriber) -> bool {
    matches!(sub.device_type.as_deref(), Some("mobile") | Some("tablet"))
}

/// One row per day, week or month of `[from, to]` (UTC dates), dated by the period's first
/// day within the range. `notification_sent` counts the distinct notifications (broadcasts
/// and campaign messages) that went out in the period, `net_subscriber_sent` the deliveries
/// to subscribers; views and clicks count when they happened.
pub fn summary_rows(s: &Site, from: NaiveDate, to: NaiveDate, g: GroupBy) -> Vec<SummaryRow> {
    let mut rows: BTreeMap<NaiveDate, SummaryRow> = BTreeMap::new();
    let mut start = period_start(from, g);
    while start <= to {
        let label = start.max(from);
        rows.insert(
            period_start(label, g),
            SummaryRow {
                date: label.format("%Y-%m-%d").to_string(),
                ..Default::default()
            },
        );
        let next = next_period(start, g);
        if next <= start {
            break; // the calendar's end
        }
        start = next;
    }
    let in_range = |d: NaiveDate| d >= from && d <= to;
    for sub in &s.subscribers {
        let joined = sub.subscribed_at.date_naive();
        if in_range(joined) {
            if let Some(r) = rows.get_mut(&period_start(joined, g)) {
                r.subscriber_count += 1;
                if is_mobile(sub) {
                    r.mobile_subscriber_count += 1;
                } else {
                    r.desktop_subscriber_count += 1;
                }
            }
        }
        if let Some(left) = sub.unsubscribed_at.map(|t| t.date_naive()) {
            if in_range(left) {
                if let Some(r) = rows.get_mut(&period_start(left, g)) {
                    r.unsubscribed_count += 1;
                    if is_mobile(sub) {
                        r.mobile_unsubscribed_count += 1;
                    } else {
                        r.desktop_unsubscribed_count += 1;
                    }
                }
            }
        }
    }
    let mut notifications: BTreeMap<NaiveDate, HashSet<(Source, i64)>> = BTreeMap::new();
    for d in s
        .engine
        .deliveries
        .iter()
        .filter(|d| d.status == "delivered")
    {
        if let Some(sent) = d.sent_at.map(|t| t.date_naive()).filter(|t| in_range(*t)) {
            let key = period_start(sent, g);
            if let Some(r) = rows.get_mut(&key) {
                r.net_subscriber_sent += 1;
                notifications
                    .entry(key)
                    .or_default()
                    .insert((d.source, d.notification_id));
            }
        }
        for (at, views) in [(d.viewed_at, true), (d.clicked_at, false)] {
            if let Some(day) = at.map(|t| t.date_naive()).filter(|t| in_range(*t)) {
                if let Some(r) = rows.get_mut(&period_start(day, g)) {
                    if views {
                        r.view_count += 1;
                    } else {
                        r.click_count += 1;
                    }
                }
            }
        }
    }
    for (key, sent) in notifications {
        if let Some(r) = rows.get_mut(&key) {
            r.notification_sent = sent.len() as i64;
        }
    }
    rows.into_values()
        .map(|mut r| {
            r.ctr = ctr(r.click_count, r.view_count);
            r
        })
        .collect()
}

pub async fn subscribers(
    State(emu): State<Arc<Emu>>,
    Extension(site): Extension<Admitted>,
    uri: Uri,
) -> ApiResult {
    let q = query(&uri).map_err(ApiError::bad)?;
    let dims =
        validate::subscriber_dimensions(q.get("type")).map_err(|v| ApiError::bad(v.message))?;
    let data = emu.in_site(site, |s, _, _| distribution(s, &dims))?;
    ok(json!({"success": true, "data": data}))
}

/// Active subscribers counted by each dimension's values (2.13).
pub fn distribution(s: &Site, dims: &[String]) -> Map<String, Value> {
    let mut out = Map::new();
    for dim in dims {
        let mut counts: BTreeMap<String, i64> = BTreeMap::new();
        for sub in s.subscribers.iter().filter(|s| s.unsubscribed_at.is_none()) {
            let v = match dim.as_str() {
                "country" => &sub.country,
                "state" => &sub.state,
                "city" => &sub.city,
                "device" => &sub.device,
                "device_type" => &sub.device_type,
                _ => &sub.platform,
            };
            if let Some(v) = v {
                *counts.entry(v.clone()).or_default() += 1;
            }
        }
        out.insert(dim.clone(), json!(counts));
    }
    out
}

//! Summary analytics (4.10) and the subscriber distribution (4.11).

use chrono::{DateTime, Datelike, Days, Months, NaiveDate, NaiveTime, Utc};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashSet};

use super::extract::{QueryForm, SiteContext};
use crate::emulator::api_error::{ok, ApiError, ApiResult};
use crate::emulator::engine::analytics::{device_type, is_mobile};
use crate::emulator::state::{Site, Source};
use crate::model::common::ctr;
use crate::model::SummaryRow;
use crate::validate::{self, GroupBy};

pub async fn summary(ctx: SiteContext, QueryForm(q): QueryForm) -> ApiResult {
    let q = q.map_err(ApiError::bad)?;
    let (from, to, group_by) =
        validate::summary_query(q.get("from"), q.get("to"), q.get("group_by"))
            .map_err(|v| ApiError::bad(v.message()))?;
    let rows = ctx.in_site(|s, _, _| summary_rows(s, from, to, group_by))?;
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

/// One row per day, week or month of `[from, to]` (UTC dates), dated by the period's first
/// day within the range. `notification_sent` counts the distinct notifications (broadcasts
/// and campaign messages) that went out in the period, `net_subscriber_sent` the deliveries
/// to subscribers; views and clicks count when they happened.
pub fn summary_rows(s: &Site, from: NaiveDate, to: NaiveDate, g: GroupBy) -> Vec<SummaryRow> {
    let mut starts: Vec<NaiveDate> = Vec::new();
    let mut rows: Vec<SummaryRow> = Vec::new();
    let mut start = period_start(from, g);
    while start <= to {
        let label = start.max(from);
        starts.push(period_start(label, g));
        rows.push(SummaryRow {
            date: label.format("%Y-%m-%d").to_string(),
            ..Default::default()
        });
        let next = next_period(start, g);
        if next <= start {
            break; // the calendar's end
        }
        start = next;
    }
    // The row of an instant: by the day's offset from `from` for days, else the last period
    // starting on or before it. Runs of the same instant (a broadcast's deliveries share
    // their send time) are looked up once. One finder per thread (its memo its own).
    let epoch_day = |d: NaiveDate| d.and_time(NaiveTime::MIN).and_utc().timestamp() / 86_400;
    let (first_day, last_day) = (epoch_day(from), epoch_day(to));
    let starts = &starts;
    let finder = || {
        let mut memo: Option<(DateTime<Utc>, Option<usize>)> = None;
        move |t: DateTime<Utc>| -> Option<usize> {
            if let Some((at, row)) = memo {
                if at == t {
                    return row;
                }
            }
            // UTC days by integer arithmetic: a calendar date for each of a million
            // subscribers is most of the cost otherwise.
            let day = t.timestamp().div_euclid(86_400);
            let row = if day < first_day || day > last_day {
                None
            } else if g == GroupBy::Day {
                usize::try_from(day - first_day).ok()
            } else {
                let d = t.date_naive();
                starts.partition_point(|s| *s <= d).checked_sub(1)
            };
            memo = Some((t, row));
            row
        }
    };
    // The subscribers' counts and the deliveries' on two threads: ten million of each are
    // read in the time of one.
    let (joined, (mut rows, notifications)) = std::thread::scope(|scope| {
        let joined = scope.spawn(|| subscriber_counts(s, rows.clone(), finder()));
        let sent = delivery_counts(s, rows.clone(), finder());
        (joined.join(), sent)
    });
    let joined = joined.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
    for (r, j) in rows.iter_mut().zip(joined) {
        r.subscriber_count = j.subscriber_count;
        r.desktop_subscriber_count = j.desktop_subscriber_count;
        r.mobile_subscriber_count = j.mobile_subscriber_count;
        r.unsubscribed_count = j.unsubscribed_count;
        r.desktop_unsubscribed_count = j.desktop_unsubscribed_count;
        r.mobile_unsubscribed_count = j.mobile_unsubscribed_count;
    }
    rows.into_iter()
        .zip(notifications)
        .map(|(mut r, sent)| {
            r.notification_sent = sent.len() as i64;
            r.ctr = ctr(r.click_count, r.view_count);
            r
        })
        .collect()
}

/// The rows with who joined and who left in each.
fn subscriber_counts(
    s: &Site,
    mut rows: Vec<SummaryRow>,
    mut row_of: impl FnMut(DateTime<Utc>) -> Option<usize>,
) -> Vec<SummaryRow> {
    for sub in &s.subscribers {
        if let Some(r) = row_of(sub.subscribed_at).and_then(|i| rows.get_mut(i)) {
            r.subscriber_count += 1;
            if is_mobile(sub) {
                r.mobile_subscriber_count += 1;
            } else {
                r.desktop_subscriber_count += 1;
            }
        }
        if let Some(left) = sub.unsubscribed_at {
            if let Some(r) = row_of(left).and_then(|i| rows.get_mut(i)) {
                r.unsubscribed_count += 1;
                if is_mobile(sub) {
                    r.mobile_unsubscribed_count += 1;
                } else {
                    r.desktop_unsubscribed_count += 1;
                }
            }
        }
    }
    rows
}

/// The rows with what was sent, viewed and clicked in each, and the notifications each sent.
fn delivery_counts(
    s: &Site,
    mut rows: Vec<SummaryRow>,
    mut row_of: impl FnMut(DateTime<Utc>) -> Option<usize>,
) -> (Vec<SummaryRow>, Vec<HashSet<(Source, i64)>>) {
    let mut notifications: Vec<HashSet<(Source, i64)>> = vec![HashSet::new(); rows.len()];
    let mut last: Option<(usize, Source, i64)> = None;
    for d in s
        .engine
        .deliveries
        .iter()
        .filter(|d| d.status() == "delivered")
    {
        if let Some(i) = d.sent_at().and_then(&mut row_of) {
            if let Some(r) = rows.get_mut(i) {
                r.net_subscriber_sent += 1;
                let key = (i, d.dispatch.source, d.dispatch.notification_id);
                if last != Some(key) {
                    notifications[i].insert((d.dispatch.source, d.dispatch.notification_id));
                    last = Some(key);
                }
            }
        }
        for (at, views) in [(d.viewed_at(), true), (d.clicked_at(), false)] {
            if let Some(r) = at.and_then(&mut row_of).and_then(|i| rows.get_mut(i)) {
                if views {
                    r.view_count += 1;
                } else {
                    r.click_count += 1;
                }
            }
        }
    }
    (rows, notifications)
}

pub async fn subscribers(ctx: SiteContext, QueryForm(q): QueryForm) -> ApiResult {
    let q = q.map_err(ApiError::bad)?;
    let dims =
        validate::subscriber_dimensions(q.get("type")).map_err(|v| ApiError::bad(v.message()))?;
    let data = ctx.in_site(|s, _, _| distribution(s, &dims))?;
    ok(json!({"success": true, "data": data}))
}

/// Active subscribers counted by each dimension's values (2.13); a subscriber without a value
/// is in no bucket of that dimension, except `device_type`, where it counts as `desktop`.
pub fn distribution(s: &Site, dims: &[String]) -> Map<String, Value> {
    let mut out = Map::new();
    for dim in dims {
        let mut counts: BTreeMap<String, i64> = BTreeMap::new();
        for sub in s.subscribers.iter().filter(|s| s.unsubscribed_at.is_none()) {
            let v = match dim.as_str() {
                "country" => sub.country.as_deref(),
                "state" => sub.state.as_deref(),
                "city" => sub.city.as_deref(),
                "device" => sub.device.as_deref(),
                "device_type" => Some(device_type(sub)),
                _ => sub.platform.as_deref(),
            };
            if let Some(v) = v {
                *counts.entry(v.to_string()).or_default() += 1;
            }
        }
        out.insert(dim.clone(), json!(counts));
    }
    out
}

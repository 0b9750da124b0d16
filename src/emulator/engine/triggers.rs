//! Triggered campaigns (2.1, 6.2): an event named as an active campaign's start event
//! starts its series for that subscriber, its stop event cancels what is pending, and
//! `{{tags}}` are filled from the event's `data` (the caps hold when each send is due, in
//! `delivery`).

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use super::content::{personalize, tagged};
use super::delivery::tick;
use super::schedule::{schedule_series, Step};
use crate::emulator::state::{Content, Counters, Site, Source};
use crate::model::Action;

fn personalized(n: &crate::model::TriggeredNotification, data: &Map<String, Value>) -> Content {
    let p = |s: &str| personalize(s, data);
    Content {
        title: p(&n.title),
        message: p(&n.message),
        url: p(&n.url),
        image_url: n.image_url.as_deref().map(p),
        big_image_url: n.big_image_url.as_deref().map(p),
        actions: n
            .actions
            .iter()
            .map(|a| Action {
                label: p(&a.label),
                url: p(&a.url),
                image_url: a.image_url.as_deref().map(p),
            })
            .collect(),
    }
}

/// Starts a triggered run of `trigger_id` for each of `hashes`.
pub(super) fn start_run(
    site: &mut Site,
    trigger_id: i64,
    hashes: &[String],
    data: &Map<String, Value>,
    now: DateTime<Utc>,
) {
    let Some(t) = site.trigger(trigger_id).cloned() else {
        return;
    };
    let steps = t.notifications.as_deref().unwrap_or_default();
    if steps.is_empty() {
        return;
    }
    for hash in hashes {
        site.engine.next_run += 1;
        let run = site.engine.next_run;
        site.engine
            .runs
            .entry((trigger_id, hash.clone()))
            .or_default()
            .push(run);
        site.engine.run_left.insert(run, steps.len());
        let series = steps.iter().map(|n| Step {
            notification_id: n.id,
            wait: &n.schedule_options,
            expiry_seconds: n.expiry,
            content: tagged(personalized(n, data), t.utm_params.as_ref()),
        });
        schedule_series(site, (Source::Trigger, trigger_id, run), hash, now, series);
    }
}

/// An event tracked through the events interface (6.1, 6.2).
pub fn on_event(
    site: &mut Site,
    ids: &mut Counters,
    now: DateTime<Utc>,
    event_name: &str,
    profile_id: Option<&str>,
    device_token_hash: Option<&str>,
    data: &Map<String, Value>,
) {
    // profile_id wins; it may name several devices.
    let hashes: Vec<String> = match (profile_id, device_token_hash) {
        (Some(p), _) => site
            .with_profile(p)
            .filter(|s| s.unsubscribed_at.is_none())
            .map(|s| s.subscriber_hash.to_string())
            .collect(),
        (None, Some(h)) => site
            .subscriber(h)
            .filter(|s| s.unsubscribed_at.is_none())
            .map(|s| s.subscriber_hash.to_string())
            .into_iter()
            .collect(),
        _ => Vec::new(),
    };
    if hashes.is_empty() {
        return;
    }
    let event_driven = |kind: &str| !matches!(kind, "price_drop" | "inventory");
    let stops: Vec<i64> = site
        .triggers
        .iter()
        .filter(|t| t.rules.stop_event_name == event_name && !event_name.is_empty())
        .map(|t| t.trigger_id)
        .collect();
    for trigger_id in stops {
        for hash in &hashes {
            // The runs' sends stay in the schedule, dropped as they come due (`fire`).
            for run in site
                .engine
                .runs
                .remove(&(trigger_id, hash.clone()))
                .unwrap_or_default()
            {
                site.engine.run_left.remove(&run);
            }
        }
    }
    let starts: Vec<i64> = site
        .triggers
        .iter()
        .filter(|t| {
            t.status == "active"
                && t.rules.start_event_name == event_name
                && event_driven(&t.campaign_type)
        })
        .map(|t| t.trigger_id)
        .collect();
    for trigger_id in starts {
        start_run(site, trigger_id, &hashes, data, now);
    }
    tick(site, ids, now);
}

//! The service's behaviour, not only its answers: who receives what, and when.
//!
//! Everything runs on the emulator's clock and lazily: before any request or admin call
//! touches a site, [`tick`] delivers whatever has come due since the last one, each at the
//! time it was due. So results never depend on when a test happened to look.
//!
//! - Broadcasts (4.13): `now` at once, `later` at `valid_from_utc` read in the site's time
//!   zone, `draft` never; the audience is chosen when the broadcast goes out.
//! - Drips (2.7-2.9, 6.3): a subscriber who subscribes, or is added to a segment, and then
//!   matches a drip's audience starts its series once; each notification is due relative to
//!   the previous one, and `send_to` is checked again when it is due.
//! - Triggered campaigns (2.1, 6.2): an event named as an active campaign's start event
//!   starts its series for that subscriber, its stop event cancels what is pending, the daily
//!   and weekly caps hold, and `{{tags}}` are filled from the event's `data`.
//! - Product alerts (2.4, 2.11): price drops past a `price_drop` campaign's threshold (from
//!   the price each alert was set at) and
//!   returns to stock for `inventory` campaigns notify the alert holders, within the
//!   campaign's expiry.
//! - Expiry: a delivery a subscriber's device does not fetch (it is offline) before the
//!   notification's expiry is dropped and never counted as sent.

pub mod analytics;
pub mod schedule;
pub mod targeting;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use chrono::{DateTime, Duration, FixedOffset, NaiveDateTime, Utc};
use serde::Serialize;
use serde_json::{Map, Value};

use self::schedule::{local_to_utc, next_due};
use self::targeting::{audience_match, Selector};
use super::state::{iso, Counters, Site};
use crate::model::{Action, NotificationType, UtmParams};
use crate::validate::{
    BROADCAST_EXPIRY_MAX_MINUTES, CAMPAIGN_ALERT_EXPIRY_DEFAULT_SECONDS, VALID_FROM_FORMAT,
};

/// What a notification shows.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Content {
    pub title: String,
    pub message: String,
    pub url: String,
    pub image_url: Option<String>,
    pub big_image_url: Option<String>,
    pub actions: Vec<Action>,
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Broadcast,
    Drip,
    Trigger,
}

/// A send that is due at `due_at`. A broadcast's has no subscriber: its audience is chosen
/// when it goes out.
#[derive(Debug, Clone)]
pub struct Scheduled {
    pub due_at: DateTime<Utc>,
    pub subscriber_hash: Option<String>,
    pub source: Source,
    pub source_id: i64,
    pub notification_id: i64,
    /// Shared by every delivery of the send (a broadcast to a million holds one copy).
    pub content: Arc<Content>,
    pub expiry_seconds: i64,
    /// The triggered run it belongs to (a stop event cancels the run's pending sends).
    pub run: u64,
}

/// A notification handed to one subscriber's device.
#[derive(Debug, Clone, Serialize)]
pub struct Delivery {
    pub delivery_id: i64,
    pub subscriber_hash: String,
    #[serde(flatten)]
    pub content: Arc<Content>,
    pub source: Source,
    pub source_id: i64,
    pub notification_id: i64,
    /// `delivered`, `pending` (the device is offline) or `expired`.
    pub status: &'static str,
    #[serde(serialize_with = "ser_time")]
    pub queued_at: DateTime<Utc>,
    #[serde(serialize_with = "ser_opt_time")]
    pub sent_at: Option<DateTime<Utc>>,
    #[serde(serialize_with = "ser_time")]
    pub expires_at: DateTime<Utc>,
    #[serde(serialize_with = "ser_opt_time")]
    pub viewed_at: Option<DateTime<Utc>>,
    #[serde(serialize_with = "ser_opt_time")]
    pub clicked_at: Option<DateTime<Utc>>,
}

/// A subscriber's wish to hear of a product's price drop or return to stock.
#[derive(Debug, Clone, Serialize)]
pub struct Alert {
    pub subscriber_hash: String,
    pub product_id: String,
    pub variant_id: Option<String>,
    #[serde(serialize_with = "ser_time")]
    pub created_at: DateTime<Utc>,
    /// Campaigns that already notified this alert (each fires once per alert).
    pub fired_by: Vec<i64>,
    /// The price a drop is measured from, per variant: the price when the alert was set
    /// (the price before the first update after it), or the first price the product was
    /// given when it had none yet.
    #[serde(skip)]
    pub baselines: Vec<(Option<String>, f64)>,
}

impl Alert {
    fn covers(&self, change: &PriceChange) -> bool {
        self.product_id == change.product_id
            && (self.variant_id.is_none() || self.variant_id == change.variant_id)
    }

    /// The price a drop of this change is measured from, recorded at the change's first
    /// sight of the variant.
    fn baseline(&mut self, change: &PriceChange) -> f64 {
        match self.baselines.iter().find(|(v, _)| *v == change.variant_id) {
            Some((_, price)) => *price,
            None => {
                let price = change.old_price.unwrap_or(change.new_price);
                self.baselines.push((change.variant_id.clone(), price));
                price
            }
        }
    }
}

/// The engine's share of a site's state.
#[derive(Debug, Clone, Default)]
pub struct Engine {
    /// Kept sorted by `due_at`; the earliest leaves from the front (a `Vec` shifted every
    /// item left for each one that went out).
    pub scheduled: std::collections::VecDeque<Scheduled>,
    pub deliveries: Vec<Delivery>,
    pub drip_starts: std::collections::HashSet<(i64, String)>,
    pub alerts: Vec<Alert>,
    /// Triggered runs: (trigger_id, subscriber) -> run ids still pending.
    pub runs: BTreeMap<(i64, String), Vec<u64>>,
    /// How many of each pending run's sends are still scheduled. A run a stop event
    /// cancelled is gone from here: its sends are dropped as they come due, not looked for
    /// through the whole schedule.
    pub run_left: HashMap<u64, usize>,
    pub next_run: u64,
    /// Where in `deliveries` each triggered campaign's sends to each subscriber (by position
    /// in `Site::subscribers`) are: the daily and weekly caps count these, not every
    /// delivery.
    pub sends: HashMap<(i64, usize), Vec<usize>>,
    /// Where in `deliveries` the pending ones of each subscriber (by position) are: a device
    /// coming online, and expiry, settle only these.
    pub waiting: HashMap<usize, Vec<usize>>,
    /// How many deliveries wait for their device (`pending`), and no later than when the
    /// first of them expires: `tick` looks for expired ones only once one may have, instead
    /// of going through every delivery on every request.
    pub pending: usize,
    pub next_expiry: Option<DateTime<Utc>>,
}

impl Engine {
    fn schedule(&mut self, item: Scheduled) {
        let at = self.scheduled.partition_point(|s| s.due_at <= item.due_at);
        self.scheduled.insert(at, item);
    }
}

/// Delivers everything due by `now`, in due order, and expires what waited too long.
pub fn tick(site: &mut Site, ids: &mut Counters, now: DateTime<Utc>) {
    while site
        .engine
        .scheduled
        .front()
        .is_some_and(|s| s.due_at <= now)
    {
        let Some(item) = site.engine.scheduled.pop_front() else {
            break;
        };
        fire(site, ids, item);
    }
    let engine = &mut site.engine;
    if engine.pending == 0 || engine.next_expiry.is_none_or(|at| now < at) {
        return;
    }
    let mut expired = 0;
    let mut next: Option<DateTime<Utc>> = None;
    let Engine {
        waiting,
        deliveries,
        ..
    } = engine;
    waiting.retain(|_, list| {
        list.retain(|&i| {
            let d = &mut deliveries[i];
            if now >= d.expires_at {
                d.status = "expired";
                expired += 1;
                false
            } else {
                next = Some(next.map_or(d.expires_at, |n| n.min(d.expires_at)));
                true
            }
        });
        !list.is_empty()
    });
    engine.pending -= expired;
    engine.next_expiry = next;
}

fn fire(site: &mut Site, ids: &mut Counters, item: Scheduled) {
    match (&item.subscriber_hash, item.source) {
        (None, Source::Broadcast) => {
            let Some(rec) = site
                .notifications
                .iter_mut()
                .find(|n| n.notification_id == item.source_id)
            else {
                return;
            };
            rec.status = "sent".into();
            let selector = Selector::of(&rec.request);
            let targets: Vec<usize> = site
                .subscribers
                .iter()
                .enumerate()
                // Who had subscribed by the time it went out (a test may seed a subscriber
                // dated later than a broadcast that is only now being caught up on).
                .filter(|(_, s)| s.subscribed_at <= item.due_at && selector.selects(s))
                .map(|(i, _)| i)
                .collect();
            site.engine.deliveries.reserve(targets.len());
            for at in targets {
                hand_over(site, ids, &item, at);
            }
        }
        (Some(hash), Source::Drip) => {
            let hash = hash.clone();
            let Some(drip) = site.drips.iter().find(|d| d.drip.drip_id == item.source_id) else {
                return;
            };
            let audience = drip.drip.audience.filter.value.clone();
            let active = drip.drip.status == "active";
            let Some(at) = site.subscriber_position(&hash) else {
                return;
            };
            if active && audience_match(&audience, &site.subscribers[at]) {
                hand_over(site, ids, &item, at);
            }
        }
        (Some(hash), Source::Trigger) => {
            // The run's count of sends still to come; a run a stop event cancelled has none.
            let engine = &mut site.engine;
            let Some(left) = engine.run_left.get_mut(&item.run) else {
                return;
            };
            *left -= 1;
            if *left == 0 {
                engine.run_left.remove(&item.run);
                let key = (item.source_id, hash.clone());
                if let Some(runs) = engine.runs.get_mut(&key) {
                    runs.retain(|r| *r != item.run);
                    if runs.is_empty() {
                        engine.runs.remove(&key);
                    }
                }
            }
            let Some(t) = site
                .triggers
                .iter()
                .find(|t| t.trigger_id == item.source_id)
            else {
                return;
            };
            if t.status != "active" {
                return;
            }
            let (daily, weekly) = (t.daily_trigger_limit, t.weekly_trigger_limit);
            let Some(at) = site.subscriber_position(hash) else {
                return;
            };
            if within_caps(site, item.source_id, at, item.due_at, daily, weekly) {
                hand_over(site, ids, &item, at);
            } else if site.subscribers[at].unsubscribed_at.is_none() {
                // Kept in sight (status `capped`): a test can tell "held back by the cap"
                // from "never scheduled". Nothing reaches the device or the analytics.
                let held = Delivery::of(ids, &item, hash, "capped", item.due_at);
                site.engine.deliveries.push(held);
            }
        }
        _ => {}
    }
}

/// The daily cap counts the campaign's sends to the subscriber on the same local day, the
/// weekly cap those of the last seven days.
fn within_caps(
    site: &Site,
    trigger_id: i64,
    at: usize,
    when: DateTime<Utc>,
    daily: i64,
    weekly: i64,
) -> bool {
    let day = when.with_timezone(&site.timezone).date_naive();
    let week_start = when - Duration::days(7);
    let mut today = 0;
    let mut week = 0;
    let sent = site.engine.sends.get(&(trigger_id, at));
    for &i in sent.into_iter().flatten() {
        let d = &site.engine.deliveries[i];
        if d.status == "expired" {
            continue;
        }
        if d.queued_at.with_timezone(&site.timezone).date_naive() == day {
            today += 1;
        }
        if d.queued_at > week_start {
            week += 1;
        }
    }
    today < daily && week < weekly
}

/// Hands a notification to the subscriber at `at` in `Site::subscribers`: delivered at once
/// if its device is online, else kept until it comes online or the notification expires.
fn hand_over(site: &mut Site, ids: &mut Counters, item: &Scheduled, at: usize) {
    let sub = &site.subscribers[at];
    if sub.unsubscribed_at.is_some() {
        return;
    }
    let status = if sub.online { "delivered" } else { "pending" };
    let expires_at = item.due_at + Duration::seconds(item.expiry_seconds);
    let delivery = Delivery::of(ids, item, &sub.subscriber_hash, status, expires_at);
    let engine = &mut site.engine;
    let index = engine.deliveries.len();
    if status == "pending" {
        engine.pending += 1;
        engine.next_expiry = Some(engine.next_expiry.map_or(expires_at, |n| n.min(expires_at)));
        engine.waiting.entry(at).or_default().push(index);
    }
    if item.source == Source::Trigger {
        engine
            .sends
            .entry((item.source_id, at))
            .or_default()
            .push(index);
    }
    engine.deliveries.push(delivery);
}

impl Delivery {
    /// `item` for `hash`, numbered now: sent at its due time when `delivered`.
    fn of(
        ids: &mut Counters,
        item: &Scheduled,
        hash: &str,
        status: &'static str,
        expires_at: DateTime<Utc>,
    ) -> Delivery {
        Delivery {
            delivery_id: Counters::next(&mut ids.delivery),
            subscriber_hash: hash.to_string(),
            content: item.content.clone(),
            source: item.source,
            source_id: item.source_id,
            notification_id: item.notification_id,
            status,
            queued_at: item.due_at,
            sent_at: (status == "delivered").then_some(item.due_at),
            expires_at,
            viewed_at: None,
            clicked_at: None,
        }
    }
}

/// A subscriber's device comes online (or goes offline): what waits for it and has not
/// expired is delivered now.
pub fn set_online(site: &mut Site, hash: &str, online: bool, now: DateTime<Utc>) -> bool {
    let Some(at) = site.subscriber_position(hash) else {
        return false;
    };
    let sub = &mut site.subscribers[at];
    sub.online = online;
    // Nothing reaches a subscriber who unsubscribed, not even what waited for the device.
    if online && sub.unsubscribed_at.is_none() {
        let engine = &mut site.engine;
        for i in engine.waiting.remove(&at).unwrap_or_default() {
            let d = &mut engine.deliveries[i];
            if now < d.expires_at {
                d.status = "delivered";
                d.sent_at = Some(now);
            } else {
                d.status = "expired";
            }
            engine.pending -= 1;
        }
    }
    true
}

// ---- broadcasts ----

/// Schedules a broadcast just created (the last of `site.notifications`).
pub fn on_broadcast(site: &mut Site, ids: &mut Counters, now: DateTime<Utc>) {
    let Some(rec) = site.notifications.last() else {
        return;
    };
    let n = &rec.request;
    let due = match n.notification_type {
        NotificationType::Draft => return,
        NotificationType::Now => now,
        NotificationType::Later => {
            let Some(local) = n
                .valid_from_utc
                .as_deref()
                .and_then(|v| NaiveDateTime::parse_from_str(v.trim(), VALID_FROM_FORMAT).ok())
            else {
                return;
            };
            // A time already past goes out at once, not back-dated to before it existed.
            local_to_utc(site.timezone, local).max(now)
        }
    };
    let item = Scheduled {
        due_at: due,
        subscriber_hash: None,
        source: Source::Broadcast,
        source_id: rec.notification_id,
        notification_id: rec.notification_id,
        content: Arc::new(Content {
            title: n.notification_title.clone().unwrap_or_default(),
            message: n.notification_message.clone().unwrap_or_default(),
            url: n.notification_url.clone().unwrap_or_default(),
            image_url: n.image_url.clone(),
            big_image_url: n.big_image_url.clone(),
            actions: n.actions.clone(),
        }),
        expiry_seconds: n
            .notification_expiry
            .unwrap_or(BROADCAST_EXPIRY_MAX_MINUTES)
            * 60,
        run: 0,
    };
    site.engine.schedule(item);
    tick(site, ids, now);
}

// ---- drips ----

/// Drip criteria are evaluated when subscribers subscribe or join a segment (6.3).
pub fn on_audience_change(
    site: &mut Site,
    ids: &mut Counters,
    now: DateTime<Utc>,
    hashes: &[String],
) {
    let mut starts = Vec::new();
    for rec in site.drips.iter().filter(|d| d.drip.status == "active") {
        for hash in hashes {
            let key = (rec.drip.drip_id, hash.clone());
            if site.engine.drip_starts.contains(&key) {
                continue;
            }
            let matches = site
                .subscriber(hash)
                .is_some_and(|s| audience_match(&rec.drip.audience.filter.value, s));
            if matches {
                starts.push((key, rec.drip.clone()));
            }
        }
    }
    for ((drip_id, hash), drip) in starts {
        site.engine.drip_starts.insert((drip_id, hash.clone()));
        let mut due = now;
        for n in drip.notifications.as_deref().unwrap_or_default() {
            due = next_due(due, &n.schedule_options, site.timezone);
            site.engine.schedule(Scheduled {
                due_at: due,
                subscriber_hash: Some(hash.clone()),
                source: Source::Drip,
                source_id: drip_id,
                notification_id: n.id,
                content: Arc::new(tagged(
                    Content {
                        title: n.title.clone(),
                        message: n.message.clone(),
                        url: n.url.clone(),
                        image_url: Some(n.image_url.clone()),
                        big_image_url: Some(n.big_image_url.clone()),
                        actions: n.actions.clone(),
                    },
                    drip.utm_params.as_ref(),
                )),
                expiry_seconds: n.expiry,
                run: 0,
            });
        }
    }
    tick(site, ids, now);
}

// ---- triggered campaigns ----

/// Fills `{{name}}` tags from `data`; a tag with no value becomes empty.
pub fn personalize(text: &str, data: &Map<String, Value>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find("{{") {
        let Some(close) = rest[open + 2..].find("}}") else {
            break;
        };
        out.push_str(&rest[..open]);
        let key = rest[open + 2..open + 2 + close].trim();
        match data.get(key) {
            Some(Value::String(s)) => out.push_str(s),
            Some(Value::Null) | None => {}
            Some(other) => out.push_str(&other.to_string()),
        }
        rest = &rest[open + 2 + close + 2..];
    }
    out.push_str(rest);
    out
}

/// `url` with the campaign's UTM parameters (2.5: "added to the URLs of the campaign
/// notifications"), replacing any of the same name it already has. The rest of the URL is
/// kept byte for byte (its other parameters, their encoding, its fragment): only the query's
/// text gains the pairs, form-encoded.
pub fn with_utm(url: &str, utm: Option<&UtmParams>) -> String {
    let Some(utm) = utm else {
        return url.to_string();
    };
    let pairs = [
        ("utm_source", Some(&utm.utm_source)),
        ("utm_medium", Some(&utm.utm_medium)),
        ("utm_campaign", Some(&utm.utm_campaign)),
        ("utm_term", utm.utm_term.as_ref()),
        ("utm_content", utm.utm_content.as_ref()),
    ];
    let set: Vec<(&str, &String)> = pairs
        .into_iter()
        .filter_map(|(k, v)| v.filter(|v| !v.is_empty()).map(|v| (k, v)))
        .collect();
    let url = url.trim();
    if set.is_empty() || url.is_empty() {
        return url.to_string();
    }
    let (base, fragment) = match url.split_once('#') {
        Some((b, f)) => (b, Some(f)),
        None => (url, None),
    };
    let (path, query) = base.split_once('?').unwrap_or((base, ""));
    let mut parts: Vec<String> = query
        .split('&')
        .filter(|seg| !seg.is_empty())
        .filter(|seg| {
            // The key as a query parser reads it (`utm%5Fsource` is `utm_source`).
            let key = form_urlencoded::parse(seg.as_bytes())
                .next()
                .map(|(k, _)| k.into_owned())
                .unwrap_or_default();
            !set.iter().any(|(k, _)| key == *k)
        })
        .map(str::to_string)
        .collect();
    for (k, v) in set {
        let v: String = form_urlencoded::byte_serialize(v.as_bytes()).collect();
        parts.push(format!("{k}={v}"));
    }
    let mut out = format!("{path}?{}", parts.join("&"));
    if let Some(f) = fragment {
        out.push('#');
        out.push_str(f);
    }
    out
}

/// A campaign notification's content with its UTM parameters in its URLs.
fn tagged(mut c: Content, utm: Option<&UtmParams>) -> Content {
    c.url = with_utm(&c.url, utm);
    for a in &mut c.actions {
        a.url = with_utm(&a.url, utm);
    }
    c
}

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
fn start_run(
    site: &mut Site,
    trigger_id: i64,
    hashes: &[String],
    data: &Map<String, Value>,
    now: DateTime<Utc>,
) {
    let Some(t) = site
        .triggers
        .iter()
        .find(|t| t.trigger_id == trigger_id)
        .cloned()
    else {
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
        let mut due = now;
        for n in steps {
            due = next_due(due, &n.schedule_options, site.timezone);
            site.engine.schedule(Scheduled {
                due_at: due,
                subscriber_hash: Some(hash.clone()),
                source: Source::Trigger,
                source_id: trigger_id,
                notification_id: n.id,
                content: Arc::new(tagged(personalized(n, data), t.utm_params.as_ref())),
                expiry_seconds: n.expiry,
                run,
            });
        }
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
            .map(|s| s.subscriber_hash.clone())
            .collect(),
        (None, Some(h)) => site
            .subscriber(h)
            .filter(|s| s.unsubscribed_at.is_none())
            .map(|s| s.subscriber_hash.clone())
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

// ---- product alerts ----

/// What a product was before an update, for the alert rules.
#[derive(Debug, Clone)]
pub struct PriceChange {
    pub product_id: String,
    pub variant_id: Option<String>,
    pub old_price: Option<f64>,
    pub new_price: f64,
    pub was_in_stock: Option<bool>,
    pub in_stock: bool,
}

/// A price as a tag value: whole prices read as integers (`{{price}}` of 89 is "89", not
/// "89.0"), others as they are.
fn price_value(price: f64) -> Value {
    if price.fract() == 0.0 && price.abs() < 9.0e15 {
        Value::from(price as i64)
    } else {
        serde_json::json!(price)
    }
}

/// A price drop of at least the threshold (absolute, or percent of the old price).
fn drop_reaches(kind: &str, threshold: f64, old: f64, new: f64) -> bool {
    let drop = old - new;
    if drop <= 0.0 {
        return false;
    }
    match kind {
        "percentage" => old > 0.0 && drop / old * 100.0 + 1e-9 >= threshold,
        _ => drop + 1e-9 >= threshold,
    }
}

pub fn on_products(
    site: &mut Site,
    ids: &mut Counters,
    now: DateTime<Utc>,
    changes: &[PriceChange],
) {
    let campaigns: Vec<_> = site
        .triggers
        .iter()
        .filter(|t| {
            t.status == "active" && matches!(t.campaign_type.as_str(), "price_drop" | "inventory")
        })
        .cloned()
        .collect();
    for change in changes {
        // Each alert's drop is measured from its own baseline (what the subscriber saw when
        // setting it), recorded before any campaign looks, whether one is active or not.
        let bases: Vec<Option<f64>> = site
            .engine
            .alerts
            .iter_mut()
            .map(|a| a.covers(change).then(|| a.baseline(change)))
            .collect();
        for t in &campaigns {
            let options = t.options.as_ref().and_then(|o| o.campaign.as_ref());
            let expiry = options
                .and_then(|c| c.expiry.as_deref())
                .and_then(|e| e.trim().parse::<i64>().ok())
                .unwrap_or(CAMPAIGN_ALERT_EXPIRY_DEFAULT_SECONDS);
            let threshold = options.and_then(|c| c.price_drop_threshold.as_ref());
            let mut holders = Vec::new();
            for (alert, base) in site.engine.alerts.iter_mut().zip(&bases) {
                let Some(base) = *base else { continue };
                let fires = match t.campaign_type.as_str() {
                    "price_drop" => threshold.is_some_and(|th| {
                        drop_reaches(&th.r#type, th.value, base, change.new_price)
                    }),
                    _ => change.in_stock && change.was_in_stock == Some(false),
                };
                // Checked: a date past chrono's range is "never expires", not a panic.
                let fresh = Duration::try_seconds(expiry)
                    .and_then(|d| alert.created_at.checked_add_signed(d))
                    .is_none_or(|until| now <= until);
                if fires && fresh && !alert.fired_by.contains(&t.trigger_id) {
                    alert.fired_by.push(t.trigger_id);
                    holders.push(alert.subscriber_hash.clone());
                }
            }
            if holders.is_empty() {
                continue;
            }
            let mut data = Map::new();
            data.insert("product_id".into(), Value::from(change.product_id.clone()));
            data.insert("price".into(), price_value(change.new_price));
            if let Some(old) = change.old_price {
                data.insert("old_price".into(), price_value(old));
            }
            if let Some(v) = &change.variant_id {
                data.insert("variant_id".into(), Value::from(v.clone()));
            }
            start_run(site, t.trigger_id, &holders, &data, now);
        }
    }
    tick(site, ids, now);
}

fn ser_time<S: serde::Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&iso(*t))
}

fn ser_opt_time<S: serde::Serializer>(t: &Option<DateTime<Utc>>, s: S) -> Result<S::Ok, S::Error> {
    match t {
        Some(t) => s.serialize_str(&iso(*t)),
        None => s.serialize_none(),
    }
}

/// A UTC offset like `+05:30`, `-08:00`, `Z` or `UTC`.
pub fn parse_offset(s: &str) -> Option<FixedOffset> {
    let s = s.trim();
    if s.eq_ignore_ascii_case("z") || s.eq_ignore_ascii_case("utc") {
        return FixedOffset::east_opt(0);
    }
    let s = s.strip_prefix("UTC").unwrap_or(s);
    let (sign, rest) = match s.as_bytes().first()? {
        b'+' => (1, &s[1..]),
        b'-' => (-1, &s[1..]),
        _ => return None,
    };
    let (h, m) = rest.split_once(':').unwrap_or((rest, "0"));
    let digits = |t: &str| !t.is_empty() && t.len() <= 2 && t.bytes().all(|b| b.is_ascii_digit());
    if !digits(h) || !digits(m) {
        return None;
    }
    // Within -14:00 and +14:00 (real offsets run from -12:00 to +14:00), minutes below 60.
    let (h, m) = (h.parse::<i32>().ok()?, m.parse::<i32>().ok()?);
    if m >= 60 || h * 60 + m > 14 * 60 {
        return None;
    }
    FixedOffset::east_opt(sign * (h * 3600 + m * 60))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emulator::state::{NotificationRec, Subscriber};
    use crate::model::NewNotification;
    use chrono::TimeZone;

    fn site() -> Site {
        Site::new(1, "k".into())
    }

    fn subscriber(hash: &str, at: DateTime<Utc>, online: bool) -> Subscriber {
        Subscriber {
            subscriber_hash: hash.into(),
            profile_id: None,
            country: None,
            state: None,
            city: None,
            device: None,
            device_type: None,
            browser: None,
            platform: None,
            attributes: Map::new(),
            subscribed_at: at,
            unsubscribed_at: None,
            segments: Default::default(),
            online,
        }
    }

    fn broadcast(site: &mut Site, kind: NotificationType, valid_from: Option<&str>) {
        site.notifications.push(NotificationRec {
            notification_id: site.notifications.len() as i64 + 1,
            status: String::new(),
            created_at: Utc::now(),
            request: NewNotification {
                notification_type: kind,
                valid_from_utc: valid_from.map(String::from),
                ..Default::default()
            },
        });
    }

    #[test]
    fn a_later_broadcast_already_due_goes_out_when_created() {
        let now = Utc.with_ymd_and_hms(2030, 5, 1, 12, 0, 0).unwrap();
        let mut s = site();
        let mut ids = Counters::default();
        s.add_subscriber(subscriber("a", now - Duration::days(1), true));
        broadcast(&mut s, NotificationType::Later, Some("2020-01-01 00:00:00"));
        on_broadcast(&mut s, &mut ids, now);
        assert_eq!(s.engine.deliveries.len(), 1);
        assert_eq!(s.engine.deliveries[0].sent_at, Some(now));
    }

    #[test]
    fn a_broadcast_skips_subscribers_dated_after_it_went_out() {
        let now = Utc.with_ymd_and_hms(2030, 5, 1, 12, 0, 0).unwrap();
        let mut s = site();
        let mut ids = Counters::default();
        s.add_subscriber(subscriber("before", now - Duration::days(1), true));
        s.add_subscriber(subscriber("after", now + Duration::days(1), true));
        broadcast(&mut s, NotificationType::Later, Some("2030-05-01 13:00:00"));
        on_broadcast(&mut s, &mut ids, now);
        tick(&mut s, &mut ids, now + Duration::days(2));
        let got: Vec<&str> = s
            .engine
            .deliveries
            .iter()
            .map(|d| d.subscriber_hash.as_str())
            .collect();
        assert_eq!(got, ["before"]);
    }

    #[test]
    fn what_waits_for_an_unsubscribed_device_is_never_delivered() {
        let now = Utc.with_ymd_and_hms(2030, 5, 1, 12, 0, 0).unwrap();
        let mut s = site();
        let mut ids = Counters::default();
        s.add_subscriber(subscriber("a", now - Duration::days(1), false));
        broadcast(&mut s, NotificationType::Now, None);
        on_broadcast(&mut s, &mut ids, now);
        assert_eq!(s.engine.deliveries[0].status, "pending");
        s.subscribers[0].unsubscribed_at = Some(now + Duration::minutes(1));
        set_online(&mut s, "a", true, now + Duration::minutes(2));
        assert_eq!(s.engine.deliveries[0].status, "pending");
        assert_eq!(s.engine.deliveries[0].sent_at, None);
    }

    #[test]
    fn tags_are_filled_from_data() {
        let mut data = Map::new();
        data.insert("name".into(), Value::from("Ada"));
        data.insert("n".into(), Value::from(3));
        assert_eq!(
            personalize("Hi {{name}}, {{ n }} items {{missing}}!", &data),
            "Hi Ada, 3 items !"
        );
        assert_eq!(personalize("no tags {{", &data), "no tags {{");
    }

    #[test]
    fn percentage_threshold_is_inclusive() {
        assert!(drop_reaches("percentage", 10.0, 100.0, 89.0));
        assert!(drop_reaches("percentage", 10.0, 100.0, 90.0));
        assert!(!drop_reaches("percentage", 10.0, 100.0, 91.0));
        assert!(drop_reaches("absolute", 5.0, 20.0, 15.0));
        assert!(!drop_reaches("absolute", 5.0, 20.0, 15.5));
    }

    #[test]
    fn whole_prices_fill_tags_without_a_fraction() {
        let mut data = Map::new();
        data.insert("price".into(), price_value(89.0));
        data.insert("old_price".into(), price_value(99.5));
        assert_eq!(
            personalize("{{price}} was {{old_price}}", &data),
            "89 was 99.5"
        );
    }

    #[test]
    fn offsets_parse() {
        assert_eq!(parse_offset("+05:30"), FixedOffset::east_opt(19800));
        assert_eq!(parse_offset("-08:00"), FixedOffset::east_opt(-28800));
        assert_eq!(parse_offset("UTC"), FixedOffset::east_opt(0));
        assert_eq!(parse_offset("nope"), None);
        // nothing out of range wraps into another offset, and blank is no offset
        for bad in ["+05:60", "+05:99", "+15:00", "", " ", "+5:3x", "+123"] {
            assert_eq!(parse_offset(bad), None, "{bad:?}");
        }
        assert_eq!(parse_offset("+14:00"), FixedOffset::east_opt(50400));
    }
}

//! The emulator's own controls, apart from the API: seeding subscribers, segments and
//! triggered campaigns, reading what the service received and holds, faults, the clock,
//! reset. Each operation is a function of JSON to JSON, served as `/_emulator/{op}` and
//! called in-process by `pushwire.testing.Emulator`, so both ways run the same code.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Json;
use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::args::{flag, int_arg, str_arg, time_arg};
use super::emu::{Emu, Pinned};
use super::engine;
use super::faults::{Chaos, ChaosKind, FaultSpec};
use super::inspector;
use super::seed;
use super::state::{self, iso, Counters, SegmentRec};
use crate::model::{
    Analytics, CampaignOptions, Rules, TriggerOptions, TriggeredCampaign, TriggeredNotification,
    UtmParams,
};
use crate::validate::{self, CAMPAIGN_ALERT_EXPIRY_DEFAULT_SECONDS, CAMPAIGN_EXPIRY_MAX_SECONDS};

/// The operations, for the admin index and error messages.
pub const OPERATIONS: &[&str] = &[
    "inject_random_faults",
    "fault_stats",
    "set_request_log",
    "set_retention",
    "retention",
    "add_site",
    "set_timezone",
    "add_subscriber",
    "add_subscribers",
    "generate_subscribers",
    "set_online",
    "unsubscribe",
    "create_segment",
    "create_trigger",
    "add_alert",
    "alerts",
    "requests",
    "clear_requests",
    "subscribers",
    "segments",
    "notifications",
    "events",
    "products",
    "deliveries",
    "record_view",
    "record_click",
    "inject_fault",
    "clear_faults",
    "now",
    "advance",
    "travel_to",
    "freeze_clock",
    "reset",
    "operations",
    "sites",
    "broadcasts",
    "triggers",
    "drips",
    "summary",
];

/// The operations that only read: the inspector's live page re-reads after every change,
/// so a read must not count as one.
const READS: &[&str] = &[
    "operations",
    "alerts",
    "deliveries",
    "requests",
    "retention",
    "subscribers",
    "segments",
    "notifications",
    "events",
    "products",
    "fault_stats",
    "now",
    "sites",
    "broadcasts",
    "triggers",
    "drips",
    "summary",
];

/// Runs one admin operation; one that writes tells the inspector's open pages.
pub fn dispatch(emu: &Emu, op: &str, args: Value) -> Result<Value, String> {
    let out = run(emu, op, args);
    if out.is_ok() && !READS.contains(&op) {
        emu.changes.bump();
    }
    out
}

fn run(emu: &Emu, op: &str, args: Value) -> Result<Value, String> {
    let args = match args {
        Value::Object(m) => m,
        Value::Null => Map::new(),
        _ => return Err("arguments must be a JSON object".into()),
    };
    let site = site_of(emu, &args, op)?;
    let mut args = args;
    args.remove("site_id");
    match op {
        "add_site" => {
            let key = str_arg(&args, "api_key")?.ok_or("api_key is required")?;
            if let Some(problem) = super::keys::key_problem(&key) {
                return Err(problem.into());
            }
            let tz = str_arg(&args, "timezone")?
                .map(|raw| {
                    engine::parse_offset(&raw)
                        .ok_or("timezone must be a UTC offset like +05:30, -08:00 or UTC")
                })
                .transpose()?;
            let mut st = emu.lock();
            let id = st.add_site(&key);
            if let (Some(tz), Some(site)) = (tz, st.sites.get_mut(&id)) {
                site.timezone = tz;
            }
            Ok(json!({"site_id": id, "api_key_set": true}))
        }
        "add_subscriber" => add_subscriber(emu, site, args),
        "add_subscribers" => add_subscribers(emu, site, args),
        "generate_subscribers" => {
            let population = seed::Population::of(&args)?;
            let added = emu.with_site(site, |s, ids, now| population.add_to(s, ids, now))??;
            Ok(json!({"added": added}))
        }
        "set_timezone" => {
            let raw = str_arg(&args, "timezone")?.ok_or("timezone is required")?;
            let tz = engine::parse_offset(&raw)
                .ok_or("timezone must be a UTC offset like +05:30, -08:00 or UTC")?;
            emu.with_site(site, |s, _, _| s.timezone = tz)?;
            Ok(json!({"timezone": tz.to_string()}))
        }
        "set_online" => {
            let hash = str_arg(&args, "subscriber_hash")?.ok_or("subscriber_hash is required")?;
            let online = args
                .get("online")
                .and_then(Value::as_bool)
                .ok_or("online must be true or false")?;
            emu.with_site(site, |s, _, now| engine::set_online(s, &hash, online, now))?
                .then_some(json!({}))
                .ok_or_else(|| format!("subscriber {hash} does not exist"))
        }
        "unsubscribe" => {
            let hash = str_arg(&args, "subscriber_hash")?.ok_or("subscriber_hash is required")?;
            emu.with_site(site, |s, _, now| {
                let sub = s
                    .subscriber_mut(&hash)
                    .ok_or_else(|| format!("subscriber {hash} does not exist"))?;
                sub.unsubscribed_at.get_or_insert(now);
                Ok(json!({"unsubscribed_at": iso(now)}))
            })?
        }
        "add_alert" => {
            let hash = str_arg(&args, "subscriber_hash")?.ok_or("subscriber_hash is required")?;
            let product_id = str_arg(&args, "product_id")?.ok_or("product_id is required")?;
            let variant_id = str_arg(&args, "variant_id")?;
            emu.with_site(site, |s, _, now| {
                if s.subscriber(&hash).is_none() {
                    return Err(format!("subscriber {hash} does not exist"));
                }
                s.engine.alerts.push(state::Alert {
                    subscriber_hash: hash,
                    product_id,
                    variant_id,
                    created_at: now,
                    fired_by: Vec::new(),
                    baselines: Vec::new(),
                });
                Ok(json!({}))
            })?
        }
        "alerts" => Ok(emu.with_site(site, |s, _, _| json!(s.engine.alerts))?),
        "deliveries" => {
            let hash = str_arg(&args, "subscriber_hash")?;
            let status = str_arg(&args, "status")?.unwrap_or_else(|| "delivered".into());
            if !matches!(
                status.as_str(),
                "delivered" | "pending" | "expired" | "capped" | "all"
            ) {
                return Err("status must be delivered, pending, expired, capped or all".into());
            }
            let notification = int_arg(&args, "notification_id")?;
            let source_id = int_arg(&args, "source_id")?;
            let source = match str_arg(&args, "source")?.as_deref() {
                None => None,
                Some("broadcast") => Some(state::Source::Broadcast),
                Some("drip") => Some(state::Source::Drip),
                Some("trigger") => Some(state::Source::Trigger),
                Some(_) => return Err("source must be broadcast, drip or trigger".into()),
            };
            let window = Window::of(&args)?;
            let page = Page::of_args(&args)?;
            let meta = flag(&args, "meta")?;
            emu.with_site(site, |s, _, _| {
                // A misspelt hash must not read as "received nothing".
                if let Some(h) = hash.as_ref() {
                    if s.subscriber(h).is_none() {
                        return Err(format!("subscriber {h} does not exist"));
                    }
                }
                let mut out: Vec<&state::Delivery> = s
                    .engine
                    .deliveries
                    .iter()
                    .filter(|d| hash.as_ref().is_none_or(|h| &d.subscriber_hash == h))
                    .filter(|d| status == "all" || d.status == status)
                    .filter(|d| notification.is_none_or(|n| d.notification_id == n))
                    .filter(|d| source.as_ref().is_none_or(|src| d.source == *src))
                    .filter(|d| source_id.is_none_or(|id| d.source_id == id))
                    .filter(|d| window.holds(d.sent_at.unwrap_or(d.queued_at)))
                    .collect();
                out.sort_by_key(|d| (d.sent_at.unwrap_or(d.queued_at), d.delivery_id));
                Ok(page.of(out, meta))
            })?
        }
        "record_view" | "record_click" => {
            let id = args
                .get("delivery_id")
                .and_then(|v| {
                    v.as_i64()
                        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
                })
                .ok_or("delivery_id is required")?;
            let click = op == "record_click";
            emu.with_site(site, |s, _, now| {
                // Numbered as they are made: `deliveries` is in id order.
                let deliveries = &mut s.engine.deliveries;
                let d = deliveries
                    .binary_search_by_key(&id, |d| d.delivery_id)
                    .ok()
                    .map(|i| &mut deliveries[i])
                    .ok_or_else(|| format!("delivery {id} does not exist"))?;
                if d.status != "delivered" {
                    return Err(format!("delivery {id} was not delivered ({})", d.status));
                }
                let slot = if click {
                    &mut d.clicked_at
                } else {
                    &mut d.viewed_at
                };
                slot.get_or_insert(now);
                Ok(json!({}))
            })?
        }
        "operations" => Ok(json!(OPERATIONS)),
        "create_segment" => {
            let name = str_arg(&args, "name")?.ok_or("name is required")?;
            let kind = str_arg(&args, "segment_type")?.unwrap_or_else(|| "custom".into());
            let id = emu.with_site(site, |s, ids, now| {
                let segment_id = Counters::next(&mut ids.segment);
                s.segments.push(SegmentRec {
                    segment_id,
                    segment_name: name,
                    segment_type: kind,
                    created_at: now,
                });
                segment_id
            })?;
            Ok(json!({"segment_id": id}))
        }
        "create_trigger" => create_trigger(emu, site, args),
        // With `meta`, the entries come with what the retention pruned: one read of the
        // lock, so the count is the entries' own.
        "requests" => {
            let path = str_arg(&args, "path")?;
            let method = str_arg(&args, "method")?.map(|m| m.to_ascii_uppercase());
            let status = int_arg(&args, "status")?;
            let window = Window::of(&args)?;
            let page = Page::of_args(&args)?;
            let meta = flag(&args, "meta")?;
            let st = emu.lock();
            // A path ending in `*` is a prefix, as in `inject_fault`.
            let path_matches = |p: &str| match path.as_deref() {
                None => true,
                Some(want) => match want.strip_suffix('*') {
                    Some(prefix) => p.starts_with(prefix),
                    None => p == want,
                },
            };
            let entries: Vec<&state::LogEntry> = st
                .log
                .iter()
                .filter(|e| path_matches(&e.path))
                .filter(|e| method.as_ref().is_none_or(|m| &e.method == m))
                .filter(|e| status.is_none_or(|s| e.status.map(i64::from) == Some(s)))
                .filter(|e| window.holds(e.received_at))
                .collect();
            let mut out = page.of(entries, meta);
            if let Value::Object(m) = &mut out {
                m.insert("pruned".into(), json!(st.log_pruned));
                m.insert("retention".into(), json!(emu.retention()));
            }
            Ok(out)
        }
        "set_retention" => {
            let keep = args
                .get("retention")
                .and_then(Value::as_u64)
                .ok_or("retention must be a whole number of entries (0: keep all)")?;
            emu.set_retention(keep as usize);
            Ok(json!({"retention": keep}))
        }
        "retention" => {
            let (log, pruned) = {
                let st = emu.lock();
                (st.log.len(), st.log_pruned)
            };
            let (events, events_pruned) =
                emu.with_site(site, |s, _, _| (s.events.len(), s.events_pruned))?;
            Ok(json!({
                "retention": emu.retention(),
                "requests": {"kept": log, "pruned": pruned},
                "events": {"kept": events, "pruned": events_pruned},
            }))
        }
        "set_request_log" => {
            let on = args
                .get("enabled")
                .and_then(Value::as_bool)
                .ok_or("enabled must be true or false")?;
            emu.record_requests
                .store(on, std::sync::atomic::Ordering::Relaxed);
            Ok(json!({"enabled": on}))
        }
        "clear_requests" => {
            emu.clear_log();
            Ok(json!({}))
        }
        "subscribers" => {
            let hash = str_arg(&args, "subscriber_hash")?;
            let paged = args.contains_key("limit") || args.contains_key("offset");
            let page = Page::of_args(&args)?;
            let meta = flag(&args, "meta")?;
            emu.with_site(site, |s, _, _| match hash {
                Some(h) => s
                    .subscriber(&h)
                    .map(|sub| json!(sub))
                    .ok_or_else(|| format!("subscriber {h} does not exist")),
                None if paged || meta => {
                    let all: Vec<_> = s.subscribers.iter().collect();
                    Ok(page.of(all, meta))
                }
                None => Ok(json!(s.subscribers)),
            })?
        }
        "sites" => Ok(inspector::sites(emu)),
        "broadcasts" => {
            let page = Page::of_args(&args)?;
            Ok(emu.with_site(site, |s, _, now| {
                inspector::broadcasts(s, now, page.offset, page.limit.unwrap_or(usize::MAX))
            })?)
        }
        "triggers" => Ok(emu.with_site(site, |s, _, _| inspector::triggers(s))?),
        "drips" => Ok(emu.with_site(site, |s, _, _| inspector::drips(s))?),
        "summary" => emu.with_site(site, |s, _, now| inspector::summary(s, now, &args))?,
        "segments" => Ok(emu.with_site(site, |s, _, _| {
            let members = |id: i64| -> Vec<&str> {
                s.subscribers
                    .iter()
                    .filter(|sub| sub.segments.contains(&id))
                    .map(|sub| sub.subscriber_hash.as_str())
                    .collect()
            };
            Value::Array(
                s.segments
                    .iter()
                    .map(|seg| {
                        let mut v = json!(seg);
                        v["members"] = json!(members(seg.segment_id));
                        v
                    })
                    .collect(),
            )
        })?),
        "notifications" => Ok(emu.with_site(site, |s, _, _| json!(s.notifications))?),
        "events" => {
            let meta = flag(&args, "meta")?;
            let retention = emu.retention();
            Ok(emu.with_site(site, |s, _, _| {
                if meta {
                    json!({"entries": s.events, "pruned": s.events_pruned, "retention": retention})
                } else {
                    json!(s.events)
                }
            })?)
        }
        "products" => Ok(emu.with_site(site, |s, _, _| {
            json!(s.products.values().collect::<Vec<_>>())
        })?),
        "inject_fault" => {
            let spec: FaultSpec = read_args(args)?;
            let fault = spec.into_fault()?;
            emu.lock().faults.push(fault);
            Ok(json!({}))
        }
        "clear_faults" => {
            let mut st = emu.lock();
            st.faults.clear();
            st.chaos = None;
            Ok(json!({}))
        }
        "inject_random_faults" => {
            let rate = args
                .get("rate")
                .and_then(Value::as_f64)
                .filter(|r| (0.0..=1.0).contains(r))
                .ok_or("rate must be a number from 0 to 1")?;
            let kinds = match args.get("kinds") {
                None | Some(Value::Null) => ChaosKind::ALL.to_vec(),
                Some(Value::Array(a)) => a
                    .iter()
                    .map(|k| k.as_str().and_then(ChaosKind::parse))
                    .collect::<Option<Vec<_>>>()
                    .ok_or("kinds must name 500, 503, 429, delay, drop_before, drop_after")?,
                Some(_) => return Err("kinds must be a list".into()),
            };
            if kinds.is_empty() {
                return Err("kinds must name at least one kind of fault".into());
            }
            let delay = args.get("delay").and_then(Value::as_f64).unwrap_or(2.0);
            if !(delay.is_finite() && (0.0..=3600.0).contains(&delay)) {
                return Err("delay must be a number of seconds from 0 to 3600".into());
            }
            let seed = args
                .get("seed")
                .and_then(Value::as_u64)
                .unwrap_or_else(|| fastrand::u64(..));
            // A prefix, with or without a trailing `*`.
            let path = str_arg(&args, "path")?
                .map(|p| p.trim_end_matches('*').to_string())
                .unwrap_or_else(|| "/".into());
            // A prefix: it must lead to a route, or no fault would ever fire.
            if !crate::emulator::faults::can_match(
                &format!("{}*", path.trim_end_matches('*')),
                None,
            ) {
                return Err(format!(
                    "no route of the service starts with {path:?}, so no fault would ever fire; \
                     the routes are {}",
                    crate::emulator::faults::route_list()
                ));
            }
            emu.lock().chaos = Some(Chaos {
                path,
                rate,
                kinds,
                delay: std::time::Duration::from_secs_f64(delay),
                rng: fastrand::Rng::with_seed(seed),
                injected: Default::default(),
            });
            Ok(json!({"seed": seed}))
        }
        "fault_stats" => {
            let st = emu.lock();
            Ok(json!(st
                .chaos
                .as_ref()
                .map(|c| c.injected.clone())
                .unwrap_or_default()))
        }
        "now" => {
            let st = emu.lock();
            Ok(json!({"now": iso(st.now()), "frozen": st.frozen_at.is_some()}))
        }
        "advance" => {
            // A century at most: the clock must stay on chrono's calendar.
            let secs = args
                .get("seconds")
                .and_then(Value::as_f64)
                .filter(|s| s.is_finite() && (0.0..=3.2e9).contains(s))
                .ok_or("seconds must be a number from 0 to 3.2e9 (a century)")?;
            let mut st = emu.lock();
            let step = chrono::Duration::milliseconds((secs * 1000.0).round() as i64);
            if chrono::Datelike::year(&(st.now() + step)) >= 9000 {
                return Err("the clock must stay before the year 9000".into());
            }
            st.advance_clock(step);
            Ok(json!({"now": iso(st.now())}))
        }
        "travel_to" => {
            // To a given instant (a test of "at 10:00 site time" must not depend on when it
            // runs); forward only, as `advance`: what was delivered stays delivered.
            let to = time_arg(&args, "time")?.ok_or("time is required")?;
            if chrono::Datelike::year(&to) >= 9000 {
                return Err("time must be before the year 9000".into());
            }
            let mut st = emu.lock();
            let now = st.now();
            // `now` as read back is to the millisecond: travelling to it is staying.
            if to < now && now - to < chrono::Duration::seconds(1) {
                return Ok(json!({"now": iso(now)}));
            }
            if to < now {
                return Err(format!(
                    "the clock only moves forward: {} is before the emulator's now, {}",
                    iso(to),
                    iso(now)
                ));
            }
            st.advance_clock(to - now);
            Ok(json!({"now": iso(st.now())}))
        }
        "freeze_clock" => {
            let frozen = match args.get("frozen") {
                None => true,
                Some(Value::Bool(b)) => *b,
                Some(_) => return Err("frozen must be true or false".into()),
            };
            let mut st = emu.lock();
            st.freeze_clock(frozen);
            Ok(json!({"now": iso(st.now()), "frozen": frozen}))
        }
        "reset" => {
            emu.reset();
            Ok(json!({}))
        }
        other => Err(format!(
            "unknown operation {other}; operations: {}",
            OPERATIONS.join(", ")
        )),
    }
}

/// The site an operation acts on: the one of `api_key` when given, else the default.
fn site_of(emu: &Emu, args: &Map<String, Value>, op: &str) -> Result<Pinned, String> {
    // The inspector names sites by id: the page never holds a key.
    if let Some(id) = int_arg(args, "site_id")? {
        if op != "add_site" {
            return emu
                .pin_site_id(id)
                .ok_or_else(|| format!("no site has the id {id}"));
        }
    }
    let key = match args.get("api_key").and_then(Value::as_str) {
        Some(k) => k.to_string(),
        None => emu.default_key.clone(),
    };
    match emu.pin_site(&key) {
        Some(site) => Ok(site),
        // add_site names a key that has no site yet.
        None if op == "add_site" => emu
            .pin_site(&emu.default_key)
            .ok_or_else(|| "the emulator has no default site".to_string()),
        // A mistyped key must not seed the default site instead.
        None => Err("no site has that api_key: add it with add_site first".to_string()),
    }
}

/// The arguments that are booleans or numbers, which a query string can only spell as text.
const TYPED_ARGS: [&str; 20] = [
    "site_id",
    "meta",
    "limit",
    "offset",
    "notification_id",
    "source_id",
    "retention",
    "online",
    "enabled",
    "frozen",
    "processed",
    "drop",
    "status",
    "times",
    "retry_after",
    "delay",
    "rate",
    "seed",
    "seconds",
    "delivery_id",
];

/// A query-string argument as the JSON body would carry it: `true`/`false` and numbers for
/// the arguments that take them (an `online=false` read as text would be ignored, and the
/// subscriber made online), text for every other (a hash of digits stays a hash).
fn query_value(key: &str, raw: String) -> Value {
    if !TYPED_ARGS.contains(&key) {
        return Value::String(raw);
    }
    match raw.trim() {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        // A number however it is written (`2`, `02`, `2.0`, `1e3`, `.5`): a whole one as an
        // integer, which the counting arguments want; anything else, `inf` included, stays
        // text and is refused by the argument's own check.
        t => t
            .parse::<i64>()
            .map(serde_json::Number::from)
            .or_else(|_| t.parse::<u64>().map(serde_json::Number::from))
            .ok()
            .or_else(|| {
                let f = t.parse::<f64>().ok().filter(|f| f.is_finite())?;
                if f.fract() == 0.0 && f.abs() < 9.0e15 {
                    Some(serde_json::Number::from(f as i64))
                } else {
                    serde_json::Number::from_f64(f)
                }
            })
            .map(Value::Number)
            .unwrap_or(Value::String(raw)),
    }
}

/// `since` (inclusive) and `until` (exclusive), ISO 8601, of a listing.
struct Window {
    since: Option<DateTime<Utc>>,
    until: Option<DateTime<Utc>>,
}

impl Window {
    fn of(args: &Map<String, Value>) -> Result<Window, String> {
        Ok(Window {
            since: time_arg(args, "since")?,
            until: time_arg(args, "until")?,
        })
    }

    fn holds(&self, at: DateTime<Utc>) -> bool {
        self.since.is_none_or(|s| at >= s) && self.until.is_none_or(|u| at < u)
    }
}

/// `offset` and `limit` of a listing, applied in Rust: a test over a million deliveries
/// takes the page it reads, never every entry copied into Python.
struct Page {
    offset: usize,
    limit: Option<usize>,
}

impl Page {
    fn of_args(args: &Map<String, Value>) -> Result<Page, String> {
        let count = |key: &str| -> Result<Option<usize>, String> {
            match int_arg(args, key)? {
                Some(n) if n < 0 => Err(format!("{key} must not be negative")),
                n => Ok(n.map(|n| n as usize)),
            }
        };
        Ok(Page {
            offset: count("offset")?.unwrap_or(0),
            limit: count("limit")?,
        })
    }

    /// The page of `all`: the entries alone, or with `meta` `{entries, total}`.
    fn of<T: serde::Serialize>(&self, all: Vec<T>, meta: bool) -> Value {
        let total = all.len();
        let page: Vec<T> = all
            .into_iter()
            .skip(self.offset)
            .take(self.limit.unwrap_or(usize::MAX))
            .collect();
        if meta {
            json!({"entries": page, "total": total})
        } else {
            json!(page)
        }
    }
}

fn add_subscriber(emu: &Emu, site: Pinned, mut args: Map<String, Value>) -> Result<Value, String> {
    args.remove("api_key");
    let new = seed::subscriber_of(&args)?;
    let hashes = emu
        .with_site(site, |s, ids, now| seed::add_batch(s, ids, now, vec![new]))?
        .map_err(|e| e.strip_prefix("row 0: ").map_or(e.clone(), str::to_string))?;
    Ok(json!({"subscriber_hash": hashes.first()}))
}

/// `add_subscribers`: rows or columns, all added or none.
fn add_subscribers(emu: &Emu, site: Pinned, args: Map<String, Value>) -> Result<Value, String> {
    if let Some(k) = args
        .keys()
        .find(|k| !["api_key", "rows", "columns", "hashes"].contains(&k.as_str()))
    {
        return Err(format!(
            "{k} is not an argument of add_subscribers (rows or columns, and hashes)"
        ));
    }
    let answer_hashes = flag(&args, "hashes")?;
    let batch = seed::read_batch(&args)?;
    let hashes = emu.with_site(site, |s, ids, now| seed::add_batch(s, ids, now, batch))??;
    Ok(if answer_hashes {
        json!({"added": hashes.len(), "subscriber_hashes": hashes})
    } else {
        json!({"added": hashes.len()})
    })
}

/// The fields of 2.1 without ids and dates; notifications of 2.2 without ids.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewTrigger {
    campaign_name: String,
    #[serde(default = "default_type")]
    campaign_type: String,
    #[serde(default = "default_status")]
    status: String,
    #[serde(default = "default_limit")]
    daily_trigger_limit: i64,
    #[serde(default = "default_limit")]
    weekly_trigger_limit: i64,
    rules: Rules,
    #[serde(default)]
    notifications: Vec<TriggeredNotification>,
    #[serde(default)]
    options: Option<TriggerOptions>,
    #[serde(default)]
    utm_params: Option<Value>,
    #[serde(default)]
    api_key: Option<String>,
}

impl NewTrigger {
    /// The read shape's own fields (2.1): a campaign read from the service (or from another
    /// emulator) and given back as it is seeds a copy, these left out.
    const READ_ONLY: [&'static str; 5] = [
        "trigger_id",
        "site_id",
        "created_at_utc",
        "updated_at_utc",
        "analytics",
    ];
}

/// An admin operation's arguments as `T`; a refusal names the argument in plain words
/// (serde's own reads `invalid type: string "500", expected u16`).
fn read_args<T: serde::de::DeserializeOwned>(args: Map<String, Value>) -> Result<T, String> {
    serde_path_to_error::deserialize(Value::Object(args)).map_err(|e| {
        let field = e.path().to_string();
        let inner = e.inner().to_string();
        if let Some(name) = inner
            .strip_prefix("missing field `")
            .and_then(|r| r.split('`').next())
        {
            return match field.as_str() {
                "." => format!("{name} is required"),
                at => format!("{at}.{name} is required"),
            };
        }
        let plain = inner
            .strip_prefix("invalid type: ")
            .and_then(|r| r.split_once(", expected "))
            .map(|(got, want)| {
                let want = match want {
                    "u8" | "u16" | "u32" | "u64" | "usize" | "i32" | "i64" | "an integer" => {
                        "an integer"
                    }
                    "f32" | "f64" => "a number",
                    "a sequence" => "a list",
                    w if w == "a map" || w.starts_with("struct ") => "a dict",
                    w => w,
                };
                format!("must be {want}, not {got}")
            });
        match (field.as_str(), plain) {
            (".", Some(p)) => format!("the arguments {p}"),
            (".", None) => inner,
            (at, Some(p)) => format!("{at} {p}"),
            (at, None) => format!("{at}: {inner}"),
        }
    })
}

fn default_type() -> String {
    "trigger".into()
}
fn default_status() -> String {
    "active".into()
}
fn default_limit() -> i64 {
    10
}

fn create_trigger(emu: &Emu, site: Pinned, mut args: Map<String, Value>) -> Result<Value, String> {
    for key in NewTrigger::READ_ONLY {
        args.remove(key);
    }
    // The notification model reads a response's `null` as empty; a seed must say what it
    // means (a `null` schedule would silently be `rightaway`).
    if let Some(Value::Array(notifications)) = args.get("notifications") {
        for (i, n) in notifications.iter().enumerate() {
            if let Some(key) = ["actions", "schedule_options", "analytics"]
                .into_iter()
                .find(|k| n.get(*k).is_some_and(Value::is_null))
            {
                return Err(format!(
                    "notifications[{i}].{key} must not be null: leave it out for the default"
                ));
            }
        }
    }
    let t: NewTrigger = read_args(args)?;
    let _ = t.api_key;
    const TYPES: [&str; 5] = ["generic", "browse", "trigger", "price_drop", "inventory"];
    const STATUSES: [&str; 4] = ["draft", "active", "pause", "deleted"];
    if t.campaign_name.trim().is_empty() {
        return Err("campaign_name is required".into());
    }
    if !TYPES.contains(&t.campaign_type.as_str()) {
        return Err(format!("campaign_type must be one of {}", TYPES.join(", ")));
    }
    if !STATUSES.contains(&t.status.as_str()) {
        return Err(format!("status must be one of {}", STATUSES.join(", ")));
    }
    if t.daily_trigger_limit < 0 || t.weekly_trigger_limit < 0 {
        return Err("trigger limits must not be negative".into());
    }
    if t.rules.start_event_name.trim().is_empty() {
        return Err("rules.start_event_name is required".into());
    }
    let mut notifications = t.notifications;
    for (i, n) in notifications.iter_mut().enumerate() {
        let prefix = format!("notifications[{i}].");
        // A misspelt key (`schedule_option`) would be kept aside and its meaning lost.
        if let Some(k) = n.extra.0.keys().next() {
            return Err(format!(
                "{prefix}{k} is not a field of a campaign notification"
            ));
        }
        if n.title.is_empty() || n.message.is_empty() || n.url.is_empty() {
            return Err(format!("{prefix}title, message and url are required"));
        }
        if n.expiry == 0 {
            n.expiry = CAMPAIGN_EXPIRY_MAX_SECONDS;
        }
        validate::campaign_expiry(&format!("{prefix}expiry"), n.expiry)
            .map_err(|v| v.message_with_field())?;
        if n.schedule_options.r#type.is_empty() {
            n.schedule_options = if i == 0 {
                crate::model::ScheduleOptions {
                    r#type: "rightaway".into(),
                    ..Default::default()
                }
            } else {
                crate::model::ScheduleOptions {
                    r#type: "after".into(),
                    value: Some(0),
                    unit: Some("minutes".into()),
                    at: None,
                }
            };
        }
        validate::schedule(&prefix, i, &n.schedule_options, false)
            .map_err(|v| v.message_with_field())?;
        validate::actions(&prefix, &n.actions).map_err(|v| v.message_with_field())?;
    }
    let mut options = t.options;
    if matches!(t.campaign_type.as_str(), "price_drop" | "inventory") {
        let o = options.get_or_insert_with(TriggerOptions::default);
        let c = o.campaign.get_or_insert_with(CampaignOptions::default);
        let expiry = c
            .expiry
            .get_or_insert_with(|| CAMPAIGN_ALERT_EXPIRY_DEFAULT_SECONDS.to_string());
        // A number of seconds (2.4), within a century: the engine adds it to dates.
        if !expiry
            .trim()
            .parse::<i64>()
            .is_ok_and(|e| (1..=3_155_760_000).contains(&e))
        {
            return Err(format!(
                "options.campaign.expiry must be a whole number of seconds from 1 to \
                 3155760000 (a century), not {expiry:?}"
            ));
        }
        if t.campaign_type == "price_drop" {
            let th = c
                .price_drop_threshold
                .as_ref()
                .ok_or("options.campaign.price_drop_threshold is required for price_drop")?;
            if th.r#type != "absolute" && th.r#type != "percentage" {
                return Err("price_drop_threshold.type must be absolute or percentage".into());
            }
        }
    }
    let utm = t
        .utm_params
        .map(|v| UtmParams::from_either(&v))
        .transpose()?
        .flatten();
    let id = emu.with_site(site, |s, ids, now| {
        let trigger_id = Counters::next(&mut ids.trigger);
        for (i, n) in notifications.iter_mut().enumerate() {
            n.id = Counters::next(&mut ids.campaign_notification);
            n.order = i as i64 + 1;
            n.analytics = Analytics::default();
        }
        s.triggers.push(TriggeredCampaign {
            trigger_id,
            campaign_name: t.campaign_name,
            campaign_type: t.campaign_type,
            status: t.status,
            site_id: s.site_id,
            created_at_utc: iso(now),
            updated_at_utc: iso(now),
            daily_trigger_limit: t.daily_trigger_limit,
            weekly_trigger_limit: t.weekly_trigger_limit,
            rules: t.rules,
            analytics: Analytics::default(),
            notifications: Some(notifications),
            options,
            utm_params: utm,
            extra: Default::default(),
        });
        trigger_id
    })?;
    Ok(json!({"trigger_id": id}))
}

/// `/_emulator/{op}`: arguments from the JSON body and the query string.
pub async fn route(
    State(emu): State<Arc<Emu>>,
    op: Result<Path<String>, axum::extract::rejection::PathRejection>,
    uri: Uri,
    body: Bytes,
) -> Response {
    let Ok(Path(op)) = op else {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": "the operation must be text"})),
        )
            .into_response();
    };
    let mut args = if body.is_empty() {
        Map::new()
    } else {
        match serde_json::from_slice::<Value>(&body) {
            Ok(Value::Object(m)) => m,
            _ => {
                return (
                    StatusCode::BAD_REQUEST,
                    Json(json!({"error": "the body must be a JSON object"})),
                )
                    .into_response()
            }
        }
    };
    for (k, v) in form_urlencoded::parse(uri.query().unwrap_or("").as_bytes()) {
        let value = query_value(&k, v.into_owned());
        args.entry(k.into_owned()).or_insert(value);
    }
    match dispatch(&emu, &op, Value::Object(args)) {
        Ok(v) => Json(v).into_response(),
        Err(e) => (StatusCode::BAD_REQUEST, Json(json!({"error": e}))).into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Over HTTP this is a race no test can time; here the reset lands exactly between an
    // operation's look-up of its site and its work.
    #[test]
    fn an_operation_overtaken_by_a_reset_never_lands_on_the_site_that_took_its_id() {
        let emu = Emu::new("default-key-1234");
        for key in ["site-a-12345678", "site-b-12345678"] {
            dispatch(&emu, "add_site", json!({ "api_key": key })).expect("added");
        }
        let a = emu.pin_site("site-a-12345678").expect("a's site");
        // The next test's fixture: its sites added in another order, b taking a's old id.
        emu.reset();
        for key in ["site-b-12345678", "site-a-12345678"] {
            dispatch(&emu, "add_site", json!({ "api_key": key })).expect("added");
        }
        let b = emu.pin_site("site-b-12345678").expect("b's site");
        assert_eq!(b.site.0, a.site.0, "the test's premise: b has a's old id");
        let mut ran = false;
        let refused = emu.with_site(a, |_, _, _| ran = true);
        assert!(refused.is_err_and(|e| e.contains("reset meanwhile")));
        assert!(!ran, "the operation must not run on b's site");
        // b's own operations run.
        assert_eq!(emu.with_site(b, |s, _, _| s.subscribers.len()), Ok(0));
    }
}

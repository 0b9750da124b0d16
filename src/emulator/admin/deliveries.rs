//! What the service sent and received: deliveries (with views and clicks recorded on
//! them), broadcasts with their counts, the summary rows, and the notifications, events
//! and products the API was sent.

use serde_json::{json, Value};

use super::args::{flag, int_arg, str_arg, Args, Page, Window};
use crate::emulator::emu::{Emu, Pinned};
use crate::emulator::engine;
use crate::emulator::inspector;
use crate::emulator::state::{self, Delivery};
use crate::model::{NewNotification, NotificationType};

/// How many subscribers a broadcast of these fields (the spec's names, as a broadcast's
/// `request` in `notifications` shows them) would be handed to if it went out now, by the
/// rules a broadcast is sent by: no broadcast is made and nothing changes. A confirmation
/// page's "this will reach N subscribers", in a test.
pub(super) fn audience(emu: &Emu, site: Pinned, mut args: Args) -> Result<Value, String> {
    args.remove("api_key");
    // A misspelt filter must not count everyone.
    let fields = serde_json::to_value(NewNotification::default()).unwrap_or_default();
    if let Some(k) = args.keys().find(|k| fields.get(k.as_str()).is_none()) {
        return Err(format!(
            "{k} is not a field of a broadcast (the spec's names)"
        ));
    }
    let request: NewNotification = serde_json::from_value(Value::Object(args))
        .map_err(|e| format!("the broadcast's fields (the spec's names): {e}"))?;
    // A draft is sent to no one.
    let draft = request.notification_type == NotificationType::Draft;
    emu.with_site(site, |s, _, now| {
        let reached = if draft {
            0
        } else {
            engine::targets(s, &request, now).len()
        };
        json!({"subscribers": reached})
    })
}

/// The `source` a read names: broadcast, drip or trigger.
fn source_of(args: &Args) -> Result<Option<state::Source>, String> {
    Ok(match str_arg(args, "source")?.as_deref() {
        None => None,
        Some("broadcast") => Some(state::Source::Broadcast),
        Some("drip") => Some(state::Source::Drip),
        Some("trigger") => Some(state::Source::Trigger),
        Some(_) => return Err("source must be broadcast, drip or trigger".into()),
    })
}

pub(super) fn deliveries(emu: &Emu, site: Pinned, args: Args) -> Result<Value, String> {
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
    let source = source_of(&args)?;
    let window = Window::of(&args)?;
    let page = Page::of_args(&args)?;
    let meta = flag(&args, "meta")?;
    emu.with_site(site, |s, _, _| {
        // A misspelt hash must not read as "received nothing".
        let whose = match hash.as_ref() {
            Some(h) => Some(
                s.subscriber_position(h)
                    .ok_or_else(|| format!("subscriber {h} does not exist"))?,
            ),
            None => None,
        };
        let mut out: Vec<&Delivery> = s
            .engine
            .deliveries
            .iter()
            .filter(|d| whose.is_none_or(|at| d.subscriber_at() == at))
            .filter(|d| status == "all" || d.status().as_str() == status)
            .filter(|d| notification.is_none_or(|n| d.dispatch.notification_id == n))
            .filter(|d| source.as_ref().is_none_or(|src| d.dispatch.source == *src))
            .filter(|d| source_id.is_none_or(|id| d.dispatch.source_id == id))
            .filter(|d| window.holds(d.sent_at().unwrap_or(d.dispatch.queued_at)))
            .collect();
        out.sort_by_key(|d| (d.sent_at().unwrap_or(d.dispatch.queued_at), d.delivery_id));
        Ok(page.of_shown(out, meta, |d| {
            d.shown(&s.subscribers[d.subscriber_at()].subscriber_hash)
        }))
    })?
}

pub(super) fn record(emu: &Emu, site: Pinned, args: Args, click: bool) -> Result<Value, String> {
    let id = args
        .get("delivery_id")
        .and_then(|v| {
            v.as_i64()
                .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        })
        .ok_or("delivery_id is required")?;
    emu.with_site(site, |s, _, now| {
        // Numbered as they are made: `deliveries` is in id order.
        let deliveries = &mut s.engine.deliveries;
        let d = deliveries
            .binary_search_by_key(&id, |d| d.delivery_id)
            .ok()
            .map(|i| &mut deliveries[i])
            .ok_or_else(|| format!("delivery {id} does not exist"))?;
        if d.status() != state::Status::Delivered {
            return Err(format!("delivery {id} was not delivered ({})", d.status()));
        }
        d.record(click, now);
        Ok(json!({}))
    })?
}

/// Views (or clicks) recorded in bulk, at the emulator's now: on each delivery of
/// `delivery_ids` (all checked before any is recorded), or on a `rate` share of the delivered
/// ones (those of `notification_id`, or of `source` and `source_id`, when given), drawn with
/// `seed`. A delivery keeps its first view (click). How many were recorded.
pub(super) fn record_many(
    emu: &Emu,
    site: Pinned,
    args: Args,
    click: bool,
) -> Result<Value, String> {
    let ids = match args.get("delivery_ids") {
        None | Some(Value::Null) => None,
        Some(Value::Array(a)) => Some(
            a.iter()
                .map(|v| {
                    v.as_i64()
                        .ok_or_else(|| format!("delivery_ids: {v} is no id"))
                })
                .collect::<Result<Vec<i64>, String>>()?,
        ),
        Some(_) => return Err("delivery_ids must be a list of delivery ids".into()),
    };
    let rate = match args.get("rate") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_f64()
                .filter(|r| (0.0..=1.0).contains(r))
                .ok_or("rate must be a fraction from 0 to 1")?,
        ),
    };
    let notification = int_arg(&args, "notification_id")?;
    let source_id = int_arg(&args, "source_id")?;
    let source = source_of(&args)?;
    let mut rng = match int_arg(&args, "seed")? {
        Some(seed) => fastrand::Rng::with_seed(seed as u64),
        None => fastrand::Rng::new(),
    };
    emu.with_site(site, |s, _, now| {
        let deliveries = &mut s.engine.deliveries;
        let mut recorded = 0usize;
        let mut record = |d: &mut Delivery| {
            let before = if click { d.clicked_at() } else { d.viewed_at() };
            d.record(click, now);
            recorded += usize::from(before.is_none());
        };
        match (ids, rate) {
            (Some(ids), None) => {
                // Numbered as they are made: `deliveries` is in id order.
                let mut at = Vec::with_capacity(ids.len());
                for id in ids {
                    let i = deliveries
                        .binary_search_by_key(&id, |d| d.delivery_id)
                        .map_err(|_| format!("delivery {id} does not exist"))?;
                    let status = deliveries[i].status();
                    if status != state::Status::Delivered {
                        return Err(format!("delivery {id} was not delivered ({status})"));
                    }
                    at.push(i);
                }
                at.into_iter().for_each(|i| record(&mut deliveries[i]));
            }
            (None, Some(rate)) => deliveries
                .iter_mut()
                .filter(|d| d.status() == state::Status::Delivered)
                .filter(|d| notification.is_none_or(|n| d.dispatch.notification_id == n))
                .filter(|d| source.as_ref().is_none_or(|src| d.dispatch.source == *src))
                .filter(|d| source_id.is_none_or(|id| d.dispatch.source_id == id))
                .filter(|_| rng.f64() < rate)
                .for_each(record),
            _ => return Err("give delivery_ids or a rate, one of them".into()),
        }
        Ok(json!({"recorded": recorded}))
    })?
}

pub(super) fn broadcasts(emu: &Emu, site: Pinned, args: Args) -> Result<Value, String> {
    let page = Page::of_args(&args)?;
    emu.with_site(site, |s, _, now| {
        inspector::broadcasts(s, now, page.offset, page.limit.unwrap_or(usize::MAX))
    })
}

pub(super) fn summary(emu: &Emu, site: Pinned, args: Args) -> Result<Value, String> {
    emu.with_site(site, |s, _, now| inspector::summary(s, now, &args))?
}

pub(super) fn notifications(emu: &Emu, site: Pinned, _args: Args) -> Result<Value, String> {
    emu.with_site(site, |s, _, _| json!(s.notifications))
}

pub(super) fn events(emu: &Emu, site: Pinned, args: Args) -> Result<Value, String> {
    let meta = flag(&args, "meta")?;
    let retention = emu.retention();
    emu.with_site(site, |s, _, _| {
        if meta {
            json!({"entries": s.events, "pruned": s.events_pruned, "retention": retention})
        } else {
            json!(s.events)
        }
    })
}

pub(super) fn products(emu: &Emu, site: Pinned, _args: Args) -> Result<Value, String> {
    emu.with_site(site, |s, _, _| {
        json!(s.products.values().collect::<Vec<_>>())
    })
}

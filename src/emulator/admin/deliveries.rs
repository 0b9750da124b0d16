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

/// The sources whose deliveries a read of `source`, `source_id` and `notification` may
/// select, found from the index by source: one source, or a notification's (a broadcast's
/// own, and the campaigns with a step of that id, their ids numbered apart from
/// broadcasts'). None when the filters name neither: any delivery may be selected.
fn sources_of(
    s: &state::Site,
    source: Option<state::Source>,
    source_id: Option<i64>,
    notification: Option<i64>,
) -> Option<Vec<(state::Source, i64)>> {
    use state::Source;
    if let (Some(src), Some(id)) = (source, source_id) {
        return Some(vec![(src, id)]);
    }
    let n = notification?;
    let triggers = s.triggers.iter().filter_map(|t| {
        let steps = t.notifications.iter().flatten();
        steps
            .clone()
            .any(|step| step.id == n)
            .then_some((Source::Trigger, t.trigger_id))
    });
    let drips = s.drips.iter().filter_map(|d| {
        let steps = d.drip.notifications.iter().flatten();
        steps
            .clone()
            .any(|step| step.id == n)
            .then_some((Source::Drip, d.drip.drip_id))
    });
    Some(
        std::iter::once((Source::Broadcast, n))
            .chain(triggers)
            .chain(drips)
            .filter(|(src, id)| {
                source.is_none_or(|s| s == *src) && source_id.is_none_or(|want| want == *id)
            })
            .collect(),
    )
}

/// The filters of a `deliveries` read, then its page.
struct Selection {
    hash: Option<String>,
    status: Option<state::Status>,
    notification: Option<i64>,
    source: Option<state::Source>,
    source_id: Option<i64>,
    window: Window,
    /// A delivery's id: the selection starts after it, in the order sent (a page's last
    /// row names the next page, which costs its own rows, not those before it).
    after: Option<i64>,
    page: Page,
}

impl Selection {
    fn of(args: &Args) -> Result<Selection, String> {
        let status = str_arg(args, "status")?.unwrap_or_else(|| "delivered".into());
        let status = match status.as_str() {
            "all" => None,
            s => Some(
                state::Status::of(s)
                    .ok_or("status must be delivered, pending, expired, capped or all")?,
            ),
        };
        Ok(Selection {
            hash: str_arg(args, "subscriber_hash")?,
            status,
            notification: int_arg(args, "notification_id")?,
            source: source_of(args)?,
            source_id: int_arg(args, "source_id")?,
            window: Window::of(args)?,
            after: int_arg(args, "after")?,
            page: Page::of_args(args)?,
        })
    }

    /// Where in the site's deliveries the page's are, in the order sent (then by id), and
    /// how many are selected in all when `total` is asked for (or costs nothing more).
    fn page(
        &self,
        s: &mut state::Site,
        total: bool,
    ) -> Result<(Vec<usize>, Option<usize>), String> {
        // A misspelt hash must not read as "received nothing".
        let whose = match self.hash.as_ref() {
            Some(h) => Some(
                s.subscriber_position(h)
                    .ok_or_else(|| format!("subscriber {h} does not exist"))?,
            ),
            None => None,
        };
        // One source's or one notification's deliveries are read from the index by source,
        // not found among all.
        let sources = sources_of(s, self.source, self.source_id, self.notification);
        let in_order = !s.engine.out_of_order;
        if !in_order && sources.is_none() {
            s.engine.sent_order();
        }
        let engine = &s.engine;
        let all = &engine.deliveries;
        let key = |at: usize| all[at].order_key();
        // `after`: its place (deliveries are numbered as they are made) and its key.
        let after = match self.after {
            Some(id) => {
                let at = all
                    .binary_search_by_key(&id, |d| d.delivery_id)
                    .map_err(|_| format!("after: delivery {id} does not exist"))?;
                Some((at, key(at)))
            }
            None => None,
        };
        // The candidates in the order sent, from the first after `after`: while the
        // deliveries stand in that order, by position; else by the engine's sent order (or,
        // for one source, its deliveries sorted).
        let candidates: Box<dyn Iterator<Item = usize> + '_> = match (sources, in_order) {
            (Some(sources), true) => {
                let list = engine.of_sources(&sources);
                let start = after.map_or(0, |(at, _)| list.partition_point(|&p| p <= at));
                Box::new(list.into_iter().skip(start))
            }
            (Some(sources), false) => {
                let mut list = engine.of_sources(&sources);
                list.sort_by_key(|&p| key(p));
                let start = after.map_or(0, |(_, k)| list.partition_point(|&p| key(p) <= k));
                Box::new(list.into_iter().skip(start))
            }
            (None, true) => Box::new(after.map_or(0, |(at, _)| at + 1)..all.len()),
            (None, false) => {
                let order = engine.sent_order.as_deref().unwrap_or_default();
                let start =
                    after.map_or(0, |(_, k)| order.partition_point(|&p| key(p as usize) <= k));
                Box::new(order[start..].iter().map(|&p| p as usize))
            }
        };
        let timed = !self.window.is_open();
        let selected = candidates.filter(|&at| {
            let d = &all[at];
            whose.is_none_or(|w| d.subscriber_at() == w)
                && self.status.is_none_or(|st| d.status() == st)
                && self
                    .notification
                    .is_none_or(|n| d.dispatch.notification_id == n)
                && self.source.is_none_or(|src| d.dispatch.source == src)
                && self.source_id.is_none_or(|id| d.dispatch.source_id == id)
                && (!timed
                    || self
                        .window
                        .holds(d.sent_at().unwrap_or(d.dispatch.queued_at)))
        });
        if !total {
            // The page is read up to its end, and no further.
            let limit = self.page.limit.unwrap_or(usize::MAX);
            return Ok((selected.skip(self.page.offset).take(limit).collect(), None));
        }
        let out: Vec<usize> = selected.collect();
        let count = out.len();
        Ok((self.page.slice(&out).to_vec(), Some(count)))
    }
}

/// A delivery as a page of `deliveries` gives it, copied out of the site so that what is
/// made of it (a Python dict) is made after the emulator's lock is let go.
pub struct DeliveryRow {
    pub delivery_id: i64,
    pub subscriber_hash: state::SubscriberHash,
    pub dispatch: std::sync::Arc<state::Dispatch>,
    pub status: state::Status,
    pub sent_at: Option<chrono::DateTime<chrono::Utc>>,
    pub viewed_at: Option<chrono::DateTime<chrono::Utc>>,
    pub clicked_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// The page a `deliveries` read selects, as rows of their own.
pub(super) fn delivery_rows(
    emu: &Emu,
    site: Pinned,
    args: &Args,
) -> Result<Vec<DeliveryRow>, String> {
    let sel = Selection::of(args)?;
    emu.with_site(site, |s, _, _| {
        let (page, _) = sel.page(s, false)?;
        Ok(page
            .iter()
            .map(|&at| {
                let d = &s.engine.deliveries[at];
                DeliveryRow {
                    delivery_id: d.delivery_id,
                    subscriber_hash: s.subscribers[d.subscriber_at()].subscriber_hash.clone(),
                    dispatch: d.dispatch.clone(),
                    status: d.status(),
                    sent_at: d.sent_at(),
                    viewed_at: d.viewed_at(),
                    clicked_at: d.clicked_at(),
                }
            })
            .collect())
    })?
}

pub(super) fn deliveries(emu: &Emu, site: Pinned, args: Args) -> Result<Value, String> {
    let sel = Selection::of(&args)?;
    let meta = flag(&args, "meta")?;
    emu.with_site(site, |s, _, _| {
        let (page, total) = sel.page(s, meta)?;
        let all = &s.engine.deliveries;
        let shown: Vec<_> = page
            .iter()
            .map(|&at| {
                let d = &all[at];
                d.shown(&s.subscribers[d.subscriber_at()].subscriber_hash)
            })
            .collect();
        Ok(match total {
            Some(total) if meta => json!({"entries": shown, "total": total}),
            _ => json!(shown),
        })
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
        // One broadcast's (or campaign's) share is drawn from its own deliveries.
        let candidates = sources_of(s, source, source_id, notification)
            .map(|sources| s.engine.of_sources(&sources));
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
            (None, Some(rate)) => {
                let mut draw = |d: &mut Delivery| {
                    let picked = d.status() == state::Status::Delivered
                        && notification.is_none_or(|n| d.dispatch.notification_id == n)
                        && source.is_none_or(|src| d.dispatch.source == src)
                        && source_id.is_none_or(|id| d.dispatch.source_id == id)
                        && rng.f64() < rate;
                    if picked {
                        record(d);
                    }
                };
                match candidates {
                    Some(at) => at.into_iter().for_each(|at| draw(&mut deliveries[at])),
                    None => deliveries.iter_mut().for_each(draw),
                }
            }
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

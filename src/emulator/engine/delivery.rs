//! Handing notifications to devices: [`tick`] sends what has come due, each at its due
//! time, holds a triggered campaign's sends to its daily and weekly caps, and expires what
//! waited for an offline device too long; [`set_online`] delivers what waited.

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};

use super::targeting::{audience_match, Selector};
use crate::emulator::state::{
    Counters, Counts, Delivery, Dispatch, Scheduled, Site, Source, Status, Subscriber, Tally,
};
use crate::model::NewNotification;

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
    let crate::emulator::state::EngineState {
        waiting,
        deliveries,
        ..
    } = engine;
    waiting.retain(|_, list| {
        list.retain(|&i| {
            let d = &mut deliveries[i];
            let expires_at = d.dispatch.expires_at;
            if now >= expires_at {
                d.set_status(Status::Expired);
                expired += 1;
                false
            } else {
                next = Some(next.map_or(expires_at, |n| n.min(expires_at)));
                true
            }
        });
        !list.is_empty()
    });
    engine.pending -= expired;
    engine.next_expiry = next;
}

/// The subscribers (by position) a broadcast of `request` going out at `at` is handed to:
/// those its filters select who had subscribed by then (a test may seed a subscriber dated
/// later than a broadcast that is only now being caught up on), each with whether its device
/// is online: handing over reads no subscriber again (a large audience's subscribers have
/// left the cache by then).
pub fn targets(site: &Site, request: &NewNotification, at: DateTime<Utc>) -> Vec<(u32, bool)> {
    let mut selector = Selector::of(request);
    let subscribers = &site.subscribers;
    let target = |i: u32, s: &Subscriber| (i, s.online);
    match selector.candidates(site) {
        Some(few) => few
            .iter()
            .filter_map(|i| {
                let s = &subscribers[i as usize];
                (s.subscribed_at <= at && selector.selects_candidate(s)).then(|| target(i, s))
            })
            .collect(),
        None => subscribers
            .iter()
            .zip(0u32..)
            .filter(|&(s, _)| s.subscribed_at <= at && selector.selects(s))
            .map(|(s, i)| target(i, s))
            .collect(),
    }
}

fn fire(site: &mut Site, ids: &mut Counters, item: Scheduled) {
    match (&item.subscriber_hash, item.source) {
        (None, Source::Broadcast) => {
            let Some(which) = site
                .notifications
                .iter()
                .position(|n| n.notification_id == item.source_id)
            else {
                return;
            };
            site.notifications[which].status = "sent".into();
            let read: &Site = site;
            let targets = targets(read, &read.notifications[which].request, item.due_at);
            site.engine.deliveries.reserve(targets.len());
            let dispatch = Dispatch::of(&item);
            let mut made = Counts::default();
            for (at, online) in targets {
                // Selected, so subscribed.
                hand_over_as(site, ids, &dispatch, at as usize, online, &mut made);
            }
            dispatch.tally.add(made);
            if made.deliveries > 0 {
                site.engine.note_broadcast_send(&dispatch);
            }
        }
        (Some(hash), Source::Drip) => {
            let hash = hash.clone();
            let Some(drip) = site.drip(item.source_id) else {
                return;
            };
            let audience = drip.drip.audience.filter.value.clone();
            let active = drip.drip.status == "active";
            let Some(at) = site.subscriber_position(&hash) else {
                return;
            };
            if active && audience_match(&audience, &site.subscribers[at]) {
                hand_over_one(site, ids, &item, at);
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
            let Some(t) = site.trigger(item.source_id) else {
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
                hand_over_one(site, ids, &item, at);
            } else if site.subscribers[at].unsubscribed_at.is_none() {
                // Kept in sight (status `capped`): a test can tell "held back by the cap"
                // from "never scheduled". Nothing reaches the device or the analytics.
                let dispatch = Arc::new(Dispatch {
                    expires_at: item.due_at,
                    ..Dispatch::new(&item)
                });
                let held = Delivery::of(ids, &dispatch, at, Status::Capped);
                dispatch.tally.count(&held);
                site.engine.push_delivery(held);
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
        if d.status() == Status::Expired {
            continue;
        }
        let queued_at = d.dispatch.queued_at;
        if queued_at.with_timezone(&site.timezone).date_naive() == day {
            today += 1;
        }
        if queued_at > week_start {
            week += 1;
        }
    }
    today < daily && week < weekly
}

/// Hands a notification to the subscriber at `at` in `Site::subscribers`: delivered at once
/// if its device is online, else kept until it comes online or the notification expires.
/// `item`, a send to one subscriber (a drip's step, a trigger's), handed over to the one at
/// `at` and counted.
fn hand_over_one(site: &mut Site, ids: &mut Counters, item: &Scheduled, at: usize) {
    let dispatch = Dispatch::of(item);
    let mut made = Counts::default();
    hand_over(site, ids, &dispatch, at, &mut made);
    dispatch.tally.add(made);
}

fn hand_over(
    site: &mut Site,
    ids: &mut Counters,
    dispatch: &Arc<Dispatch>,
    at: usize,
    made: &mut Counts,
) {
    let sub = &site.subscribers[at];
    if sub.unsubscribed_at.is_none() {
        let online = sub.online;
        hand_over_as(site, ids, dispatch, at, online, made);
    }
}

/// [`hand_over`] to a subscriber known to be subscribed, its device `online` or not.
fn hand_over_as(
    site: &mut Site,
    ids: &mut Counters,
    dispatch: &Arc<Dispatch>,
    at: usize,
    online: bool,
    made: &mut Counts,
) {
    let status = if online {
        Status::Delivered
    } else {
        Status::Pending
    };
    let delivery = Delivery::of(ids, dispatch, at, status);
    made.add(Counts::one(status, false, false));
    let engine = &mut site.engine;
    let index = engine.deliveries.len();
    if status == Status::Pending {
        let expires_at = dispatch.expires_at;
        engine.pending += 1;
        engine.next_expiry = Some(engine.next_expiry.map_or(expires_at, |n| n.min(expires_at)));
        engine.waiting.entry(at).or_default().push(index);
    }
    if dispatch.source == Source::Trigger {
        engine
            .sends
            .entry((dispatch.source_id, at))
            .or_default()
            .push(index);
    }
    engine.push_delivery(delivery);
}

impl Dispatch {
    /// `item` as its deliveries share it, expiring `expiry_seconds` after it is due.
    fn new(item: &Scheduled) -> Dispatch {
        Dispatch {
            content: item.content.clone(),
            source: item.source,
            source_id: item.source_id,
            notification_id: item.notification_id,
            queued_at: item.due_at,
            expires_at: item.due_at + Duration::seconds(item.expiry_seconds),
            tally: Tally::default(),
        }
    }

    fn of(item: &Scheduled) -> Arc<Dispatch> {
        Arc::new(Dispatch::new(item))
    }
}

impl Delivery {
    /// A delivery of `dispatch` to the subscriber at `at`, numbered now (its maker counts it
    /// in its send's tally): sent when it is queued when delivered.
    pub(super) fn of(
        ids: &mut Counters,
        dispatch: &Arc<Dispatch>,
        at: usize,
        status: Status,
    ) -> Delivery {
        let sent_at = (status == Status::Delivered).then_some(dispatch.queued_at);
        Delivery::new(
            Counters::next(&mut ids.delivery),
            dispatch.clone(),
            u32::try_from(at).expect("a site holds fewer than 4 billion subscribers"),
            status,
            [sent_at, None, None],
        )
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
            if now < d.dispatch.expires_at {
                d.set_status(Status::Delivered);
                d.set_sent_at(now);
                engine.sent_late(i);
            } else {
                d.set_status(Status::Expired);
            }
            engine.pending -= 1;
        }
    }
    true
}

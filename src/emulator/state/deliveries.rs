//! What the engine keeps of a site: the schedule of sends still to come, the deliveries
//! made, the indexes over them that keep the caps and expiry linear, and product alerts.
//! Data only: the engine (`emulator::engine`) decides what goes in.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::hash::SubscriberHash;
use super::time::{loose, ser_opt_time, ser_time, Stamp};
use crate::model::Action;

/// Where each source's deliveries are ([`EngineState::by_source`]): looked up once a delivery
/// made, so hashed by foldhash (a source's id is the site's own, not an attacker's).
pub type BySource = HashMap<(Source, i64), Vec<u32>, foldhash::fast::RandomState>;

/// What a notification shows.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct Content {
    pub title: String,
    pub message: String,
    pub url: String,
    pub image_url: Option<String>,
    pub big_image_url: Option<String>,
    #[serde(with = "loose")]
    pub actions: Vec<Action>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash)]
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

/// How a delivery stands, a byte (the admin API spells it as [`Status::as_str`]; the state
/// file as its place in this list).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Status {
    Delivered,
    /// The device is offline: it waits until the device comes online, or it expires.
    Pending,
    Expired,
    /// Held back by a triggered campaign's cap.
    Capped,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Delivered => "delivered",
            Status::Pending => "pending",
            Status::Expired => "expired",
            Status::Capped => "capped",
        }
    }

    /// The status spelt `text`.
    pub fn of(text: &str) -> Option<Status> {
        Some(match text {
            "delivered" => Status::Delivered,
            "pending" => Status::Pending,
            "expired" => Status::Expired,
            "capped" => Status::Capped,
            _ => return None,
        })
    }
}

impl PartialEq<&str> for Status {
    fn eq(&self, text: &&str) -> bool {
        self.as_str() == *text
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What every delivery of one send shares: a broadcast to a million makes one, each of its
/// deliveries points at it (a drip's or a trigger's send, to one subscriber, makes one for
/// its one delivery).
#[derive(Debug)]
pub struct Dispatch {
    pub content: Arc<Content>,
    pub source: Source,
    pub source_id: i64,
    pub notification_id: i64,
    pub queued_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    /// Its deliveries counted by status, views and clicks.
    pub tally: Tally,
}

/// How many of a send's deliveries stand in each status and were viewed and clicked, kept
/// as they are made ([`Tally::add`]) and change ([`Delivery::set_status`],
/// [`Delivery::record`]): a broadcast's counts are read, not walked from ten million
/// deliveries on every look. Atomic adds, since a `Dispatch` is shared behind an `Arc`: right
/// from any thread. A broadcast to millions counts its deliveries as it makes them and adds
/// them once, not a locked add per delivery.
#[derive(Debug, Default)]
pub struct Tally {
    counts: [AtomicU32; 6],
}

/// What a [`Tally`] counts.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    pub deliveries: u32,
    pub delivered: u32,
    pub pending: u32,
    pub expired: u32,
    pub views: u32,
    pub clicks: u32,
}

impl Counts {
    /// One delivery's: of `status` (a capped one counted only as a delivery), viewed and
    /// clicked or not.
    pub fn one(status: Status, viewed: bool, clicked: bool) -> Counts {
        let is = |s: Status| u32::from(status == s);
        Counts {
            deliveries: 1,
            delivered: is(Status::Delivered),
            pending: is(Status::Pending),
            expired: is(Status::Expired),
            views: u32::from(viewed),
            clicks: u32::from(clicked),
        }
    }

    fn as_array(self) -> [u32; 6] {
        [
            self.deliveries,
            self.delivered,
            self.pending,
            self.expired,
            self.views,
            self.clicks,
        ]
    }

    pub fn add(&mut self, other: Counts) {
        let [a, b, c, d, e, f] = other.as_array();
        self.deliveries += a;
        self.delivered += b;
        self.pending += c;
        self.expired += d;
        self.views += e;
        self.clicks += f;
    }
}

impl Tally {
    pub fn add(&self, counts: Counts) {
        for (count, n) in self.counts.iter().zip(counts.as_array()) {
            if n > 0 {
                count.fetch_add(n, Ordering::Relaxed);
            }
        }
    }

    /// Counts `d`, one delivery of this send.
    pub fn count(&self, d: &Delivery) {
        self.add(Counts::one(
            d.status,
            d.viewed_at.is_some(),
            d.clicked_at.is_some(),
        ));
    }

    /// A delivery moved from status `from` to `to`.
    fn moved(&self, from: Status, to: Status) {
        let [_, was @ ..] = Counts::one(from, false, false).as_array();
        let [_, now @ ..] = Counts::one(to, false, false).as_array();
        for (count, (was, now)) in self.counts[1..].iter().zip(was.into_iter().zip(now)) {
            if was > now {
                count.fetch_sub(1, Ordering::Relaxed);
            } else if now > was {
                count.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    pub fn get(&self) -> Counts {
        let [deliveries, delivered, pending, expired, views, clicks] =
            std::array::from_fn(|i| self.counts[i].load(Ordering::Relaxed));
        Counts {
            deliveries,
            delivered,
            pending,
            expired,
            views,
            clicks,
        }
    }
}

impl Dispatch {
    /// Whether `other` is the same send (its content the same one, not merely equal).
    pub fn is_same_send(&self, other: &Dispatch) -> bool {
        Arc::ptr_eq(&self.content, &other.content)
            && self.source == other.source
            && self.source_id == other.source_id
            && self.notification_id == other.notification_id
            && self.queued_at == other.queued_at
            && self.expires_at == other.expires_at
    }
}

/// A notification handed to one subscriber's device: a fixed record of 48 bytes, ten
/// million of them for a broadcast to ten million. What the send's deliveries share is in
/// their one [`Dispatch`]; the subscriber is its position in `Site::subscribers` (4 bytes,
/// where a copy of the hash took 56); the times its own are [`Stamp`]s (8 bytes each), the
/// status a byte. What the admin API shows of it is [`Delivery::shown`], the hash read from
/// the subscriber.
#[derive(Debug)]
pub struct Delivery {
    pub delivery_id: i64,
    pub dispatch: Arc<Dispatch>,
    sent_at: Stamp,
    viewed_at: Stamp,
    clicked_at: Stamp,
    /// Its place in `Site::subscribers` (a site holds fewer than 4 billion).
    pub subscriber: u32,
    /// Changed only through [`Delivery::set_status`], which keeps its send's tally.
    status: Status,
}

// What a broadcast to ten million costs a delivery, held to at compile time.
const _: () = assert!(std::mem::size_of::<Delivery>() == 48);

impl Delivery {
    /// A delivery, not yet counted in its send's tally: its maker counts it ([`Tally::add`],
    /// [`Tally::count`]).
    pub fn new(
        delivery_id: i64,
        dispatch: Arc<Dispatch>,
        subscriber: u32,
        status: Status,
        [sent_at, viewed_at, clicked_at]: [Option<DateTime<Utc>>; 3],
    ) -> Delivery {
        Delivery {
            delivery_id,
            dispatch,
            sent_at: Stamp::of(sent_at),
            viewed_at: Stamp::of(viewed_at),
            clicked_at: Stamp::of(clicked_at),
            subscriber,
            status,
        }
    }

    pub fn status(&self) -> Status {
        self.status
    }

    /// Moves it to `status`, its send's tally with it.
    pub fn set_status(&mut self, status: Status) {
        self.dispatch.tally.moved(self.status, status);
        self.status = status;
    }

    /// Where its subscriber is in `Site::subscribers`.
    pub fn subscriber_at(&self) -> usize {
        self.subscriber as usize
    }

    pub fn sent_at(&self) -> Option<DateTime<Utc>> {
        self.sent_at.get()
    }

    pub fn viewed_at(&self) -> Option<DateTime<Utc>> {
        self.viewed_at.get()
    }

    pub fn clicked_at(&self) -> Option<DateTime<Utc>> {
        self.clicked_at.get()
    }

    /// Where it stands in the order sent: when it was sent (or queued, while it has not
    /// been), then its id; in microseconds, compared without making a date.
    pub fn order_key(&self) -> (i64, i64) {
        let at = self
            .sent_at
            .micros()
            .unwrap_or_else(|| self.dispatch.queued_at.timestamp_micros());
        (at, self.delivery_id)
    }

    pub fn set_sent_at(&mut self, at: DateTime<Utc>) {
        self.sent_at = Stamp::of(Some(at));
    }

    /// Records a view (or a click) at `at`, unless one was recorded before.
    pub fn record(&mut self, click: bool, at: DateTime<Utc>) {
        let slot = if click {
            &mut self.clicked_at
        } else {
            &mut self.viewed_at
        };
        if !slot.is_some() {
            *slot = Stamp::of(Some(at));
            self.dispatch.tally.add(Counts {
                views: u32::from(!click),
                clicks: u32::from(click),
                ..Counts::default()
            });
        }
    }

    /// The delivery as the admin API shows it, for the subscriber of hash `hash`.
    pub fn shown<'a>(&'a self, hash: &'a SubscriberHash) -> Shown<'a> {
        let d = &*self.dispatch;
        Shown {
            delivery_id: self.delivery_id,
            subscriber_hash: hash,
            content: &d.content,
            source: d.source,
            source_id: d.source_id,
            notification_id: d.notification_id,
            status: self.status.as_str(),
            queued_at: d.queued_at,
            sent_at: self.sent_at(),
            expires_at: d.expires_at,
            viewed_at: self.viewed_at(),
            clicked_at: self.clicked_at(),
        }
    }
}

/// A delivery as the admin API shows it (`deliveries`), its fields in this order.
#[derive(Serialize)]
pub struct Shown<'a> {
    delivery_id: i64,
    subscriber_hash: &'a SubscriberHash,
    #[serde(flatten)]
    content: &'a Content,
    source: Source,
    source_id: i64,
    notification_id: i64,
    status: &'static str,
    #[serde(serialize_with = "ser_time")]
    queued_at: DateTime<Utc>,
    #[serde(serialize_with = "ser_opt_time")]
    sent_at: Option<DateTime<Utc>>,
    #[serde(serialize_with = "ser_time")]
    expires_at: DateTime<Utc>,
    #[serde(serialize_with = "ser_opt_time")]
    viewed_at: Option<DateTime<Utc>>,
    #[serde(serialize_with = "ser_opt_time")]
    clicked_at: Option<DateTime<Utc>>,
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

/// The engine's share of a site's state.
#[derive(Debug, Default)]
pub struct EngineState {
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
    /// Each broadcast's sends that reached anyone (by notification id), in the order they
    /// went out: the inspector reads a broadcast's counts from their tallies. Not in the
    /// state file: a load finds them among its deliveries' sends.
    pub broadcast_sends: HashMap<i64, Vec<Arc<Dispatch>>>,
    /// Where in `deliveries` each source's deliveries are (a broadcast, a drip, a triggered
    /// campaign, by its id), in the order they were made: a campaign's analytics read its
    /// own deliveries, not every one of the site's (a one-day campaign list over 90 days of
    /// a million subscribers' history). Positions as `u32`, 4 bytes a delivery: a site
    /// holds far fewer than 4 billion (48 bytes each). Kept by `push_delivery`, the one
    /// way a delivery is added; not in the state file (a load makes it again).
    pub by_source: BySource,
    /// Whether `deliveries` may stand out of the order sent (`Delivery::order_key`): a
    /// delivery made before one sent earlier, or one that waited for its device and was
    /// sent later. While they stand in it, a page of them is read in their order and stops
    /// at its end; once they may not, a read sorts what it selects.
    pub out_of_order: bool,
    /// Once they may stand out of that order: every delivery's position in the order sent,
    /// made when a read first needs it and kept until a delivery's place in it changes
    /// (one made in order is added at its end), so that a read by pages sorts once, not
    /// once a page.
    pub sent_order: Option<Vec<u32>>,
}

impl EngineState {
    /// Notes `dispatch`, which reached someone, among its broadcast's sends.
    pub fn note_broadcast_send(&mut self, dispatch: &Arc<Dispatch>) {
        if dispatch.source == Source::Broadcast {
            let sends = self.broadcast_sends.entry(dispatch.source_id).or_default();
            sends.push(dispatch.clone());
        }
    }

    /// Adds `delivery` after the others, noting it under its source; returns its position.
    pub fn push_delivery(&mut self, delivery: Delivery) -> usize {
        let at = self.deliveries.len();
        let key = delivery.order_key();
        if self
            .deliveries
            .last()
            .is_some_and(|last| last.order_key() > key)
        {
            self.out_of_order = true;
        }
        if let Some(order) = &mut self.sent_order {
            match order.last() {
                Some(&last) if self.deliveries[last as usize].order_key() > key => {
                    self.sent_order = None;
                }
                _ => order.push(u32::try_from(at).expect("fewer than 4 billion deliveries")),
            }
        }
        let d = &delivery.dispatch;
        self.by_source
            .entry((d.source, d.source_id))
            .or_default()
            .push(u32::try_from(at).expect("fewer than 4 billion deliveries in memory"));
        self.deliveries.push(delivery);
        at
    }

    /// Notes that the delivery at `at` was sent now, after it waited: it may now stand out of
    /// the order sent, and its place in that order has changed.
    pub fn sent_late(&mut self, at: usize) {
        let key = self.deliveries[at].order_key();
        let before = at.checked_sub(1).map(|i| self.deliveries[i].order_key());
        let after = self.deliveries.get(at + 1).map(Delivery::order_key);
        // Sent at the clock's now, which may stand before the deliveries made earlier (a
        // clock moved back) as well as after those made since.
        if before.is_some_and(|b| b > key) || after.is_some_and(|a| a < key) {
            self.out_of_order = true;
        }
        self.sent_order = None;
    }

    /// Every delivery's position in the order sent (`Delivery::order_key`).
    pub fn sent_order(&mut self) -> &[u32] {
        let deliveries = &self.deliveries;
        self.sent_order.get_or_insert_with(|| {
            let mut order: Vec<u32> = (0..deliveries.len())
                .map(|at| u32::try_from(at).expect("fewer than 4 billion deliveries"))
                .collect();
            order.sort_by_key(|&at| deliveries[at as usize].order_key());
            order
        })
    }

    /// The index of `deliveries` by source, made again from the deliveries themselves.
    pub fn index_sources(deliveries: &[Delivery]) -> BySource {
        let mut by_source = BySource::default();
        for (at, d) in deliveries.iter().enumerate() {
            let d = &d.dispatch;
            by_source
                .entry((d.source, d.source_id))
                .or_default()
                .push(u32::try_from(at).expect("fewer than 4 billion deliveries in memory"));
        }
        by_source
    }

    /// The deliveries of one source (a broadcast, a drip, a triggered campaign), in the
    /// order they were made.
    pub fn of_source(&self, source: Source, id: i64) -> impl Iterator<Item = &Delivery> {
        self.by_source
            .get(&(source, id))
            .into_iter()
            .flatten()
            .map(|&at| &self.deliveries[at as usize])
    }

    /// Where the deliveries of `sources` are, in the order they were made.
    pub fn of_sources(&self, sources: &[(Source, i64)]) -> Vec<usize> {
        let mut out: Vec<usize> = sources
            .iter()
            .filter_map(|key| self.by_source.get(key))
            .flatten()
            .map(|&at| at as usize)
            .collect();
        if sources.len() > 1 {
            out.sort_unstable();
        }
        out
    }

    /// Adds `item` to the schedule, after those due at the same time.
    pub fn schedule(&mut self, item: Scheduled) {
        let at = self.scheduled.partition_point(|s| s.due_at <= item.due_at);
        self.scheduled.insert(at, item);
    }
}

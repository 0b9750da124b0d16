//! One site (one API key) and what it holds: subscribers with their indexes, segments,
//! campaigns, broadcasts, products, events, and the engine's share ([`EngineState`]). The
//! rows and records it holds are `rows.rs`, its index by hash `by_hash.rs`.

use std::collections::{BTreeMap, HashMap, VecDeque};

use chrono::{FixedOffset, Offset, Utc};

use super::by_hash::{position, ByHash};
use super::deliveries::EngineState;
use super::hash::{Key, SubscriberHash};
use super::index::{Index, Indexed};
use super::rows::{DripRec, EventRec, NotificationRec, ProductRec, SegmentRec, Subscriber};
use crate::model::TriggeredCampaign;

/// The site a request's key belongs to, put in the request by the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SiteId(pub i64);

/// Everything one site (one API key) holds. Lists are kept in creation order. Not `Clone`:
/// a copy's deliveries would share their sends' tallies with the original's.
#[derive(Debug)]
pub struct Site {
    pub site_id: i64,
    pub api_key: String,
    /// In the order they subscribed; added only through [`Site::add_subscriber`], which
    /// keeps `by_hash` and `index` (they are never removed: one who leaves is marked
    /// unsubscribed).
    pub subscribers: Vec<Subscriber>,
    /// The targeting indexes over `subscribers` (see [`Index`]).
    index: Index,
    /// Each subscriber's position in `subscribers`, by its hash.
    by_hash: ByHash,
    /// The positions of each profile's subscribers (an event names a profile, which may
    /// have several devices).
    by_profile: HashMap<Box<str>, Vec<usize>>,
    pub segments: Vec<SegmentRec>,
    pub triggers: Vec<TriggeredCampaign>,
    pub drips: Vec<DripRec>,
    pub notifications: Vec<NotificationRec>,
    pub products: BTreeMap<(String, Option<String>), ProductRec>,
    /// The most recent events (`Emu::retention` of them): a history for tests to read,
    /// which the engine never consults (it acts on each event as it comes).
    pub events: VecDeque<EventRec>,
    /// Events dropped from `events` to keep it within the retention.
    pub events_pruned: u64,
    /// The site's time zone, for scheduled broadcasts, drip times and daily caps.
    pub timezone: FixedOffset,
    pub engine: EngineState,
}

impl Site {
    pub(crate) fn new(site_id: i64, api_key: String) -> Site {
        Site {
            site_id,
            api_key,
            subscribers: Vec::new(),
            index: Index::default(),
            by_hash: ByHash::default(),
            by_profile: HashMap::new(),
            segments: Vec::new(),
            triggers: Vec::new(),
            drips: Vec::new(),
            notifications: Vec::new(),
            products: BTreeMap::new(),
            events: VecDeque::new(),
            events_pruned: 0,
            timezone: FixedOffset::east_opt(0).unwrap_or_else(|| Utc.fix()),
            engine: EngineState::default(),
        }
    }

    /// Whether the site holds nothing: no subscriber, segment, campaign, broadcast,
    /// product or event, and nothing sent or waiting (a time zone set is no history).
    pub fn untouched(&self) -> bool {
        self.subscribers.is_empty()
            && self.segments.is_empty()
            && self.triggers.is_empty()
            && self.drips.is_empty()
            && self.notifications.is_empty()
            && self.products.is_empty()
            && self.events.is_empty()
            && self.engine.scheduled.is_empty()
            && self.engine.deliveries.is_empty()
            && self.engine.alerts.is_empty()
    }

    /// The subscriber with this hash.
    pub fn subscriber(&self, hash: &str) -> Option<&Subscriber> {
        self.subscriber_position(hash).map(|i| &self.subscribers[i])
    }

    pub fn subscriber_mut(&mut self, hash: &str) -> Option<&mut Subscriber> {
        self.subscriber_position(hash)
            .map(|i| &mut self.subscribers[i])
    }

    /// The subscribers of a profile, in the order they subscribed.
    pub fn with_profile<'a>(&'a self, profile_id: &str) -> impl Iterator<Item = &'a Subscriber> {
        let at = self.profile_positions(profile_id);
        at.iter().map(|&i| &self.subscribers[i])
    }

    /// Where the subscriber with this hash stands in `subscribers`.
    pub fn subscriber_position(&self, hash: &str) -> Option<usize> {
        self.by_hash.find(&self.subscribers, Key::of(hash))
    }

    /// Room for `n` more subscribers (a bulk seeding grows the list and index once).
    pub fn reserve_subscribers(&mut self, n: usize) {
        self.subscribers.reserve(n);
        self.by_hash.reserve(&self.subscribers, n);
    }

    /// Takes `subscribers` as the site's (it has none yet: one read back from a state file),
    /// indexing them where they lie; false when two share a hash.
    pub fn adopt_subscribers(&mut self, subscribers: Vec<Subscriber>) -> bool {
        debug_assert!(self.subscribers.is_empty());
        self.subscribers = subscribers;
        self.index_from(0, None)
    }

    /// Indexes the subscribers pushed onto `subscribers` from position `first` on, in bulk
    /// (a generated population: rows drawn in place, indexed once), as
    /// [`Site::adopt_subscribers`] does; a hash already taken (the same seed twice on one
    /// site) drawn again by `redraw`.
    pub fn index_pushed(&mut self, first: usize, mut redraw: impl FnMut() -> SubscriberHash) {
        self.index_from(first, Some(&mut redraw));
    }

    /// Indexes the rows from `first` on: the hash index filled in the order of the slots
    /// the hashes land in, a hash already taken replaced by `redraw` (or, with none, the
    /// whole refused: false); the targeting indexes column by column.
    fn index_from(
        &mut self,
        first: usize,
        redraw: Option<&mut dyn FnMut() -> SubscriberHash>,
    ) -> bool {
        self.by_hash
            .reserve(&self.subscribers, self.subscribers.len() - first);
        let hashes = self.by_hash.slot_ordered(&self.subscribers, first);
        match redraw {
            // Rows read back: equal hashes lie side by side, so two subscribers of one hash
            // are told by comparing neighbours, and the rest go in without a look-up each.
            None => {
                let rows = &self.subscribers;
                let twice = |w: &[(u64, usize)]| {
                    w[0].0 == w[1].0 && rows[w[0].1].subscriber_hash == rows[w[1].1].subscriber_hash
                };
                if hashes.windows(2).any(twice) {
                    return false;
                }
                for (h, at) in hashes {
                    self.by_hash.insert_unique(rows, h, at);
                }
            }
            Some(redraw) => {
                let mut taken = Vec::new();
                for (h, at) in hashes {
                    let rows = &self.subscribers;
                    if !self.by_hash.insert(rows, h, &rows[at].subscriber_hash, at) {
                        taken.push(at);
                    }
                }
                // Drawn again in the rows' order (not the slots', which follow this
                // process's hash seed), so that a seed makes the same hashes on every run.
                taken.sort_unstable();
                for at in taken {
                    loop {
                        let again = redraw();
                        let h = self.by_hash.hash(&again);
                        self.subscribers[at].subscriber_hash = again;
                        let rows = &self.subscribers;
                        if self.by_hash.insert(rows, h, &rows[at].subscriber_hash, at) {
                            break;
                        }
                    }
                }
            }
        }
        for (at, sub) in self.subscribers.iter().enumerate().skip(first) {
            if let Some(p) = &sub.profile_id {
                self.by_profile.entry(p.clone()).or_default().push(at);
            }
        }
        self.index
            .add_all(position(first), &self.subscribers[first..]);
        true
    }

    /// Adds a subscriber; false (and nothing added) when its hash is taken.
    pub fn add_subscriber(&mut self, sub: Subscriber) -> bool {
        let at = self.subscribers.len();
        let h = self.by_hash.hash(&sub.subscriber_hash);
        if !self
            .by_hash
            .insert(&self.subscribers, h, &sub.subscriber_hash, at)
        {
            return false;
        }
        if let Some(p) = &sub.profile_id {
            self.by_profile.entry(p.clone()).or_default().push(at);
        }
        self.index
            .add(position(at), sub.indexed(), sub.segments.iter().copied());
        self.subscribers.push(sub);
        true
    }

    /// The targeting indexes.
    pub fn index(&self) -> &Index {
        &self.index
    }

    /// The positions of a profile's subscribers, in the order they subscribed.
    pub fn profile_positions(&self, profile_id: &str) -> &[usize] {
        self.by_profile
            .get(profile_id)
            .map_or(&[][..], Vec::as_slice)
    }

    /// Puts the subscriber at `at` in segment `id`; false when it was there.
    pub fn join_segment(&mut self, at: usize, id: i64) -> bool {
        let joined = self.subscribers[at].segments.insert(id);
        if joined {
            self.index.join(id, position(at));
        }
        joined
    }

    /// Takes the subscriber at `at` out of segment `id`.
    pub fn leave_segment(&mut self, at: usize, id: i64) {
        if self.subscribers[at].segments.remove(&id) {
            self.index.leave(id, position(at));
        }
    }

    /// Deletes segment `id`, its members taken out of it (found through the index, not by
    /// reading every subscriber).
    pub fn delete_segment(&mut self, id: i64) {
        self.segments.retain(|seg| seg.segment_id != id);
        for at in &self.index.drop_segment(id) {
            self.subscribers[at as usize].segments.remove(&id);
        }
    }

    pub fn segment(&self, id: i64) -> Option<&SegmentRec> {
        self.segments.iter().find(|s| s.segment_id == id)
    }

    pub fn trigger(&self, id: i64) -> Option<&TriggeredCampaign> {
        self.triggers.iter().find(|t| t.trigger_id == id)
    }

    pub fn drip(&self, id: i64) -> Option<&DripRec> {
        self.drips.iter().find(|d| d.drip.drip_id == id)
    }
}

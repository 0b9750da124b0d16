//! One site (one API key) and what it holds: subscribers with their indexes, segments,
//! campaigns, broadcasts, products, events, and the engine's share ([`EngineState`]).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::hash::BuildHasher;

use chrono::{DateTime, FixedOffset, Offset, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::attributes::Attributes;
use super::deliveries::EngineState;
use super::hash::{Key, SubscriberHash};
use super::index::{Index, Indexed};
use super::interned::Sym;
use super::time::{loose, opt_stamp, stamp};
use crate::emulator::parallel::on_all_cores;
use crate::model::{Drip, NewNotification, Product, SendTo, TriggeredCampaign};

/// The site a request's key belongs to, put in the request by the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SiteId(pub i64);

/// The segments a subscriber is in: a sorted boxed slice (a subscriber is in a few; a tree's
/// node would take a hundred bytes for each of a million subscribers, a `Vec` its capacity
/// besides).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SegmentSet(Box<[i64]>);

impl SegmentSet {
    /// Adds `id`; false when it was there.
    pub fn insert(&mut self, id: i64) -> bool {
        match self.0.binary_search(&id) {
            Ok(_) => false,
            Err(at) => {
                let mut ids = std::mem::take(&mut self.0).into_vec();
                ids.insert(at, id);
                self.0 = ids.into_boxed_slice();
                true
            }
        }
    }

    pub fn remove(&mut self, id: &i64) -> bool {
        match self.0.binary_search(id) {
            Ok(at) => {
                let mut ids = std::mem::take(&mut self.0).into_vec();
                ids.remove(at);
                self.0 = ids.into_boxed_slice();
                true
            }
            Err(_) => false,
        }
    }

    pub fn contains(&self, id: &i64) -> bool {
        self.0.binary_search(id).is_ok()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, i64> {
        self.0.iter()
    }

    pub fn as_slice(&self) -> &[i64] {
        &self.0
    }
}

impl FromIterator<i64> for SegmentSet {
    fn from_iter<I: IntoIterator<Item = i64>>(ids: I) -> Self {
        let mut v: Vec<i64> = ids.into_iter().collect();
        v.sort_unstable();
        v.dedup();
        SegmentSet(v.into_boxed_slice())
    }
}

/// A subscriber (the spec does not show its record; these are the fields targeting uses).
/// The profile's low-cardinality fields are interned ([`Sym`]: 8 bytes, where an
/// `Option<String>` took 24 and an allocation of its own), the attributes a compact list
/// ([`Attributes`]); both read and write as the text they hold, so the admin API's answers
/// and the state file's layout are those of strings.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Subscriber {
    pub subscriber_hash: SubscriberHash,
    /// Boxed at its length (16 bytes, where a `String` takes 24).
    pub profile_id: Option<Box<str>>,
    pub country: Option<Sym>,
    pub state: Option<Sym>,
    pub city: Option<Sym>,
    pub device: Option<Sym>,
    pub device_type: Option<Sym>,
    pub browser: Option<Sym>,
    pub platform: Option<Sym>,
    #[serde(with = "loose")]
    pub attributes: Attributes,
    #[serde(with = "stamp")]
    pub subscribed_at: DateTime<Utc>,
    #[serde(with = "opt_stamp")]
    pub unsubscribed_at: Option<DateTime<Utc>>,
    /// Changed only through `Site` (`join_segment`, `leave_segment`, `delete_segment`),
    /// which keeps the segment index.
    pub segments: SegmentSet,
    /// Whether the subscriber's device fetches notifications now (else they wait, until
    /// they expire).
    pub online: bool,
}

impl Indexed for Subscriber {
    fn indexed(&self) -> [Option<Sym>; 5] {
        [
            self.country,
            self.state,
            self.city,
            self.device_type,
            self.browser,
        ]
    }

    fn segment_ids(&self) -> &[i64] {
        self.segments.as_slice()
    }
}

impl Subscriber {
    /// Its profile fields: country, state, city, device, device type, browser, platform.
    pub fn profile(&self) -> [Option<Sym>; 7] {
        [
            self.country,
            self.state,
            self.city,
            self.device,
            self.device_type,
            self.browser,
            self.platform,
        ]
    }

    /// The interned texts of its profile.
    pub fn texts(&self) -> impl Iterator<Item = Sym> {
        self.profile().into_iter().flatten()
    }
}

// A subscriber's row, held to at compile time: ten million of them are 1.28 GB.
const _: () = assert!(std::mem::size_of::<Subscriber>() == 128);

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SegmentRec {
    pub segment_id: i64,
    pub segment_name: String,
    /// `custom` (made by the site), or `geo`, `device`, `browser` (the service's own,
    /// listed only with `segment_type=all`).
    pub segment_type: String,
    #[serde(with = "stamp")]
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DripRec {
    #[serde(with = "loose")]
    pub drip: Drip,
    #[serde(with = "loose")]
    pub send_to: SendTo,
}

/// A broadcast as the service holds it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NotificationRec {
    pub notification_id: i64,
    /// `sent`, `scheduled` or `draft`.
    pub status: String,
    #[serde(with = "stamp")]
    pub created_at: DateTime<Utc>,
    #[serde(with = "loose")]
    pub request: NewNotification,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProductRec {
    #[serde(with = "loose")]
    pub product: Product,
    #[serde(with = "stamp")]
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EventRec {
    pub event_name: String,
    pub profile_id: Option<String>,
    pub device_token_hash: Option<String>,
    #[serde(with = "loose")]
    pub data: Map<String, Value>,
    #[serde(with = "stamp")]
    pub received_at: DateTime<Utc>,
}

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

/// Each subscriber's position in `Site::subscribers`, found by its hash: seeding, broadcasts,
/// drips and triggers look a subscriber up by hash once per item, which a scan made
/// quadratic. The hashes themselves stay in the rows (a map keyed by a copy of each would
/// hold another 60 bytes a subscriber), so each method is given the rows.
#[derive(Debug, Clone, Default)]
struct ByHash {
    /// Positions as `u32` (a site holds fewer than 4 billion subscribers): 4 bytes a slot
    /// saved on a table of millions.
    table: hashbrown::HashTable<u32>,
    /// Seeded per process (foldhash: the hashes a test gives are its own, and a few
    /// nanoseconds a look-up, where SipHash took tens, count at ten million).
    hasher: foldhash::fast::RandomState,
}

impl ByHash {
    fn hash(&self, hash: &SubscriberHash) -> u64 {
        self.hasher.hash_one(hash.key())
    }

    fn find(&self, rows: &[Subscriber], key: Key) -> Option<usize> {
        self.table
            .find(self.hasher.hash_one(key), |&i| {
                rows[i as usize].subscriber_hash.key() == key
            })
            .map(|&i| i as usize)
    }

    /// Room for `n` more.
    fn reserve(&mut self, rows: &[Subscriber], n: usize) {
        let hasher = &self.hasher;
        self.table.reserve(n, |&i| {
            hasher.hash_one(rows[i as usize].subscriber_hash.key())
        });
    }

    /// Adds position `at`, whose hash `hash` hashes to `h`; false (and nothing added) when
    /// another position holds that hash.
    fn insert(&mut self, rows: &[Subscriber], h: u64, hash: &SubscriberHash, at: usize) -> bool {
        let hasher = &self.hasher;
        let entry = self.table.entry(
            h,
            |&i| rows[i as usize].subscriber_hash == *hash,
            |&i| hasher.hash_one(rows[i as usize].subscriber_hash.key()),
        );
        match entry {
            hashbrown::hash_table::Entry::Occupied(_) => false,
            hashbrown::hash_table::Entry::Vacant(slot) => {
                slot.insert(position(at));
                true
            }
        }
    }

    /// Adds position `at`, whose hash hashes to `h`, known to be the only one of its hash.
    fn insert_unique(&mut self, rows: &[Subscriber], h: u64, at: usize) {
        let hasher = &self.hasher;
        self.table.insert_unique(h, position(at), |&i| {
            hasher.hash_one(rows[i as usize].subscriber_hash.key())
        });
    }

    /// The hashes of the rows from `first` on, each with its position, computed on every
    /// core, in the order of the slots they land in (then by hash and position): the table
    /// filled front to back instead of at random (a cache and TLB miss each, most of a
    /// million's indexing otherwise). The slot is the hash's low bits, the table's size a
    /// power of two: an assumption of speed only, every order gives the same index.
    fn slot_ordered(&self, rows: &[Subscriber], first: usize) -> Vec<(u64, usize)> {
        let positions: Vec<usize> = (first..rows.len()).collect();
        let parts: Vec<&[usize]> = positions.chunks(65_536).collect();
        let mut hashes: Vec<(u64, usize)> = on_all_cores(&parts, |part| {
            part.iter()
                .map(|&i| (self.hash(&rows[i].subscriber_hash), i))
                .collect::<Vec<_>>()
        })
        .into_iter()
        .flatten()
        .collect();
        let capacity = self.table.capacity();
        let slots = (capacity.saturating_mul(8) / 7).max(1).next_power_of_two() as u64;
        hashes.sort_unstable_by_key(|&(h, at)| (h & (slots - 1), h, at));
        hashes
    }
}

/// A position in `Site::subscribers` as the hash index holds it.
fn position(at: usize) -> u32 {
    u32::try_from(at).expect("a site holds fewer than 4 billion subscribers")
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

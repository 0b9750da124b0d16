//! The emulator's state, explicit and in one place so a test can reset it: sites (one per
//! API key) and everything each site holds, the request log, armed faults and the clock.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::hash::BuildHasher;
use std::sync::{Mutex, MutexGuard};

use axum::body::Bytes;
use axum::http::request::Parts;
use axum::http::{Method, StatusCode};
use chrono::{DateTime, Duration, FixedOffset, Offset, SecondsFormat, Utc};
use serde::Serialize;
use serde_json::{Map, Value};

use super::engine::{self, Engine};
use super::faults::{Chaos, Fault};
use super::http::{ApiError, Interface};
use crate::model::{Drip, NewNotification, Product, SendTo, TriggeredCampaign};

/// The site a request's key belongs to, put in the request by the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SiteId(pub i64);

/// The segments a subscriber is in: a sorted list (a subscriber is in a few; a tree's node
/// would take a hundred bytes for each of a million subscribers).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SegmentSet(Vec<i64>);

impl SegmentSet {
    /// Adds `id`; false when it was there.
    pub fn insert(&mut self, id: i64) -> bool {
        match self.0.binary_search(&id) {
            Ok(_) => false,
            Err(at) => {
                self.0.insert(at, id);
                true
            }
        }
    }

    pub fn remove(&mut self, id: &i64) -> bool {
        match self.0.binary_search(id) {
            Ok(at) => {
                self.0.remove(at);
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
}

impl FromIterator<i64> for SegmentSet {
    fn from_iter<I: IntoIterator<Item = i64>>(ids: I) -> Self {
        let mut v: Vec<i64> = ids.into_iter().collect();
        v.sort_unstable();
        v.dedup();
        v.shrink_to_fit();
        SegmentSet(v)
    }
}

/// A subscriber (the spec does not show its record; these are the fields targeting uses).
#[derive(Debug, Clone, Serialize)]
pub struct Subscriber {
    pub subscriber_hash: String,
    pub profile_id: Option<String>,
    pub country: Option<String>,
    pub state: Option<String>,
    pub city: Option<String>,
    pub device: Option<String>,
    pub device_type: Option<String>,
    pub browser: Option<String>,
    pub platform: Option<String>,
    pub attributes: Map<String, Value>,
    #[serde(serialize_with = "ser_time")]
    pub subscribed_at: DateTime<Utc>,
    #[serde(serialize_with = "ser_opt_time")]
    pub unsubscribed_at: Option<DateTime<Utc>>,
    pub segments: SegmentSet,
    /// Whether the subscriber's device fetches notifications now (else they wait, until
    /// they expire).
    pub online: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct SegmentRec {
    pub segment_id: i64,
    pub segment_name: String,
    /// `custom` (made by the site), or `geo`, `device`, `browser` (the service's own,
    /// listed only with `segment_type=all`).
    pub segment_type: String,
    #[serde(serialize_with = "ser_time")]
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone)]
pub struct DripRec {
    pub drip: Drip,
    pub send_to: SendTo,
}

/// A broadcast as the service holds it.
#[derive(Debug, Clone, Serialize)]
pub struct NotificationRec {
    pub notification_id: i64,
    /// `sent`, `scheduled` or `draft`.
    pub status: String,
    #[serde(serialize_with = "ser_time")]
    pub created_at: DateTime<Utc>,
    pub request: NewNotification,
}

#[derive(Debug, Clone, Serialize)]
pub struct ProductRec {
    pub product: Product,
    #[serde(serialize_with = "ser_time")]
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize)]
pub struct EventRec {
    pub event_name: String,
    pub profile_id: Option<String>,
    pub device_token_hash: Option<String>,
    pub data: Map<String, Value>,
    #[serde(serialize_with = "ser_time")]
    pub received_at: DateTime<Utc>,
}

/// Everything one site (one API key) holds. Lists are kept in creation order.
#[derive(Debug, Clone)]
pub struct Site {
    pub site_id: i64,
    pub api_key: String,
    /// In the order they subscribed; added only through [`Site::add_subscriber`], which
    /// keeps `by_hash` (they are never removed: one who leaves is marked unsubscribed).
    pub subscribers: Vec<Subscriber>,
    /// Each subscriber's position in `subscribers`: seeding, broadcasts, drips and triggers
    /// look a subscriber up by hash once per item, which a scan made quadratic.
    /// The hashes themselves stay in `subscribers`: a map keyed by a copy of each would
    /// hold another 60 bytes a subscriber.
    by_hash: hashbrown::HashTable<usize>,
    hasher: std::hash::RandomState,
    /// The positions of each profile's subscribers (an event names a profile, which may
    /// have several devices).
    by_profile: HashMap<String, Vec<usize>>,
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
    pub engine: Engine,
}

impl Site {
    pub(crate) fn new(site_id: i64, api_key: String) -> Site {
        Site {
            site_id,
            api_key,
            subscribers: Vec::new(),
            by_hash: hashbrown::HashTable::new(),
            hasher: std::hash::RandomState::new(),
            by_profile: HashMap::new(),
            segments: Vec::new(),
            triggers: Vec::new(),
            drips: Vec::new(),
            notifications: Vec::new(),
            products: BTreeMap::new(),
            events: VecDeque::new(),
            events_pruned: 0,
            timezone: FixedOffset::east_opt(0).unwrap_or_else(|| Utc.fix()),
            engine: Engine::default(),
        }
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
        let at = self
            .by_profile
            .get(profile_id)
            .map_or(&[][..], Vec::as_slice);
        at.iter().map(|&i| &self.subscribers[i])
    }

    /// Where the subscriber with this hash stands in `subscribers`.
    pub fn subscriber_position(&self, hash: &str) -> Option<usize> {
        let subscribers = &self.subscribers;
        self.by_hash
            .find(self.hasher.hash_one(hash), |&i| {
                subscribers[i].subscriber_hash == hash
            })
            .copied()
    }

    /// Room for `n` more subscribers (a bulk seeding grows the list and index once).
    pub fn reserve_subscribers(&mut self, n: usize) {
        self.subscribers.reserve(n);
        let Site {
            by_hash,
            hasher,
            subscribers,
            ..
        } = self;
        by_hash.reserve(n, |&i| hasher.hash_one(&subscribers[i].subscriber_hash));
    }

    /// Adds a subscriber; false (and nothing added) when its hash is taken.
    pub fn add_subscriber(&mut self, sub: Subscriber) -> bool {
        let Site {
            by_hash,
            hasher,
            subscribers,
            by_profile,
            ..
        } = self;
        let entry = by_hash.entry(
            hasher.hash_one(&sub.subscriber_hash),
            |&i| subscribers[i].subscriber_hash == sub.subscriber_hash,
            |&i| hasher.hash_one(&subscribers[i].subscriber_hash),
        );
        match entry {
            hashbrown::hash_table::Entry::Occupied(_) => false,
            hashbrown::hash_table::Entry::Vacant(slot) => {
                let at = subscribers.len();
                slot.insert(at);
                if let Some(p) = &sub.profile_id {
                    by_profile.entry(p.clone()).or_default().push(at);
                }
                subscribers.push(sub);
                true
            }
        }
    }

    pub fn segment(&self, id: i64) -> Option<&SegmentRec> {
        self.segments.iter().find(|s| s.segment_id == id)
    }
}

/// One received API request, as `emu.requests()` shows it (the key redacted).
#[derive(Debug, Clone, Serialize)]
pub struct LogEntry {
    pub interface: &'static str,
    pub method: String,
    pub path: String,
    pub query: String,
    pub headers: Map<String, Value>,
    pub body: String,
    pub status: Option<u16>,
    #[serde(serialize_with = "ser_time")]
    pub received_at: DateTime<Utc>,
    /// Wall time from admission to the answer, in milliseconds.
    pub duration_ms: Option<f64>,
    #[serde(skip)]
    pub started: std::time::Instant,
    /// The injected fault the request met (`inject_fault`, random faults), described.
    pub fault: Option<String>,
}

pub const REDACTED: &str = "[redacted]";

/// Ids come from counters shared by all sites, so no two sites ever hold the same id and
/// a key asking for another site's id finds nothing.
#[derive(Debug, Default, Clone)]
pub struct Counters {
    pub site: i64,
    pub segment: i64,
    pub trigger: i64,
    pub drip: i64,
    pub campaign_notification: i64,
    pub notification: i64,
    pub delivery: i64,
}

impl Counters {
    pub fn next(slot: &mut i64) -> i64 {
        *slot += 1;
        *slot
    }
}

#[derive(Debug)]
pub struct State {
    pub sites: BTreeMap<i64, Site>,
    keys: HashMap<String, i64>,
    pub ids: Counters,
    /// The most recent requests (`Emu::retention` of them).
    pub log: VecDeque<LogEntry>,
    /// Entries dropped from the front of `log`, by `clear_requests` or pruning: an entry's
    /// number is this plus its index, so a status written after its entry went never lands
    /// on another request's entry.
    pub log_dropped: usize,
    /// Entries pruned from `log` to keep it within the retention (not those cleared).
    pub log_pruned: u64,
    pub faults: Vec<Fault>,
    pub chaos: Option<Chaos>,
    /// The clock: wall time plus what `advance` added.
    pub clock_offset: Duration,
    /// A frozen clock's time: it moves only with `advance` and `travel_to`.
    pub frozen_at: Option<DateTime<Utc>>,
}

impl State {
    fn new(default_key: &str) -> State {
        let mut st = State {
            sites: BTreeMap::new(),
            keys: HashMap::new(),
            ids: Counters::default(),
            log: VecDeque::new(),
            log_dropped: 0,
            log_pruned: 0,
            faults: Vec::new(),
            chaos: None,
            clock_offset: Duration::zero(),
            frozen_at: None,
        };
        st.add_site(default_key);
        st
    }

    /// Adds a site for `api_key`, or returns the one it already has.
    pub fn add_site(&mut self, api_key: &str) -> i64 {
        if let Some(id) = self.keys.get(api_key) {
            return *id;
        }
        let id = Counters::next(&mut self.ids.site);
        self.sites.insert(id, Site::new(id, api_key.to_string()));
        self.keys.insert(api_key.to_string(), id);
        id
    }

    pub fn site_id_for_key(&self, key: &str) -> Option<i64> {
        self.keys.get(key).copied()
    }

    pub fn now(&self) -> DateTime<Utc> {
        self.frozen_at
            .unwrap_or_else(|| Utc::now() + self.clock_offset)
    }

    /// Moves the clock forward by `step`, frozen or not.
    pub fn advance_clock(&mut self, step: Duration) {
        match &mut self.frozen_at {
            Some(at) => *at += step,
            None => self.clock_offset += step,
        }
    }

    /// Stops the clock where it is, or lets it run on from there.
    pub fn freeze_clock(&mut self, frozen: bool) {
        match (frozen, self.frozen_at) {
            (true, None) => self.frozen_at = Some(self.now()),
            (false, Some(at)) => {
                self.clock_offset = at - Utc::now();
                self.frozen_at = None;
            }
            _ => {}
        }
    }
}

/// A request as the gate admitted it: the epoch it arrived in and its log entry's number.
pub struct Admission {
    epoch: u64,
    entry: Option<usize>,
}

impl Admission {
    /// The authenticated request's site, for its route.
    pub fn admitted(&self, site: SiteId, iface: Interface) -> Admitted {
        Admitted {
            site,
            epoch: self.epoch,
            iface,
        }
    }
}

/// A site as an admin operation looked it up ([`Emu::pin_site`]).
#[derive(Debug, Clone, Copy)]
pub struct Pinned {
    pub site: SiteId,
    epoch: u64,
}

/// The site a request authenticated as, in the epoch (between two resets) it was admitted
/// in. Routes act on it through [`Emu::in_site`].
#[derive(Debug, Clone, Copy)]
pub struct Admitted {
    pub site: SiteId,
    epoch: u64,
    iface: Interface,
}

/// The emulator: its state behind one lock (every critical section is short and never
/// awaits) and the key of its default site.
#[derive(Debug)]
pub struct Emu {
    state: Mutex<State>,
    /// Counts resets: a request that began before one (a test's, still in its delay) is
    /// never processed into the fresh state of the next.
    epoch: std::sync::atomic::AtomicU64,
    pub default_key: String,
    /// Whether API requests go to the request log (off for load tests: the log grows
    /// with every request).
    pub record_requests: std::sync::atomic::AtomicBool,
    /// How many requests the log keeps, and events each site keeps, the oldest pruned
    /// first (0: all). The service's own state (subscribers, segments, campaigns,
    /// deliveries, analytics) is never pruned: its behaviour depends on it.
    pub retention: std::sync::atomic::AtomicUsize,
    /// Tells the inspector's open pages that something changed.
    pub changes: std::sync::Arc<Changes>,
}

/// A version counted up on every change (an API request answered, an admin operation that
/// writes), and a wake-up for the inspector's live streams. With no page open, a change is
/// one atomic add.
#[derive(Debug, Default)]
pub struct Changes {
    version: std::sync::atomic::AtomicU64,
    watchers: std::sync::atomic::AtomicUsize,
    notify: tokio::sync::Notify,
}

impl Changes {
    pub fn bump(&self) {
        use std::sync::atomic::Ordering;
        self.version.fetch_add(1, Ordering::Relaxed);
        if self.watchers.load(Ordering::Relaxed) > 0 {
            self.notify.notify_waiters();
        }
    }

    pub fn version(&self) -> u64 {
        self.version.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// A wake-up at the next change (`enable` it before reading the version, so that a
    /// change in between is not missed); a [`Watcher`] must be held meanwhile.
    pub fn notified(&self) -> tokio::sync::futures::Notified<'_> {
        self.notify.notified()
    }

    /// Counts a live stream for as long as the guard lives.
    pub fn watch(self: &std::sync::Arc<Self>) -> Watcher {
        self.watchers
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Watcher(self.clone())
    }
}

pub struct Watcher(std::sync::Arc<Changes>);

impl Drop for Watcher {
    fn drop(&mut self) {
        self.0
            .watchers
            .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// The default retention: enough for a developer to look back over a session, bounded so
/// that an emulator left running for days stays at the size of its state.
pub const DEFAULT_RETENTION: usize = 10_000;

/// Drops the oldest entries of `list` past `keep` (0: keep all); how many it dropped.
pub fn prune<T>(list: &mut VecDeque<T>, keep: usize) -> usize {
    if keep == 0 || list.len() <= keep {
        return 0;
    }
    let over = list.len() - keep;
    list.drain(..over);
    over
}

/// What is wrong with a site key, if anything: a key no request could authenticate with.
/// The gate trims the key a request sends, so a padded one never matches; a header carries
/// only visible ASCII and spaces, so a key with other characters cannot be sent at all.
pub fn key_problem(key: &str) -> Option<&'static str> {
    if key.is_empty() {
        Some("api_key must not be empty")
    } else if key.trim() != key {
        Some("api_key must not start or end with spaces")
    } else if !key.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        Some("api_key must be printable ASCII (a header cannot carry other characters)")
    } else {
        None
    }
}

impl Emu {
    pub fn new(default_key: &str) -> Emu {
        Emu {
            state: Mutex::new(State::new(default_key)),
            epoch: std::sync::atomic::AtomicU64::new(0),
            default_key: default_key.to_string(),
            record_requests: std::sync::atomic::AtomicBool::new(true),
            changes: Default::default(),
            retention: std::sync::atomic::AtomicUsize::new(DEFAULT_RETENTION),
        }
    }

    /// How many requests and events are kept (0: all).
    pub fn retention(&self) -> usize {
        self.retention.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Keeps `keep` requests and events from now on (0: all), pruning what is over it now.
    pub fn set_retention(&self, keep: usize) {
        self.retention
            .store(keep, std::sync::atomic::Ordering::Relaxed);
        let mut st = self.lock();
        let st = &mut *st;
        let dropped = prune(&mut st.log, keep);
        st.log_dropped += dropped;
        st.log_pruned += dropped as u64;
        for site in st.sites.values_mut() {
            site.events_pruned += prune(&mut site.events, keep) as u64;
        }
    }

    pub fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves plain data behind; keep serving.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn reset(&self) {
        let mut st = self.lock();
        *st = State::new(&self.default_key);
        self.epoch.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    /// How many resets there have been.
    pub fn epoch(&self) -> u64 {
        self.epoch.load(std::sync::atomic::Ordering::SeqCst)
    }

    pub fn site_for_key(&self, key: &str) -> Option<SiteId> {
        self.lock().site_id_for_key(key).map(SiteId)
    }

    /// The site of `key` as an admin operation looks it up: pinned to the epoch it was found
    /// in, both read under one hold of the lock (a reset starts its ids again at 1, so after
    /// one the same id can be another key's site).
    /// The site with this id, pinned as [`Emu::pin_site`] pins one by key.
    pub fn pin_site_id(&self, id: i64) -> Option<Pinned> {
        let st = self.lock();
        st.sites.contains_key(&id).then(|| Pinned {
            site: SiteId(id),
            epoch: self.epoch(),
        })
    }

    pub fn pin_site(&self, key: &str) -> Option<Pinned> {
        let st = self.lock();
        st.site_id_for_key(key).map(|id| Pinned {
            site: SiteId(id),
            epoch: self.epoch(),
        })
    }

    /// Runs a request's work `f` on its site, under the same hold of the lock as the check
    /// that no reset came since the request was admitted: a request of an earlier test never
    /// lands in the next one's state (nor finds its site gone), it is answered 410.
    pub fn in_site<R>(
        &self,
        at: Admitted,
        f: impl FnOnce(&mut Site, &mut Counters, DateTime<Utc>) -> R,
    ) -> Result<R, ApiError> {
        self.in_epoch(at.site, at.epoch, f)
            .ok_or_else(|| ApiError::stale(at.iface))
    }

    /// Runs `f` on the site, with the state's id counters and clock at hand (the admin
    /// operations). A reset since the site was looked up is an error, as a key with no site
    /// is: the site is gone, or its id is another key's now.
    pub fn with_site<R>(
        &self,
        site: Pinned,
        f: impl FnOnce(&mut Site, &mut Counters, DateTime<Utc>) -> R,
    ) -> Result<R, String> {
        self.in_epoch(site.site, site.epoch, f).ok_or_else(|| {
            "no site has that api_key (the emulator was reset meanwhile): add it with add_site"
                .to_string()
        })
    }

    /// `f` on the site, if no reset came since `epoch` (`reset` bumps it under this lock:
    /// the check cannot be overtaken); `None` otherwise.
    fn in_epoch<R>(
        &self,
        site: SiteId,
        epoch: u64,
        f: impl FnOnce(&mut Site, &mut Counters, DateTime<Utc>) -> R,
    ) -> Option<R> {
        let mut st = self.lock();
        if self.epoch() != epoch {
            return None;
        }
        let now = st.now();
        let State { sites, ids, .. } = &mut *st;
        let site = sites.get_mut(&site.0)?;
        engine::tick(site, ids, now);
        Some(f(site, ids, now))
    }

    /// Admits a request: notes the epoch it arrived in and logs it (unless the log is off),
    /// both under one hold of the lock, so that a reset falls wholly before or after.
    pub fn admit(&self, iface: Interface, parts: &Parts, body: &Bytes) -> Admission {
        let mut st = self.lock();
        let epoch = self.epoch();
        if !self
            .record_requests
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            return Admission { epoch, entry: None };
        }
        let received_at = st.now();
        // The key sent and every site's key, in each spelling a request can carry them.
        let sent = super::http::api_key(&parts.headers).unwrap_or("");
        let secrets =
            key_spellings(std::iter::once(sent).chain(st.keys.keys().map(String::as_str)));
        let redact = |text: String| -> String {
            secrets
                .iter()
                .fold(text, |t, secret| t.replace(secret.as_str(), REDACTED))
        };
        let mut headers = Map::new();
        for (name, value) in &parts.headers {
            let shown = if name.as_str() == "api-key" || name.as_str() == "api_key" {
                REDACTED.to_string()
            } else {
                redact(String::from_utf8_lossy(value.as_bytes()).into_owned())
            };
            headers.insert(name.as_str().to_string(), Value::String(shown));
        }
        st.log.push_back(LogEntry {
            interface: iface.name(),
            method: parts.method.to_string(),
            path: redact(parts.uri.path().to_string()),
            query: redact(parts.uri.query().unwrap_or("").to_string()),
            headers,
            body: redact(String::from_utf8_lossy(body).into_owned()),
            status: None,
            received_at,
            duration_ms: None,
            started: std::time::Instant::now(),
            fault: None,
        });
        let entry = st.log_dropped + st.log.len() - 1;
        let dropped = prune(&mut st.log, self.retention());
        st.log_dropped += dropped;
        st.log_pruned += dropped as u64;
        Admission {
            epoch,
            entry: Some(entry),
        }
    }

    /// Whether no reset came since the request was admitted.
    pub fn current(&self, at: &Admission) -> bool {
        self.epoch() == at.epoch
    }

    /// The request's log entry, if it is still there (not cleared, no reset since).
    fn entry<'s>(&self, st: &'s mut State, at: &Admission) -> Option<&'s mut LogEntry> {
        let n = at.entry?.checked_sub(st.log_dropped)?;
        if !self.current(at) {
            return None;
        }
        st.log.get_mut(n)
    }

    /// Empties the request log.
    pub fn clear_log(&self) {
        let mut st = self.lock();
        st.log_dropped += st.log.len();
        st.log.clear();
    }

    pub fn log_status(&self, at: &Admission, status: StatusCode) {
        if at.entry.is_some() {
            let mut st = self.lock();
            if let Some(e) = self.entry(&mut st, at) {
                e.status = Some(status.as_u16());
                e.duration_ms = Some(e.started.elapsed().as_secs_f64() * 1e3);
            }
        }
        self.changes.bump();
    }

    pub fn log_fault(&self, at: &Admission, fault: &Fault) {
        let mut st = self.lock();
        if let Some(e) = self.entry(&mut st, at) {
            e.fault = Some(fault.describe());
        }
    }

    /// The first armed fault matching the request, used up by one. None for a request from
    /// before a reset: the next test's faults are not its own.
    pub fn take_fault(&self, at: &Admission, method: &Method, path: &str) -> Option<Fault> {
        let mut st = self.lock();
        if !self.current(at) {
            return None;
        }
        let Some(i) = st.faults.iter().position(|f| f.matches(method, path)) else {
            return st.chaos.as_mut().and_then(|c| c.draw(path));
        };
        let f = st.faults[i].clone();
        st.faults[i].times -= 1;
        if st.faults[i].times == 0 {
            st.faults.remove(i);
        }
        Some(f)
    }
}

/// Every spelling of each key (of at least 8 characters: a shorter one, such as a test's
/// `k1` or `sale`, is no secret and would blank out the words of titles and events that
/// contain it; key headers are redacted whatever their length) that a path, query, header
/// or body can carry: as is, JSON-escaped, and
/// percent-encoded (`%20` or `+` for a space, upper- or lowercase hex). Longest first, so a
/// spelling is replaced before any shorter one inside it.
fn key_spellings<'a>(keys: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for key in keys.filter(|k| k.chars().count() >= 8) {
        let json = serde_json::to_string(key).unwrap_or_default();
        let json = json.trim_matches('"').to_string();
        let mut upper = String::new();
        let mut lower = String::new();
        for b in key.bytes() {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                upper.push(b as char);
                lower.push(b as char);
            } else {
                upper.push_str(&format!("%{b:02X}"));
                lower.push_str(&format!("%{b:02x}"));
            }
        }
        let plus = form_urlencoded::byte_serialize(key.as_bytes()).collect::<String>();
        for s in [
            key.to_string(),
            json,
            upper.replace("%20", "+"),
            lower.replace("%20", "+"),
            upper,
            lower,
            plus,
        ] {
            if !out.contains(&s) {
                out.push(s);
            }
        }
    }
    out.sort_by_key(|s| std::cmp::Reverse(s.len()));
    out
}

/// Timestamps as the service gives them: UTC ISO 8601 with milliseconds and `Z`.
pub fn iso(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
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

//! The whole state under the emulator's lock: the sites by key, the id counters they
//! share, the request log, the armed faults and the clock.

use std::collections::{BTreeMap, HashMap, VecDeque};

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;
use serde_json::{Map, Value};

use super::site::Site;
use super::time::ser_time;
use crate::emulator::faults::{Chaos, Fault};

/// One received API request, as `emu.requests()` shows it (the key redacted).
#[derive(Debug, Clone, Serialize)]
pub struct LogEntry {
    /// What the answer's `X-Request-Id` said.
    pub request_id: String,
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
    /// The trace the request belongs to, from its W3C `traceparent` header: the client's
    /// trace, which the request log and the inspector show so that a test or a person can
    /// join the two. Read from the headers, so a state file does not hold it twice.
    pub trace_id: Option<String>,
}

/// The trace id of a W3C `traceparent` header (`00-<trace id>-<span id>-<flags>`), or else
/// of Sentry's `sentry-trace` (`<trace id>-<span id>[-<sampled>]`, what its propagator sends
/// instead), when the headers carry a valid one.
pub fn trace_id_of(headers: &Map<String, Value>) -> Option<String> {
    w3c_trace_id(headers).or_else(|| sentry_trace_id(headers))
}

fn is_hex(s: &str, n: usize) -> bool {
    s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn sentry_trace_id(headers: &Map<String, Value>) -> Option<String> {
    let value = headers.get("sentry-trace")?.as_str()?.trim();
    let mut parts = value.split('-');
    let (trace, span) = (parts.next()?, parts.next()?);
    let valid = is_hex(trace, 32) && is_hex(span, 16) && trace.bytes().any(|b| b != b'0');
    valid.then(|| trace.to_ascii_lowercase())
}

fn w3c_trace_id(headers: &Map<String, Value>) -> Option<String> {
    let value = headers.get("traceparent")?.as_str()?.trim();
    let mut parts = value.split('-');
    let (version, trace, span) = (parts.next()?, parts.next()?, parts.next()?);
    let flags = parts.next()?;
    let valid = is_hex(version, 2)
        && version != "ff"
        && is_hex(trace, 32)
        && is_hex(span, 16)
        && is_hex(flags, 2)
        && trace.bytes().any(|b| b != b'0')
        && span.bytes().any(|b| b != b'0');
    valid.then(|| trace.to_ascii_lowercase())
}

/// Ids come from counters shared by all sites, so no two sites ever hold the same id and
/// a key asking for another site's id finds nothing.
#[derive(Debug, Default, Clone, Serialize, serde::Deserialize)]
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
    /// Whether the clock runs on a wall clock the embedding process gives
    /// ([`Emu::follow`](crate::emulator::Emu::follow)) rather than the system's. A fresh
    /// state reads the system's.
    pub(crate) following: bool,
    /// That clock's reading, taken by [`Emu::lock`](crate::emulator::Emu::lock) just before
    /// this hold of the lock: the followed clock is never read with the state locked (its
    /// reading may run the embedding process's code, Python's `time.time()` and any signal
    /// handler, which may call the emulator again).
    pub(crate) wall_reading: Option<DateTime<Utc>>,
}

/// A wall clock the embedding process gives the emulator. It always answers: where it
/// cannot read its source it gives its last reading, never the system's time (which may be
/// years from the one followed).
#[derive(Clone)]
pub struct WallClock(pub std::sync::Arc<dyn Fn() -> DateTime<Utc> + Send + Sync>);

impl std::fmt::Debug for WallClock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WallClock(..)")
    }
}

impl State {
    pub(crate) fn new(default_key: &str) -> State {
        let mut st = State::empty();
        st.add_site(default_key);
        st
    }

    /// No site, no request, the clock at wall time: what a state file is read into.
    pub(crate) fn empty() -> State {
        State {
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
            following: false,
            wall_reading: None,
        }
    }

    /// Adds a site read back from a state file, with its own id; false (and nothing added)
    /// when its id or key is another site's.
    pub(crate) fn restore_site(&mut self, site: Site) -> bool {
        if self.sites.contains_key(&site.site_id) || self.keys.contains_key(&site.api_key) {
            return false;
        }
        self.keys.insert(site.api_key.clone(), site.site_id);
        self.sites.insert(site.site_id, site);
        true
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

    /// Every site's key.
    pub fn api_keys(&self) -> impl Iterator<Item = &str> {
        self.keys.keys().map(String::as_str)
    }

    pub fn site_id_for_key(&self, key: &str) -> Option<i64> {
        self.keys.get(key).copied()
    }

    pub fn now(&self) -> DateTime<Utc> {
        self.frozen_at
            .unwrap_or_else(|| self.wall_now() + self.clock_offset)
    }

    /// The wall time the clock runs on: the system's, or the reading of the one it follows.
    fn wall_now(&self) -> DateTime<Utc> {
        match (self.following, self.wall_reading) {
            (true, Some(read)) => read,
            _ => Utc::now(),
        }
    }

    /// Makes the clock read the followed wall clock, whose reading is `reading` (running,
    /// nothing added: it reads as that clock does), or, with `None`, the system's again,
    /// running on from where it stands.
    pub(crate) fn follow(&mut self, reading: Option<DateTime<Utc>>) {
        match reading {
            Some(read) => {
                self.following = true;
                self.wall_reading = Some(read);
                self.frozen_at = None;
                self.clock_offset = Duration::zero();
            }
            None => {
                let at = self.now();
                self.following = false;
                self.wall_reading = None;
                self.set_clock(at);
            }
        }
    }

    /// Sets the clock to `at`, frozen or not (it runs on from there if it was running).
    pub fn set_clock(&mut self, at: DateTime<Utc>) {
        match &mut self.frozen_at {
            Some(frozen) => *frozen = at,
            None => self.clock_offset = at - self.wall_now(),
        }
    }

    /// Whether nothing has happened yet: no site holds anything, and nothing waits to be
    /// sent. Until then the clock may be set to any time, the past included.
    pub fn untouched(&self) -> bool {
        self.sites.values().all(Site::untouched)
    }

    /// Moves the clock forward by `step`, frozen or not.
    pub fn advance_clock(&mut self, step: Duration) {
        match &mut self.frozen_at {
            Some(at) => *at += step,
            None => self.clock_offset += step,
        }
    }

    /// Stops the clock where it is, or lets it run on from there; the clock's reading at
    /// that instant (read once: a second read, a moment later, would not be where it stood).
    pub fn freeze_clock(&mut self, frozen: bool) -> DateTime<Utc> {
        match (frozen, self.frozen_at) {
            (true, None) => {
                let at = self.now();
                self.frozen_at = Some(at);
                at
            }
            (false, Some(at)) => {
                self.clock_offset = at - self.wall_now();
                self.frozen_at = None;
                at
            }
            _ => self.now(),
        }
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

//! The emulator as its servers and the in-process admin calls share it: the state behind one
//! lock, the epoch that resets count, and the two ways work reaches a site (a request's
//! [`Admitted`], an admin operation's [`Pinned`]), each running the engine's [`tick`] first.

use std::sync::{Mutex, MutexGuard, RwLock};

use chrono::{DateTime, Utc};

use super::api_error::{ApiError, Interface};
use super::changes::Changes;
use super::engine::tick;
use super::state::{prune, Counters, Site, SiteId, State, WallClock, DEFAULT_RETENTION};

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
    pub(crate) epoch: u64,
    pub(crate) iface: Interface,
}

/// The emulator: its state behind one lock (every critical section is short and never
/// awaits) and the key of its default site.
#[derive(Debug)]
pub struct Emu {
    state: Mutex<State>,
    /// The wall clock the state follows, when not the system's (`follow_python_clock`):
    /// kept apart from the state and read before its lock is taken, never under it.
    wall: RwLock<Option<WallClock>>,
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
    /// Where the state is kept across restarts (`--state`): saved on a clean stop, on
    /// demand, and every so often if asked (`persist`).
    pub state_file: Option<std::path::PathBuf>,
    /// `changes`' version at the last save to `state_file`.
    pub(crate) saved_version: std::sync::atomic::AtomicU64,
    /// Held by a save, so that saves run one at a time.
    pub(crate) saving: Mutex<()>,
    /// Set by the save at a stop: no periodic save comes after it.
    pub(crate) stopped: std::sync::atomic::AtomicBool,
}

impl Emu {
    pub fn new(default_key: &str) -> Emu {
        Emu::with_state(default_key, State::new(default_key), None)
    }

    /// An emulator holding `state` (one read from a state file), with a site for
    /// `default_key` if it has none, and `state_file` where it is to be kept.
    pub fn with_state(
        default_key: &str,
        mut state: State,
        state_file: Option<std::path::PathBuf>,
    ) -> Emu {
        state.add_site(default_key);
        Emu {
            state: Mutex::new(state),
            wall: RwLock::new(None),
            epoch: std::sync::atomic::AtomicU64::new(0),
            default_key: default_key.to_string(),
            record_requests: std::sync::atomic::AtomicBool::new(true),
            changes: Default::default(),
            retention: std::sync::atomic::AtomicUsize::new(DEFAULT_RETENTION),
            state_file,
            // Nothing saved yet: the first periodic save writes.
            saved_version: std::sync::atomic::AtomicU64::new(u64::MAX),
            saving: Mutex::new(()),
            stopped: std::sync::atomic::AtomicBool::new(false),
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

    /// The state, locked; a followed wall clock read first and its reading handed in, so
    /// that nothing the clock runs (Python code, a signal handler calling the emulator
    /// again) runs with the state locked.
    pub fn lock(&self) -> MutexGuard<'_, State> {
        loop {
            let wall = self.wall.read().unwrap_or_else(|e| e.into_inner()).clone();
            let reading = wall.map(|read| (read.0)());
            // A panic while holding the lock leaves plain data behind; keep serving.
            let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
            // `follow` switches the clock and the state's flag under this lock: a reading
            // taken across a switch is taken again.
            if st.following == reading.is_some() {
                st.wall_reading = reading;
                return st;
            }
        }
    }

    /// Whether the clock follows a wall clock the embedding process gave ([`Emu::follow`]).
    pub fn follows_a_wall_clock(&self) -> bool {
        self.wall
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }

    /// Makes the clock read `wall` (running, nothing added: it reads as `wall` does), or,
    /// with `None`, the system's again, running on from where it stands.
    pub fn follow(&self, wall: Option<WallClock>) {
        let reading = wall.as_ref().map(|read| (read.0)());
        let mut st = self.lock();
        *self.wall.write().unwrap_or_else(|e| e.into_inner()) = wall;
        st.follow(reading);
    }

    pub fn reset(&self) {
        let mut st = self.lock();
        *self.wall.write().unwrap_or_else(|e| e.into_inner()) = None;
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

    /// The site with this id, pinned as [`Emu::pin_site`] pins one by key.
    pub fn pin_site_id(&self, id: i64) -> Option<Pinned> {
        let st = self.lock();
        st.sites.contains_key(&id).then(|| Pinned {
            site: SiteId(id),
            epoch: self.epoch(),
        })
    }

    /// The site of `key` as an admin operation looks it up: pinned to the epoch it was found
    /// in, both read under one hold of the lock (a reset starts its ids again at 1, so after
    /// one the same id can be another key's site).
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
        tick(site, ids, now);
        Some(f(site, ids, now))
    }
}

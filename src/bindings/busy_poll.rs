//! A short spin before a blocking call parks its thread.
//!
//! A blocking call sends its request and then waits for the answer in `epoll_wait`. When
//! the answer takes tens of microseconds (a service on the same machine or network: a
//! sidecar, the emulator in a test suite), parking costs more than the wait itself: the
//! core goes idle, and waking it again (through the hypervisor on a VM) can take as long as
//! the round trip. So the call first keeps polling its socket, without blocking, for up to
//! `PUSHWIRE_SPIN_US` microseconds (150 by default, at most 10,000; 0 turns it off), and
//! parks only after. In `benches/` this halved the sequential call's time when the machine
//! was otherwise idle.
//!
//! Bounded three ways:
//! - It adapts: a thread whose last two spins both ran out (a remote service, answering in
//!   milliseconds) stops spinning, apart from one call in 64 that checks whether answers got
//!   fast again. Against a remote service it costs a few microseconds of CPU a call on
//!   average.
//! - At most one thread fewer than the machine has cores spins at a time, so spinning never
//!   takes the last core from the thread holding the GIL or from the service answering;
//!   other calls park at once meanwhile. On a single core it never spins.
//! - Only calls of one request spin: a batch (`track_many`, the bulk methods) always
//!   outlasts the budget, and would only teach the thread to stop spinning.
//! - It spins with the GIL released and checks Python's signals no later than usual after.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Spins that ran out in a row, after which a thread spins only to probe.
const MISSES_TO_STOP: u32 = 2;
/// While stopped, one call in this many spins anyway, to notice answers getting fast again.
const PROBE_EVERY: u32 = 64;

/// Reads the settings, once, when the module is imported: made by the first call instead,
/// a fork while one thread makes them would leave the child's calls waiting for ever on a
/// `OnceLock` no thread of the child will finish.
pub fn prepare() {
    settings();
}

/// How long a call may spin, and how many threads may spin at once (`PUSHWIRE_SPIN_US` as
/// the module's import finds it).
fn settings() -> Option<(Duration, usize)> {
    static SETTINGS: OnceLock<Option<(Duration, usize)>> = OnceLock::new();
    *SETTINGS.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let us = std::env::var("PUSHWIRE_SPIN_US")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map_or(150, |us| us.min(10_000));
        (cores > 1 && us > 0).then(|| (Duration::from_micros(us), cores - 1))
    })
}

/// Threads spinning now.
static SPINNING: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static MISSES: Cell<u32> = const { Cell::new(0) };
    static SKIPPED: Cell<u32> = const { Cell::new(0) };
}

/// A spin in progress: holds one of the spinning places until dropped.
pub struct Spin {
    pub deadline: Instant,
}

impl Drop for Spin {
    fn drop(&mut self) {
        SPINNING.fetch_sub(1, Ordering::Relaxed);
    }
}

/// This call's spin, or `None` if it should park at once.
pub fn start() -> Option<Spin> {
    let (budget, most) = settings()?;
    if MISSES.get() >= MISSES_TO_STOP {
        let skipped = SKIPPED.get() + 1;
        if skipped < PROBE_EVERY {
            SKIPPED.set(skipped);
            return None;
        }
        SKIPPED.set(0);
    }
    if SPINNING.fetch_add(1, Ordering::Relaxed) >= most {
        SPINNING.fetch_sub(1, Ordering::Relaxed);
        return None;
    }
    Some(Spin {
        deadline: Instant::now() + budget,
    })
}

/// In a forked child: the threads that were spinning in the parent do not exist here, and
/// would never give their places back. Async-signal-safe (one atomic store).
#[cfg(unix)]
pub fn forget_other_threads() {
    SPINNING.store(0, Ordering::Relaxed);
}

/// Records how the spin went: whether the call ended within it.
pub fn record(caught: bool) {
    MISSES.set(if caught {
        0
    } else {
        MISSES.get().saturating_add(1)
    });
}

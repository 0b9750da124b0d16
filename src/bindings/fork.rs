//! Which process this is, as far as the client's per-process state goes: a number that
//! changes in the child of every `fork()`. Threads, runtimes and pools inherited through a
//! fork belong to threads the child does not have, so state tagged with an older number is
//! rebuilt (never touched).
//!
//! Comparing process ids would do the same, but `getpid` is a system call (glibc no longer
//! caches it) and a blocking call checked it twice: a `pthread_atfork` child handler bumping
//! an atomic costs nothing per call.

use std::sync::atomic::{AtomicU64, Ordering};

static GENERATION: AtomicU64 = AtomicU64::new(0);

#[cfg(unix)]
extern "C" fn in_child() {
    // Async-signal-safe: atomics only.
    GENERATION.fetch_add(1, Ordering::Relaxed);
    super::busy_poll::forget_other_threads();
}

/// Installs the fork handler; called once when the module is imported, before any call.
pub fn install() {
    #[cfg(unix)]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            // SAFETY: the handler only touches an atomic; the others are absent.
            let rc = unsafe { libc::pthread_atfork(None, None, Some(in_child)) };
            if rc != 0 {
                // Without the handler, fall back to process ids (see `current`).
                GENERATION.store(u64::MAX, Ordering::Relaxed);
            }
        });
    }
}

/// This process's generation.
pub fn current() -> u64 {
    match GENERATION.load(Ordering::Relaxed) {
        u64::MAX => u64::from(std::process::id()) | (1 << 63),
        g => g,
    }
}

/// A value made once per process generation and kept for the life of the process (a
/// parent's value inherited through fork is never touched or dropped): the crate's
/// [`per_process`](crate::per_process) slot, told this process's generation.
pub struct PerProcess<T: 'static>(crate::per_process::PerProcess<T>);

impl<T: Send + Sync + 'static> PerProcess<T> {
    pub const fn new() -> Self {
        PerProcess(crate::per_process::PerProcess::new())
    }

    /// This generation's value, if made.
    pub fn get(&'static self) -> Option<&'static T> {
        self.0.get(current())
    }

    /// This generation's value, made by `make` (then handed to `started`, once) if need be.
    pub fn get_or_make(
        &'static self,
        make: impl FnOnce() -> T,
        started: impl FnOnce(&'static T),
    ) -> &'static T {
        self.0.get_or_make(current(), make, started)
    }
}

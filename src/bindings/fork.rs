//! Which process this is, as far as the client's per-process state goes: a number that
//! changes in the child of every `fork()`. Threads, runtimes and pools inherited through a
//! fork belong to threads the child does not have, so state tagged with an older number is
//! rebuilt (never touched).
//!
//! Comparing process ids would do the same, but `getpid` is a system call (glibc no longer
//! caches it) and a blocking call checked it twice: a `pthread_atfork` child handler bumping
//! an atomic costs nothing per call.

use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::sync::Mutex;

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

/// A value made once per process generation and kept for the life of the process (leaked:
/// a parent's value inherited through fork must never be touched or dropped). Read without
/// a lock: a lock a fork could catch held would hang the child's first call. The lock only
/// serialises making the value.
pub struct PerProcess<T: 'static> {
    current: AtomicPtr<(T, u64)>,
    making: Mutex<()>,
}

impl<T: Send + Sync + 'static> PerProcess<T> {
    pub const fn new() -> Self {
        PerProcess {
            current: AtomicPtr::new(std::ptr::null_mut()),
            making: Mutex::new(()),
        }
    }

    /// This generation's value, if made.
    pub fn get(&self) -> Option<&'static T> {
        // SAFETY: `current` only ever holds null or a leaked, never freed value.
        let (value, generation) = unsafe { self.current.load(Ordering::Acquire).as_ref() }?;
        (*generation == current()).then_some(value)
    }

    /// This generation's value, made by `make` (then handed to `started`, once) if need be.
    pub fn get_or_make(
        &self,
        make: impl FnOnce() -> T,
        started: impl FnOnce(&'static T),
    ) -> &'static T {
        if let Some(value) = self.get() {
            return value;
        }
        let _making = self.making.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(value) = self.get() {
            return value;
        }
        let made: &'static (T, u64) = Box::leak(Box::new((make(), current())));
        started(&made.0);
        self.current
            .store(made as *const (T, u64) as *mut (T, u64), Ordering::Release);
        &made.0
    }
}

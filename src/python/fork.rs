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
    // Async-signal-safe: one atomic add.
    GENERATION.fetch_add(1, Ordering::Relaxed);
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

//! The bound on a client's requests in flight, kept per process so that a fork starts free.

use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Arc;

/// A client's connection slots, per process: a forked child starts with every slot free,
/// since the parent's calls in flight, which held some, do not exist there (they would be
/// held for ever, and the child's calls wait for them). Read without a lock, as a lock a
/// fork could catch held would hang the child.
pub struct Slots {
    n: usize,
    /// The process id the semaphore is for, and the semaphore.
    current: AtomicPtr<(u32, Arc<tokio::sync::Semaphore>)>,
}

impl Slots {
    pub fn new(n: usize) -> Slots {
        let first = Box::new((std::process::id(), Arc::new(tokio::sync::Semaphore::new(n))));
        Slots {
            n,
            current: AtomicPtr::new(Box::into_raw(first)),
        }
    }

    /// This process's semaphore (looked up when a transport is made, not per request).
    pub fn get(&self) -> Arc<tokio::sync::Semaphore> {
        let pid = std::process::id();
        loop {
            let seen = self.current.load(Ordering::Acquire);
            // SAFETY: `current` always points at a live value: the first is freed only on
            // drop, and a replaced one is never freed.
            let (owner, slots) = unsafe { &*seen };
            if *owner == pid {
                return slots.clone();
            }
            let fresh = Box::into_raw(Box::new((
                pid,
                Arc::new(tokio::sync::Semaphore::new(self.n)),
            )));
            match self
                .current
                .compare_exchange(seen, fresh, Ordering::AcqRel, Ordering::Acquire)
            {
                // The parent's semaphore is leaked, not freed: another thread of this
                // process may be reading it right now. Once per client per fork.
                // SAFETY: `fresh` was just made here and is now `current`.
                Ok(_) => return unsafe { &*fresh }.1.clone(),
                // SAFETY: `fresh` never became `current`, so nothing else has seen it.
                Err(_) => drop(unsafe { Box::from_raw(fresh) }),
            }
        }
    }
}

impl Drop for Slots {
    fn drop(&mut self) {
        // SAFETY: the last owner: nothing reads `current` any more.
        drop(unsafe { Box::from_raw(*self.current.get_mut()) });
    }
}

//! The bound on a client's requests in flight, kept per process so that a fork starts free.

use std::sync::Arc;

use crate::per_process::PerProcess;

/// A client's connection slots, per process: a forked child starts with every slot free,
/// since the parent's calls in flight, which held some, do not exist there (they would be
/// held for ever, and the child's calls wait for them).
pub struct Slots {
    n: usize,
    semaphore: PerProcess<Arc<tokio::sync::Semaphore>>,
}

impl Slots {
    pub fn new(n: usize) -> Slots {
        Slots {
            n,
            semaphore: PerProcess::new(),
        }
    }

    /// This process's semaphore (looked up when a transport is made, not per request).
    pub fn get(&self) -> Arc<tokio::sync::Semaphore> {
        let pid = u64::from(std::process::id());
        let make = || Arc::new(tokio::sync::Semaphore::new(self.n));
        self.semaphore.get_or_make(pid, make, |_| {}).clone()
    }
}

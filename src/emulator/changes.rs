//! Change notices for the inspector's live pages.

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

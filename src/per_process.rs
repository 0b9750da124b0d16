//! A value kept per process: made again in the child of a `fork()`, where the parent's
//! (its threads, runtimes, the permits its calls held) belongs to threads that do not exist.
//!
//! One type for every such slot of the crate (a client's connection slots, the extension's
//! I/O threads and signal ticker), so that its `unsafe` is written and argued once. Reads
//! take no lock, and neither does making: a lock that a fork catches held by another
//! thread stays held in the child for ever, and would hang the child's first call. Which
//! process this is comes from the caller, as a number that differs in a forked child (a
//! process id, or the extension's fork generation).
//!
//! Written here rather than taken from a crate: `std::sync::OnceLock` and `once_cell` are
//! made once for the life of the value, and a fork handler's crate would still need this
//! slot beside it. `tools/loom` runs it under loom's model checker (`make loom`), which tries
//! every interleaving of threads racing to make the value.

#[cfg(loom)]
use loom::{
    sync::atomic::{AtomicPtr, AtomicU64, Ordering},
    thread::yield_now,
};
#[cfg(not(loom))]
use std::{
    sync::atomic::{AtomicPtr, AtomicU64, Ordering},
    thread::yield_now,
};

/// A value made once per process and kept for the life of the slot. A value of an earlier
/// process (inherited through a fork) is never touched again and never freed: a thread of
/// the child that forked may still hold a reference to it. The current one is freed when
/// the slot is dropped.
pub struct PerProcess<T> {
    current: AtomicPtr<(T, u64)>,
    /// The process whose thread is making the value (its number plus one), or 0. A claim
    /// inherited through a fork names the parent, so the child takes no notice of it.
    making: AtomicU64,
}

/// Gives up a claim to make the value, also when `make` or `started` panics, so that the
/// next caller makes it.
struct Claim<'a>(&'a AtomicU64);

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        self.0.store(0, Ordering::Release);
    }
}

impl<T> PerProcess<T> {
    #[cfg(not(loom))]
    pub const fn new() -> Self {
        PerProcess {
            current: AtomicPtr::new(std::ptr::null_mut()),
            making: AtomicU64::new(0),
        }
    }

    /// loom's atomics are made at run time.
    #[cfg(loom)]
    pub fn new() -> Self {
        PerProcess {
            current: AtomicPtr::new(std::ptr::null_mut()),
            making: AtomicU64::new(0),
        }
    }

    /// The value made for `process`, if it has been.
    pub fn get(&self, process: u64) -> Option<&T> {
        // SAFETY: `current` holds null or a pointer from `Box::into_raw` in `get_or_make`,
        // stored with Release and loaded here with Acquire, so the value is fully written.
        // It is freed only in `drop`, which `&self` rules out while this borrow lives; a
        // value that is replaced is leaked, never freed.
        let (value, made_for) = unsafe { self.current.load(Ordering::Acquire).as_ref() }?;
        (*made_for == process).then_some(value)
    }

    /// The value for `process`, made by `make` (then handed to `started`, once) if need be.
    /// Of threads racing here, one makes it and the others wait for it.
    pub fn get_or_make<'a>(
        &'a self,
        process: u64,
        make: impl FnOnce() -> T,
        started: impl FnOnce(&'a T),
    ) -> &'a T {
        let mine = process.wrapping_add(1).max(1);
        loop {
            if let Some(value) = self.get(process) {
                return value;
            }
            let claimed = self.making.load(Ordering::Acquire);
            if claimed == mine {
                // Another thread of this process is making it (starting threads takes
                // milliseconds, once per process).
                yield_now();
                continue;
            }
            // Free, or claimed by the parent's thread, which this child does not have.
            if self
                .making
                .compare_exchange(claimed, mine, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
            {
                continue;
            }
            let _claim = Claim(&self.making);
            // Made by the thread that held the claim before this one.
            if let Some(value) = self.get(process) {
                return value;
            }
            let made = Box::into_raw(Box::new((make(), process)));
            // SAFETY: `made` was just allocated here and is freed only with `self` (when it
            // is `current` then) or never (if `started` panics, it is leaked).
            started(unsafe { &(*made).0 });
            // The value it replaces is the parent's (this process's would have been
            // returned above), and is leaked: see the type's documentation.
            self.current.store(made, Ordering::Release);
            // SAFETY: `made` is now `current`, which lives as long as `self` does.
            return unsafe { &(*made).0 };
        }
    }
}

impl<T> Default for PerProcess<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Drop for PerProcess<T> {
    fn drop(&mut self) {
        // `&mut self`: no other thread reads the slot any more.
        let current = self.current.load(Ordering::Acquire);
        if !current.is_null() {
            // SAFETY: `&mut self`: no reference from `get` outlives this; `current` came from
            // `Box::into_raw` and is freed once, here.
            drop(unsafe { Box::from_raw(current) });
        }
    }
}

// SAFETY: a `PerProcess` hands out `&T` to every thread (`Sync` needs `T: Sync`), and the
// value it drops may have been made on another thread (`Send` needs `T: Send`).
unsafe impl<T: Send + Sync> Sync for PerProcess<T> {}
// SAFETY: as above: moving the slot moves ownership of its current value.
unsafe impl<T: Send> Send for PerProcess<T> {}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::PerProcess;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[test]
    fn threads_racing_make_the_value_once_and_all_get_it() {
        let slot = Arc::new(PerProcess::new());
        let made = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (slot, made) = (slot.clone(), made.clone());
                std::thread::spawn(move || {
                    let value = slot.get_or_make(
                        7,
                        || {
                            made.fetch_add(1, Ordering::SeqCst);
                            std::thread::sleep(std::time::Duration::from_millis(20));
                            String::from("made")
                        },
                        |_| {},
                    );
                    value.as_ptr() as usize
                })
            })
            .collect();
        let seen: Vec<usize> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        assert_eq!(made.load(Ordering::SeqCst), 1);
        assert!(seen.iter().all(|p| *p == seen[0]));
        assert_eq!(slot.get(7).map(String::as_str), Some("made"));
        assert_eq!(slot.get(8), None);
    }

    #[test]
    fn another_process_gets_its_own_value_and_the_old_one_stays_readable() {
        let slot = PerProcess::new();
        let first = slot.get_or_make(1, || vec![1u8; 64], |_| {});
        let second = slot.get_or_make(2, || vec![2u8; 64], |_| {});
        // The first process's value was leaked, not freed: a reference to it still reads.
        assert_eq!(first[0], 1);
        assert_eq!(second[0], 2);
        assert_eq!(slot.get(1), None);
    }

    #[test]
    fn a_make_that_panics_leaves_the_next_caller_free_to_make_it() {
        let slot = PerProcess::<u32>::new();
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            slot.get_or_make(1, || panic!("cannot start"), |_| {});
        }));
        assert!(panicked.is_err());
        assert_eq!(*slot.get_or_make(1, || 5, |_| {}), 5);
    }

    #[test]
    fn started_runs_once_with_the_value_made() {
        let slot = PerProcess::new();
        let calls = AtomicUsize::new(0);
        for _ in 0..3 {
            slot.get_or_make(
                1,
                || 41,
                |v| {
                    assert_eq!(*v, 41);
                    calls.fetch_add(1, Ordering::SeqCst);
                },
            );
        }
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    /// A fork while another thread of the parent is making the value: the child, which
    /// does not have that thread, makes its own instead of waiting for it for ever.
    #[cfg(unix)]
    #[test]
    fn a_child_forked_while_the_parent_makes_the_value_makes_its_own() {
        use std::sync::mpsc;
        let slot: &'static PerProcess<u64> = Box::leak(Box::new(PerProcess::new()));
        let (inside, is_inside) = mpsc::channel();
        let (release, released) = mpsc::channel::<()>();
        let maker = std::thread::spawn(move || {
            *slot.get_or_make(
                1,
                || {
                    inside.send(()).unwrap();
                    released.recv().unwrap();
                    10
                },
                |_| {},
            )
        });
        is_inside.recv().unwrap();
        // SAFETY: the child only reads and writes this test's own memory and leaves with
        // `_exit`, running no destructor or handler of the parent's.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            let value = *slot.get_or_make(2, || 20, |_| {});
            // SAFETY: ends the child at once, as above.
            unsafe { libc::_exit(if value == 20 { 0 } else { 1 }) };
        }
        // The child is given 10 s before it counts as hung.
        let mut status = 0;
        let mut waited = 0;
        for _ in 0..1000 {
            // SAFETY: `pid` is this process's child; `status` is a valid out-parameter.
            waited = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
            if waited != 0 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        if waited == 0 {
            // SAFETY: as above; the hung child is ended and reaped.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
        }
        release.send(()).unwrap();
        assert_eq!(maker.join().unwrap(), 10);
        assert!(
            waited == pid,
            "the child hung waiting for its parent's maker"
        );
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    }
}

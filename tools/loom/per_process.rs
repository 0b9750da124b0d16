//! `PerProcess` (src/per_process.rs) under loom: each test runs its body once for every
//! interleaving of its threads that the memory model allows, so a value made twice, a
//! reader that sees a half-made value or a claim never given back fails on the schedule
//! that shows it.
#![cfg(loom)]

#[path = "../../src/per_process.rs"]
mod per_process;

use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::Arc;
use loom::thread;
use per_process::PerProcess;

/// Two threads of `process` asking for the value at once: each returns the value, with
/// `started` run once, after `make`.
fn race(slot: &Arc<PerProcess<u64>>, process: u64, made: &Arc<AtomicUsize>) -> [u64; 2] {
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let (slot, made) = (slot.clone(), made.clone());
            thread::spawn(move || {
                let value = slot.get_or_make(
                    process,
                    || {
                        made.fetch_add(1, Ordering::Relaxed);
                        process * 10
                    },
                    |v| assert_eq!(*v, process * 10, "started sees the value made"),
                );
                *value
            })
        })
        .collect();
    let mut out = [0; 2];
    for (slot, t) in out.iter_mut().zip(threads) {
        *slot = t.join().expect("a racing thread panicked");
    }
    out
}

#[test]
fn threads_racing_make_the_value_once_and_each_reads_it_whole() {
    loom::model(|| {
        let slot = Arc::new(PerProcess::new());
        let made = Arc::new(AtomicUsize::new(0));
        assert_eq!(race(&slot, 1, &made), [10, 10]);
        assert_eq!(made.load(Ordering::Relaxed), 1);
        assert_eq!(slot.get(1), Some(&10));
    });
}

#[test]
fn a_new_process_makes_its_own_value_once_while_the_old_one_still_reads() {
    loom::model(|| {
        let slot = Arc::new(PerProcess::new());
        let made = Arc::new(AtomicUsize::new(0));
        // The parent's value, read on by a thread of the parent while the child makes its
        // own: the child's value replaces it, never frees it under the reader.
        let parent = *slot.get_or_make(1, || 10, |_| {});
        let reader = {
            let slot = slot.clone();
            thread::spawn(move || slot.get(1).copied())
        };
        assert_eq!(race(&slot, 2, &made), [20, 20]);
        assert_eq!(made.load(Ordering::Relaxed), 1);
        let seen = reader.join().expect("the reader panicked");
        assert!(seen == Some(parent) || seen.is_none(), "{seen:?}");
        assert_eq!(slot.get(2), Some(&20));
        assert_eq!(slot.get(1), None);
    });
}

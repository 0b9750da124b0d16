//! A blocking `events.track_many` spread over the calling thread and the client's I/O
//! threads. A batch against a nearby service is bound by the CPU each request costs (about
//! half of it in the kernel's TCP path), and one thread drives one core: with the I/O
//! threads idle during a blocking call, sharing the work with them uses the cores the
//! machine has. `concurrency` stays the bound on requests in flight, split between threads.
//!
//! Each thread sends through its own pool for the client (see `local`), so a connection is
//! only ever driven by one thread.

use std::sync::atomic::Ordering::SeqCst;
use std::sync::atomic::{AtomicU8, AtomicUsize};
use std::sync::Arc;

use serde_json::{Map, Value};
use tokio::task::JoinHandle;

use super::local;
use super::runtime::io_threads;
use crate::client::{bulk, Config, Error, Result, Transport};

/// Below this many events per request slot, spreading costs more (a wake-up of each thread,
/// and connections its pool may not have yet) than it brings.
const MIN_EVENTS_PER_SLOT: usize = 8;

/// Whether a batch of `events` at `concurrency` is worth spreading.
/// Starts the I/O threads if it is: call it holding the GIL, as `os.fork()` does, so no
/// child can be forked while this thread is starting them.
pub fn worth_it(events: usize, concurrency: usize) -> bool {
    concurrency >= 2 && events >= concurrency * MIN_EVENTS_PER_SLOT && io_threads().len() > 0
}

/// A worker's state: not started yet, running, or called off by the caller.
const WAITING: u8 = 0;
const RUNNING: u8 = 1;
const CALLED_OFF: u8 = 2;

/// What a worker hands back: outcomes with their events' indices.
type Share = Vec<(usize, Result<()>)>;

/// Aborts a worker's task when the call is dropped (Ctrl-C, or an error elsewhere).
struct AbortOnDrop<T>(JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// [`bulk::track_many`] with the work shared between this thread and the I/O threads; the
/// outcomes come back in input order.
pub async fn track_many(
    mine: &Transport,
    client: &Arc<Config>,
    items: Vec<Result<Map<String, Value>>>,
    concurrency: usize,
) -> Vec<Result<()>> {
    let total = items.len();
    // Within the client's connection slots, before it is split between the threads.
    let concurrency = mine.in_flight(concurrency);
    let mut outcomes: Vec<Option<Result<()>>> = Vec::with_capacity(total);
    // Events that failed validation keep their error; the others are sent.
    let mut positions = Vec::new();
    let mut bodies = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        match item {
            Ok(body) => {
                positions.push(i);
                bodies.push(body);
                outcomes.push(None);
            }
            Err(e) => outcomes.push(Some(Err(e))),
        }
    }
    let bodies = Arc::new(bodies);
    let next = Arc::new(AtomicUsize::new(0));
    let workers = (io_threads().len() + 1).min(concurrency);
    // The slots in flight, split as evenly as they go; this thread takes the remainder.
    let share = concurrency / workers;
    let own_share = concurrency - share * (workers - 1);
    let others: Vec<(Arc<AtomicU8>, AbortOnDrop<Share>)> = (1..workers)
        .map(|_| {
            let state = Arc::new(AtomicU8::new(WAITING));
            let (bodies, next, client, st) =
                (bodies.clone(), next.clone(), client.clone(), state.clone());
            let task = io_threads().spawn(async move {
                // Claimed by the caller first: it finished the batch without this worker.
                if st
                    .compare_exchange(WAITING, RUNNING, SeqCst, SeqCst)
                    .is_err()
                {
                    return Vec::new();
                }
                match local::transport(&client) {
                    Ok(t) => bulk::track_share(&t, &bodies, &next, share).await,
                    // No pool there: this worker takes nothing and the others take all.
                    Err(_) => Vec::new(),
                }
            });
            (state, AbortOnDrop(task))
        })
        .collect();
    let mut done = bulk::track_share(mine, &bodies, &next, own_share).await;
    // Every event is taken. A worker whose thread never got to it (busy, or blocked) is
    // called off rather than waited for; one that started holds outcomes to wait for.
    for (state, mut worker) in others {
        if state
            .compare_exchange(WAITING, CALLED_OFF, SeqCst, SeqCst)
            .is_ok()
        {
            continue;
        }
        if let Ok(theirs) = (&mut worker.0).await {
            done.extend(theirs);
        }
    }
    for (i, outcome) in done {
        outcomes[positions[i]] = Some(outcome);
    }
    outcomes
        .into_iter()
        .map(|o| {
            // Only a worker that died mid-batch leaves an event without an outcome.
            o.unwrap_or_else(|| {
                Err(Error::Connection {
                    message: "the batch's worker thread stopped before this event's outcome \
                              was known"
                        .into(),
                    outcome_unknown: true,
                })
            })
        })
        .collect()
}

//! A blocking `events.track_many` spread over the calling thread and the client's I/O
//! threads. A batch against a nearby service is bound by the CPU each request costs (about
//! half of it in the kernel's TCP path), and one thread drives one core: with the I/O
//! threads idle during a blocking call, sharing the work with them uses the cores the
//! machine has. `concurrency` stays the bound on requests in flight, split between threads.
//!
//! Each thread sends through its own pool for the client (see `thread_state`), so a connection is
//! only ever driven by one thread.

use std::sync::atomic::AtomicU8;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::Arc;

use serde_json::{Map, Value};
use tokio::task::JoinHandle;

use super::runtime::io_threads;
use super::thread_state::{self, limited};
use crate::client::transport::CallOptions;
use crate::client::{bulk, Config, Error, Limits, Result, Transport};

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

/// Events handed to the feed at once: a lock and a wake-up per this many, not per event.
const CHUNK: usize = 32;

/// A blocking [`bulk::track_many`] with the work shared between this thread and the I/O
/// threads. The I/O threads start sending as soon as it is made, while this thread still
/// converts the events (holding the GIL) and [`add`](Batch::add)s them; [`finish`]
/// (Batch::finish) then sends this thread's share and gathers every outcome, in input order.
pub struct Batch {
    feed: Arc<bulk::Feed>,
    others: Vec<(Arc<AtomicU8>, AbortOnDrop<Share>)>,
    own_share: usize,
    /// Each event's outcome: those refused before sending have theirs already.
    outcomes: Vec<Option<Result<()>>>,
    chunk: Vec<(usize, Map<String, Value>)>,
}

impl Batch {
    /// Starts the I/O threads' workers on an empty, open feed. Call it holding the GIL
    /// (see [`worth_it`]).
    pub fn start(
        mine: &Transport,
        client: &Arc<Config>,
        limits: Option<Limits>,
        options: Option<Arc<CallOptions>>,
        total: usize,
        concurrency: usize,
    ) -> Batch {
        // Within the client's connection slots, before it is split between the threads.
        let concurrency = mine.in_flight(concurrency);
        let feed = Arc::new(bulk::Feed::default());
        let workers = (io_threads().len() + 1).min(concurrency);
        // The slots in flight, split as evenly as they go; this thread takes the remainder.
        let share = concurrency / workers;
        let own_share = concurrency - share * (workers - 1);
        let others = (1..workers)
            .map(|_| {
                let state = Arc::new(AtomicU8::new(WAITING));
                let (feed, client, st) = (feed.clone(), client.clone(), state.clone());
                let options = options.clone();
                let task = io_threads().spawn(async move {
                    // Claimed by the caller first: it finished the batch without this worker.
                    if st
                        .compare_exchange(WAITING, RUNNING, SeqCst, SeqCst)
                        .is_err()
                    {
                        return Vec::new();
                    }
                    let t = match thread_state::transport(&client) {
                        Ok(t) => limited(t, limits),
                        // No pool there: this worker takes nothing and the others take all.
                        Err(_) => return Vec::new(),
                    };
                    // The call's headers (its trace context) on this thread's requests too.
                    let work = bulk::track_share(&t, feed, share);
                    match options {
                        Some(options) => options.scope(work).await,
                        None => work.await,
                    }
                });
                (state, AbortOnDrop(task))
            })
            .collect();
        Batch {
            feed,
            others,
            own_share,
            outcomes: Vec::with_capacity(total),
            chunk: Vec::with_capacity(CHUNK),
        }
    }

    /// The next event of the batch, in input order: sent if it converted, else its error is
    /// its outcome.
    pub fn add(&mut self, event: Result<Map<String, Value>>) {
        let i = self.outcomes.len();
        match event {
            Ok(body) => {
                self.outcomes.push(None);
                self.chunk.push((i, body));
                if self.chunk.len() == CHUNK {
                    self.feed.push(std::mem::take(&mut self.chunk));
                }
            }
            Err(e) => self.outcomes.push(Some(Err(e))),
        }
    }

    /// Sends this thread's share once every event is added, and returns every outcome in
    /// input order.
    pub async fn finish(mut self, mine: &Transport) -> Vec<Result<()>> {
        self.feed.push(std::mem::take(&mut self.chunk));
        self.feed.close();
        let mut done = bulk::track_share(mine, self.feed.clone(), self.own_share).await;
        // Every event is taken. A worker whose thread never got to it (busy, or blocked) is
        // called off rather than waited for; one that started holds outcomes to wait for.
        for (state, mut worker) in self.others {
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
            self.outcomes[i] = Some(outcome);
        }
        self.outcomes
            .into_iter()
            .map(|o| {
                // Only a worker that died mid-batch leaves an event without an outcome.
                o.unwrap_or_else(|| {
                    Err(Error::Connection {
                        message: "the batch's worker thread stopped before this event's \
                                  outcome was known"
                            .into(),
                        outcome_unknown: true,
                        source: None,
                    })
                })
            })
            .collect()
    }
}

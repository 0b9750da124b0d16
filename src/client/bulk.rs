//! Many calls in one: event batches and segment membership in bulk, run inside Rust with
//! bounded concurrency so a thousand requests cost one Python call. Every item gets its own
//! outcome, in input order; one failure never stops the rest.

use std::ops::Range;

use futures::stream::{self, StreamExt};
use serde_json::{Map, Value};

use super::checkpoint::{Checkpoint, Prior};
use super::error::{Error, Result};
use super::transport::Transport;
use super::{events, segments};
use crate::model::{MembershipChange, ProfileMembership, SegmentHashes};
use crate::validate::SEGMENT_HASHES_MAX;

/// The most profile ids sent in one `profile` request by the bulk forms (the spec sets no
/// limit; this keeps each request the size of a hash chunk).
pub const PROFILE_CHUNK: usize = 500;

/// Tracks every event, `concurrency` in flight. The events come [`events::check`]ed: those
/// that failed are not sent and keep their `ValidationError`; the others get the outcome of
/// their request.
pub async fn track_many(
    t: &Transport,
    events: Vec<std::result::Result<Map<String, Value>, Error>>,
    concurrency: usize,
) -> Vec<Result<()>> {
    stream::iter(events)
        .map(|e| async move {
            match e {
                Ok(body) => events::track_checked(t, &body).await,
                Err(err) => Err(err),
            }
        })
        .buffered(t.in_flight(concurrency))
        .collect()
        .await
}

/// A batch's events on their way from the thread that converts them to the threads that
/// send them, each with its index in the batch: sending starts with the first events while
/// the rest are still being converted.
#[derive(Default)]
pub struct Feed {
    queue: std::sync::Mutex<std::collections::VecDeque<(usize, Map<String, Value>)>>,
    closed: std::sync::atomic::AtomicBool,
    ready: tokio::sync::Notify,
}

impl Feed {
    fn queue(
        &self,
    ) -> std::sync::MutexGuard<'_, std::collections::VecDeque<(usize, Map<String, Value>)>> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds events to be sent.
    pub fn push(&self, events: impl IntoIterator<Item = (usize, Map<String, Value>)>) {
        self.queue().extend(events);
        self.ready.notify_waiters();
    }

    /// No more events will come: takers stop once the queue is empty.
    pub fn close(&self) {
        self.closed.store(true, std::sync::atomic::Ordering::SeqCst);
        self.ready.notify_waiters();
    }

    /// The next event, waiting for one while the feed is open; `None` once it is closed and
    /// empty.
    pub async fn next(&self) -> Option<(usize, Map<String, Value>)> {
        loop {
            // The common case, with events waiting: no listener to register and drop.
            if let Some(event) = self.queue().pop_front() {
                return Some(event);
            }
            // Listening before looking again: a push or close between the two wakes us.
            let ready = self.ready.notified();
            tokio::pin!(ready);
            ready.as_mut().enable();
            if let Some(event) = self.queue().pop_front() {
                return Some(event);
            }
            if self.closed.load(std::sync::atomic::Ordering::SeqCst) {
                return self.queue().pop_front();
            }
            ready.await;
        }
    }
}

/// One worker's share of a batch spread over threads: takes the next event from `feed`
/// until it is closed and empty, `concurrency` in flight, and returns each outcome with its
/// event's index. Workers taking from one feed balance themselves: a faster thread simply
/// takes more.
pub async fn track_share(
    t: &Transport,
    feed: std::sync::Arc<Feed>,
    concurrency: usize,
) -> Vec<(usize, Result<()>)> {
    // The feed owned by the stream (a borrowed one makes the future's lifetime
    // higher-ranked, which a spawned task cannot carry).
    let taken = stream::unfold(feed, |feed| async move {
        let event = feed.next().await;
        event.map(|event| (event, feed))
    });
    taken
        .map(|(i, body)| async move { (i, events::track_checked(t, &body).await) })
        .buffer_unordered(t.in_flight(concurrency))
        .collect()
        .await
}

/// The outcome of one chunk of a bulk membership call.
#[derive(Debug, Clone)]
pub struct Chunk {
    pub index: usize,
    /// The positions of its items in the input.
    pub items: Range<usize>,
    pub outcome: Result<String>,
    /// What an earlier run with the same checkpoint did with it: `Stored`, it was not sent
    /// again (its outcome is `Ok("")`); `InFlight` or `Failed`, it was sent again.
    pub prior: Option<Prior>,
}

/// What to do with each chunk.
#[derive(Debug, Clone, Copy)]
pub enum Membership<'a> {
    AddHashes { segment_id: &'a str },
    AddProfiles { segment_name: &'a str },
    RemoveProfiles { segment_name: &'a str },
}

impl Membership<'_> {
    /// Items per request: 500 hashes (the spec's limit), 500 profile ids.
    pub fn chunk_size(self) -> usize {
        match self {
            Membership::AddHashes { .. } => SEGMENT_HASHES_MAX,
            _ => PROFILE_CHUNK,
        }
    }

    /// The operation and its segment, as a checkpoint names them.
    pub fn named(self) -> (&'static str, String) {
        match self {
            Membership::AddHashes { segment_id } => ("add_subscribers", segment_id.to_string()),
            Membership::AddProfiles { segment_name } => ("add_profiles", segment_name.to_string()),
            Membership::RemoveProfiles { segment_name } => {
                ("remove_profiles", segment_name.to_string())
            }
        }
    }
}

/// Sends `items` in chunks ([`Membership::chunk_size`]), `concurrency` chunks in flight,
/// each retried as the transport retries idempotent writes. `on_done` is called after each
/// chunk with the number of items done so far. With a `checkpoint`, a chunk an earlier run
/// stored is not sent again, and each chunk is recorded as sent, then as stored.
pub async fn membership(
    t: &Transport,
    what: Membership<'_>,
    items: &[String],
    concurrency: usize,
    checkpoint: Option<&Checkpoint>,
    on_done: impl Fn(usize),
) -> Vec<Chunk> {
    let size = what.chunk_size();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let on_done = &on_done;
    let done = &done;
    // Owned chunks: a stream of borrowed slices makes the future's lifetime higher-ranked,
    // which a spawned task cannot carry.
    let chunks: Vec<(usize, Vec<String>)> = items
        .chunks(size)
        .map(<[String]>::to_vec)
        .enumerate()
        .collect();
    stream::iter(chunks)
        .map(|(index, chunk)| async move {
            let chunk = chunk.as_slice();
            let prior = checkpoint.and_then(|c| c.prior(index));
            let report = |outcome| {
                let total =
                    done.fetch_add(chunk.len(), std::sync::atomic::Ordering::Relaxed) + chunk.len();
                on_done(total);
                Chunk {
                    index,
                    items: index * size..index * size + chunk.len(),
                    outcome,
                    prior,
                }
            };
            if prior == Some(Prior::Stored) {
                return report(Ok(String::new()));
            }
            if let Some(Err(e)) = checkpoint.map(|c| c.sent(index)) {
                // Not sent: a chunk sent without its record could not be told apart later.
                return report(Err(e));
            }
            let profiles = |segment_name: &str, operation| ProfileMembership {
                segment_name: segment_name.to_string(),
                profile_id: chunk.to_vec(),
                operation,
            };
            let outcome = match what {
                Membership::AddHashes { segment_id } => {
                    let add = SegmentHashes {
                        segment_id: segment_id.to_string(),
                        subscriber_hash: chunk.to_vec(),
                    };
                    segments::add_subscribers(t, &add).await
                }
                Membership::AddProfiles { segment_name } => {
                    let change = profiles(segment_name, MembershipChange::Add);
                    segments::profiles(t, &change).await.map(|_| String::new())
                }
                Membership::RemoveProfiles { segment_name } => {
                    let change = profiles(segment_name, MembershipChange::Delete);
                    segments::profiles(t, &change).await.map(|_| String::new())
                }
            };
            if let Some(c) = checkpoint {
                let recorded = match &outcome {
                    Ok(_) => c.stored(index),
                    Err(_) => c.failed(index),
                };
                if let Err(e) = recorded {
                    // The outcome stands; left as in flight, a rerun sends the chunk again,
                    // which acts once.
                    log::warn!(target: "pushwire", "chunk {index}: {e}");
                }
            }
            let chunk = report(outcome);
            // A report may have held this thread (a blocking call's progress callback runs on
            // it): caught up before this chunk frees its place for the next.
            super::transport::catch_up_connections().await;
            chunk
        })
        .buffered(t.in_flight(concurrency))
        .collect()
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(i: usize) -> (usize, Map<String, Value>) {
        let mut body = Map::new();
        body.insert("event_name".into(), Value::String(format!("e{i}")));
        (i, body)
    }

    #[tokio::test]
    async fn a_feed_hands_over_every_event_once_then_ends_when_closed() {
        let feed = std::sync::Arc::new(Feed::default());
        // A taker waiting on an empty feed is woken by a later push, and by the close.
        let taker = {
            let feed = feed.clone();
            tokio::spawn(async move {
                let mut seen = Vec::new();
                while let Some((i, _)) = feed.next().await {
                    seen.push(i);
                }
                seen
            })
        };
        tokio::task::yield_now().await;
        feed.push((0..3).map(event));
        tokio::task::yield_now().await;
        feed.push((3..5).map(event));
        feed.close();
        assert_eq!(taker.await.unwrap(), vec![0, 1, 2, 3, 4]);
        // Closed and empty: nothing more, at once.
        assert!(feed.next().await.is_none());
    }
}

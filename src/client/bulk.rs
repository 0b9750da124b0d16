//! Many calls in one: event batches and segment membership in bulk, run inside Rust with
//! bounded concurrency so a thousand requests cost one Python call. Every item gets its own
//! outcome, in input order; one failure never stops the rest.

use futures::stream::{self, StreamExt};
use serde_json::{Map, Value};

use super::transport::Transport;
use super::{events, segments, Result};
use crate::validate::SEGMENT_HASHES_MAX;

/// The most profile ids sent in one `profile` request by the bulk forms (the spec sets no
/// limit; this keeps each request the size of a hash chunk).
pub const PROFILE_CHUNK: usize = 500;

/// Tracks every event, `concurrency` in flight. The events come [`events::check`]ed: those
/// that failed are not sent and keep their `ValidationError`; the others get the outcome of
/// their request.
pub async fn track_many(
    t: &Transport,
    events: Vec<std::result::Result<Map<String, Value>, super::Error>>,
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

/// One worker's share of a batch spread over threads: takes the next event not yet taken
/// from `next` until none is left, `concurrency` in flight, and returns each outcome with its
/// event's index. Workers pulling from one counter balance themselves: a faster thread
/// simply takes more.
pub async fn track_share(
    t: &Transport,
    events: &[Map<String, Value>],
    next: &std::sync::atomic::AtomicUsize,
    concurrency: usize,
) -> Vec<(usize, Result<()>)> {
    let pulls = std::iter::from_fn(|| {
        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        (i < events.len()).then_some(i)
    });
    stream::iter(pulls)
        .map(|i| async move { (i, events::track_checked(t, &events[i]).await) })
        .buffer_unordered(t.in_flight(concurrency))
        .collect()
        .await
}

/// The outcome of one chunk of a bulk membership call.
#[derive(Debug, Clone)]
pub struct Chunk {
    pub index: usize,
    /// Position of the chunk's first item in the input.
    pub start: usize,
    pub size: usize,
    pub outcome: Result<String>,
}

/// What to do with each chunk.
#[derive(Debug, Clone, Copy)]
pub enum Membership<'a> {
    AddHashes { segment_id: &'a str },
    AddProfiles { segment_name: &'a str },
    RemoveProfiles { segment_name: &'a str },
}

/// Sends `items` in chunks (500 hashes, the spec's limit; 500 profile ids), `concurrency`
/// chunks in flight, each retried as the transport retries idempotent writes. `on_done` is
/// called after each chunk with the number of items done so far.
pub async fn membership(
    t: &Transport,
    what: Membership<'_>,
    items: &[String],
    concurrency: usize,
    on_done: impl Fn(usize),
) -> Vec<Chunk> {
    let size = match what {
        Membership::AddHashes { .. } => SEGMENT_HASHES_MAX,
        _ => PROFILE_CHUNK,
    };
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
            let outcome = match what {
                Membership::AddHashes { segment_id } => {
                    segments::add_subscribers(t, segment_id, chunk).await
                }
                Membership::AddProfiles { segment_name } => {
                    segments::profiles(t, segment_name, chunk, "add")
                        .await
                        .map(|_| String::new())
                }
                Membership::RemoveProfiles { segment_name } => {
                    segments::profiles(t, segment_name, chunk, "delete")
                        .await
                        .map(|_| String::new())
                }
            };
            let total =
                done.fetch_add(chunk.len(), std::sync::atomic::Ordering::Relaxed) + chunk.len();
            on_done(total);
            Chunk {
                index,
                start: index * size,
                size: chunk.len(),
                outcome,
            }
        })
        .buffered(t.in_flight(concurrency))
        .collect()
        .await
}

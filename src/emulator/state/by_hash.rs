//! A site's index of its subscribers by hash: positions in the rows, the hashes left in
//! the rows themselves.

use std::hash::BuildHasher;

use super::hash::{Key, SubscriberHash};
use super::rows::Subscriber;
use crate::emulator::parallel::on_all_cores;

/// Each subscriber's position in `Site::subscribers`, found by its hash: seeding, broadcasts,
/// drips and triggers look a subscriber up by hash once per item, which a scan made
/// quadratic. The hashes themselves stay in the rows (a map keyed by a copy of each would
/// hold another 60 bytes a subscriber), so each method is given the rows.
#[derive(Debug, Clone, Default)]
pub(super) struct ByHash {
    /// Positions as `u32` (a site holds fewer than 4 billion subscribers): 4 bytes a slot
    /// saved on a table of millions.
    table: hashbrown::HashTable<u32>,
    /// Seeded per process (foldhash: the hashes a test gives are its own, and a few
    /// nanoseconds a look-up, where SipHash took tens, count at ten million).
    hasher: foldhash::fast::RandomState,
}

impl ByHash {
    #[inline]
    pub(super) fn hash(&self, hash: &SubscriberHash) -> u64 {
        self.hasher.hash_one(hash.key())
    }

    #[inline]
    pub(super) fn find(&self, rows: &[Subscriber], key: Key) -> Option<usize> {
        self.table
            .find(self.hasher.hash_one(key), |&i| {
                rows[i as usize].subscriber_hash.key() == key
            })
            .map(|&i| i as usize)
    }

    /// Room for `n` more.
    pub(super) fn reserve(&mut self, rows: &[Subscriber], n: usize) {
        let hasher = &self.hasher;
        self.table.reserve(n, |&i| {
            hasher.hash_one(rows[i as usize].subscriber_hash.key())
        });
    }

    /// Adds position `at`, whose hash `hash` hashes to `h`; false (and nothing added) when
    /// another position holds that hash.
    #[inline]
    pub(super) fn insert(
        &mut self,
        rows: &[Subscriber],
        h: u64,
        hash: &SubscriberHash,
        at: usize,
    ) -> bool {
        let hasher = &self.hasher;
        let entry = self.table.entry(
            h,
            |&i| rows[i as usize].subscriber_hash == *hash,
            |&i| hasher.hash_one(rows[i as usize].subscriber_hash.key()),
        );
        match entry {
            hashbrown::hash_table::Entry::Occupied(_) => false,
            hashbrown::hash_table::Entry::Vacant(slot) => {
                slot.insert(position(at));
                true
            }
        }
    }

    /// Adds position `at`, whose hash hashes to `h`, known to be the only one of its hash.
    #[inline]
    pub(super) fn insert_unique(&mut self, rows: &[Subscriber], h: u64, at: usize) {
        let hasher = &self.hasher;
        self.table.insert_unique(h, position(at), |&i| {
            hasher.hash_one(rows[i as usize].subscriber_hash.key())
        });
    }

    /// The hashes of the rows from `first` on, each with its position, computed on every
    /// core, in the order of the slots they land in (then by hash and position): the table
    /// filled front to back instead of at random (a cache and TLB miss each, most of a
    /// million's indexing otherwise). The slot is the hash's low bits, the table's size a
    /// power of two: an assumption of speed only, every order gives the same index.
    pub(super) fn slot_ordered(&self, rows: &[Subscriber], first: usize) -> Vec<(u64, usize)> {
        let positions: Vec<usize> = (first..rows.len()).collect();
        let parts: Vec<&[usize]> = positions.chunks(65_536).collect();
        let mut hashes: Vec<(u64, usize)> = on_all_cores(&parts, |part| {
            part.iter()
                .map(|&i| (self.hash(&rows[i].subscriber_hash), i))
                .collect::<Vec<_>>()
        })
        .into_iter()
        .flatten()
        .collect();
        let capacity = self.table.capacity();
        let slots = (capacity.saturating_mul(8) / 7).max(1).next_power_of_two() as u64;
        hashes.sort_unstable_by_key(|&(h, at)| (h & (slots - 1), h, at));
        hashes
    }
}

/// A position in `Site::subscribers` as the hash index holds it.
pub(super) fn position(at: usize) -> u32 {
    u32::try_from(at).expect("a site holds fewer than 4 billion subscribers")
}

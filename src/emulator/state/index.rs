//! A site's targeting indexes: for each value of the profile fields a broadcast filters on
//! (country, state, city, device type, browser) and for each segment, the positions in
//! `Site::subscribers` of the subscribers holding it, as roaring bitmaps.
//!
//! A targeted broadcast intersects the bitmaps of its include filters and reads only the
//! subscribers left, so its time grows with the audience it matches rather than with the
//! site (a country and a segment among ten million: a few hundred thousand rows read, not
//! ten million). Roaring, because positions are dense integers: a value held by more than
//! one subscriber in sixteen costs a bit per subscriber, a rarer one two bytes per holder,
//! and an intersection works a 64 KiB chunk at a time.
//!
//! The index is kept by `Site`, the only writer of what it covers: a subscriber's profile
//! fields never change once added, and segment membership changes through `Site`'s methods.

use std::collections::HashMap;

use roaring::RoaringBitmap;

use crate::emulator::parallel::on_all_cores;

use super::interned::Sym;

/// A profile field a broadcast filters on (4.13's `include_*`), in the order
/// [`Index::add`] takes their values.
#[derive(Debug, Clone, Copy)]
pub enum Field {
    Country,
    State,
    City,
    DeviceType,
    Browser,
}

/// Maps keyed by a `Sym` or a segment id, hashed by foldhash (as the hash index is): a few
/// multiplications, not SipHash's rounds, for five look-ups per subscriber added.
type ByNumber<K, V = RoaringBitmap> = HashMap<K, V, foldhash::fast::RandomState>;

/// What the index reads of a subscriber (`Site`'s rows).
pub trait Indexed {
    /// Its value of each [`Field`], in that order.
    fn indexed(&self) -> [Option<Sym>; 5];
    fn segment_ids(&self) -> &[i64];
}

/// A column built by [`Index::add_all`].
enum Built {
    Field(usize, Vec<(Sym, RoaringBitmap)>),
    Segments(Vec<(i64, RoaringBitmap)>),
}

/// Each value's positions (ascending) as a bitmap.
fn bitmaps<K>(by_value: ByNumber<K, Vec<u32>>) -> Vec<(K, RoaringBitmap)> {
    by_value
        .into_iter()
        .map(|(k, positions)| {
            // Gathered in ascending order: never out of order.
            let set = RoaringBitmap::from_sorted_iter(positions).unwrap_or_default();
            (k, set)
        })
        .collect()
}

#[derive(Debug, Clone, Default)]
pub struct Index {
    /// By `Field as usize`: each value's holders.
    values: [ByNumber<Sym>; 5],
    segments: ByNumber<i64>,
}

impl Field {
    const ALL: [Field; 5] = [
        Field::Country,
        Field::State,
        Field::City,
        Field::DeviceType,
        Field::Browser,
    ];
}

impl Index {
    /// Indexes the subscriber at `at` (`insert`, not roaring's `push`: a bitmap container's
    /// `push` looks for its last bit from the container's end, 8 KiB read per subscriber at
    /// the start of each chunk): its values of each [`Field`], in that order, and its
    /// segments.
    pub fn add(&mut self, at: u32, values: [Option<Sym>; 5], segments: impl Iterator<Item = i64>) {
        for (table, value) in self.values.iter_mut().zip(values) {
            if let Some(v) = value {
                table.entry(v).or_default().insert(at);
            }
        }
        for id in segments {
            self.segments.entry(id).or_default().insert(at);
        }
    }

    /// Indexes `rows`, at the positions from `first` on (past every position indexed
    /// before: a load's subscribers, or a generated population's), in bulk: each column's
    /// positions gathered by value, then each value's made a bitmap at once, the columns
    /// on every core. Inserting per subscriber, as [`Index::add`] does, was most of a load.
    pub fn add_all<T: Indexed + Sync>(&mut self, first: u32, rows: &[T]) {
        let at = |i: usize| first + i as u32;
        // The five fields, then the segments.
        let columns: Vec<usize> = (0..=Field::ALL.len()).collect();
        let built = on_all_cores(&columns, |&c| {
            if c < Field::ALL.len() {
                let mut by_value: ByNumber<Sym, Vec<u32>> = HashMap::default();
                for (i, row) in rows.iter().enumerate() {
                    if let Some(v) = row.indexed()[c] {
                        by_value.entry(v).or_default().push(at(i));
                    }
                }
                Built::Field(c, bitmaps(by_value))
            } else {
                let mut by_id: ByNumber<i64, Vec<u32>> = HashMap::default();
                for (i, row) in rows.iter().enumerate() {
                    for id in row.segment_ids() {
                        by_id.entry(*id).or_default().push(at(i));
                    }
                }
                Built::Segments(bitmaps(by_id))
            }
        });
        for column in built {
            match column {
                Built::Field(c, sets) => {
                    for (v, set) in sets {
                        *self.values[c].entry(v).or_default() |= set;
                    }
                }
                Built::Segments(sets) => {
                    for (id, set) in sets {
                        *self.segments.entry(id).or_default() |= set;
                    }
                }
            }
        }
    }

    /// The holders of any of `values` in `field`: a value no subscriber ever held has none.
    pub fn any_of(&self, field: Field, values: &[String]) -> RoaringBitmap {
        let table = &self.values[field as usize];
        values
            .iter()
            .filter_map(|v| Sym::existing(v).and_then(|s| table.get(&s)))
            .fold(RoaringBitmap::new(), |acc, b| acc | b)
    }

    /// The members of any of the segments `ids`.
    pub fn in_segments(&self, ids: &[i64]) -> RoaringBitmap {
        ids.iter()
            .filter_map(|id| self.segments.get(id))
            .fold(RoaringBitmap::new(), |acc, b| acc | b)
    }

    /// The members of segment `id`, in the order they subscribed.
    pub fn members(&self, id: i64) -> impl Iterator<Item = usize> + '_ {
        self.segments
            .get(&id)
            .into_iter()
            .flat_map(|b| b.iter().map(|at| at as usize))
    }

    /// How many subscribers segment `id` holds, from its bitmap's count.
    pub fn member_count(&self, id: i64) -> u64 {
        self.segments.get(&id).map_or(0, RoaringBitmap::len)
    }

    pub fn join(&mut self, id: i64, at: u32) {
        self.segments.entry(id).or_default().insert(at);
    }

    pub fn leave(&mut self, id: i64, at: u32) {
        if let Some(b) = self.segments.get_mut(&id) {
            b.remove(at);
        }
    }

    /// Forgets segment `id`; its members' positions.
    pub fn drop_segment(&mut self, id: i64) -> RoaringBitmap {
        self.segments.remove(&id).unwrap_or_default()
    }
}

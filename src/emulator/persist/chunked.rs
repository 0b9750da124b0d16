//! [`Chunked`]: a list of millions (subscribers, deliveries) written as chunks each encoded
//! on its own, so that saving and loading use every core: a million subscribers are a
//! million small records of strings and maps, whose decoding (mostly allocation) is the
//! bulk of a load; read lazily, so that what each item becomes (a delivery from its image)
//! is made on the same cores as it is decoded.

use serde::de::{DeserializeSeed, Error as _, SeqAccess, Visitor};
use serde::ser::{Error as _, SerializeSeq};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::emulator::parallel::{in_parts, on_all_cores};

/// Items per chunk: enough that a chunk's overhead is nothing, few enough that the chunks
/// of a million spread evenly over the cores.
const CHUNK: usize = 16_384;

/// A list: the items when saved; as read, its chunks still encoded (each with how many
/// items it holds), decoded by [`Chunked::decode`] on every core.
pub enum Chunked<'a, T> {
    /// Items made for the save (images of the state's own).
    Made(Vec<T>),
    /// As many items as it says, each made when its chunk is written (the rows of the
    /// state's own records: no list of them all is ever made).
    Rows(usize, Box<dyn Fn(usize) -> T + Sync + 'a>),
    Encoded(Vec<(u32, &'a [u8])>),
}

impl<'a, T: Deserialize<'a> + Send> Chunked<'a, T> {
    /// The items, each made into what `f` makes of it, on every core; in order.
    ///
    /// Each core decodes its run of chunks straight into a list of its own, the first core's
    /// made big enough for all: the others' are appended to it. A list per chunk, joined at
    /// the end, copied every item once more (and faulted in its memory twice), which was
    /// most of a million subscribers' load.
    pub fn decode<U: Send>(
        self,
        f: impl Fn(T) -> Result<U, String> + Sync,
    ) -> Result<Vec<U>, String> {
        let chunks = match self {
            Chunked::Encoded(chunks) => chunks,
            Chunked::Made(_) | Chunked::Rows(..) => {
                return Err("a list to save, not one read".into())
            }
        };
        // An item takes at least a byte: a count above that is no count this file can hold.
        if chunks.iter().any(|(n, bytes)| *n as usize > bytes.len()) {
            return Err("a chunk counts more items than it has bytes".into());
        }
        let total: usize = chunks.iter().map(|(n, _)| *n as usize).sum();
        let parts = in_parts(&chunks, |index, part| {
            let mine: usize = part.iter().map(|(n, _)| *n as usize).sum();
            let mut out = Vec::with_capacity(if index == 0 { total } else { mine });
            for (count, bytes) in part {
                let before = out.len();
                let mut de = postcard::Deserializer::from_bytes(bytes);
                Into {
                    out: &mut out,
                    f: &f,
                    item: std::marker::PhantomData,
                }
                .deserialize(&mut de)
                .map_err(|e| e.to_string())?;
                if out.len() - before != *count as usize {
                    return Err(format!(
                        "a chunk holds {} items where it counts {count}",
                        out.len() - before
                    ));
                }
            }
            Ok::<_, String>(out)
        });
        let mut parts = parts.into_iter();
        let mut items = parts.next().transpose()?.unwrap_or_default();
        for part in parts {
            items.extend(part?);
        }
        Ok(items)
    }
}

/// Reads a chunk's list into `out`, each item made into what `f` makes of it.
struct Into<'o, T, U, F> {
    out: &'o mut Vec<U>,
    f: &'o F,
    item: std::marker::PhantomData<T>,
}

impl<'de, T, U, F> DeserializeSeed<'de> for Into<'_, T, U, F>
where
    T: Deserialize<'de>,
    F: Fn(T) -> Result<U, String>,
{
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, T, U, F> Visitor<'de> for Into<'_, T, U, F>
where
    T: Deserialize<'de>,
    F: Fn(T) -> Result<U, String>,
{
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(item) = seq.next_element::<T>()? {
            self.out.push((self.f)(item).map_err(A::Error::custom)?);
        }
        Ok(())
    }
}

/// Bytes written as bytes (a `&[u8]` alone is written as a list of numbers).
struct Bytes<'b>(&'b [u8]);

impl Serialize for Bytes<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(self.0)
    }
}

/// Items `range` of a [`Chunked::Rows`], made one at a time as they are written.
struct RowsOf<'r, T> {
    range: std::ops::Range<usize>,
    row: &'r (dyn Fn(usize) -> T + Sync),
}

impl<T: Serialize> Serialize for RowsOf<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.range.clone().map(self.row))
    }
}

/// Writes each chunk's item count and encoded bytes.
fn write_chunks<S: Serializer>(
    s: S,
    encoded: Vec<(usize, postcard::Result<Vec<u8>>)>,
) -> Result<S::Ok, S::Error> {
    let mut seq = s.serialize_seq(Some(encoded.len()))?;
    for (count, bytes) in encoded {
        let bytes = bytes.map_err(S::Error::custom)?;
        // CHUNK items at most: a u32 holds the count.
        seq.serialize_element(&(count as u32, Bytes(&bytes)))?;
    }
    seq.end()
}

impl<T: Serialize + Sync> Serialize for Chunked<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let items = match self {
            Chunked::Made(items) => items.as_slice(),
            Chunked::Rows(n, row) => {
                let ranges: Vec<std::ops::Range<usize>> = (0..*n)
                    .step_by(CHUNK)
                    .map(|start| start..(start + CHUNK).min(*n))
                    .collect();
                let encoded = on_all_cores(&ranges, |range| {
                    let rows = RowsOf {
                        range: range.clone(),
                        row: &**row,
                    };
                    (range.len(), postcard::to_stdvec(&rows))
                });
                return write_chunks(s, encoded);
            }
            Chunked::Encoded(_) => return Err(S::Error::custom("a list read, not one to save")),
        };
        let chunks: Vec<&[T]> = items.chunks(CHUNK).collect();
        let encoded = on_all_cores(&chunks, |chunk| (chunk.len(), postcard::to_stdvec(chunk)));
        write_chunks(s, encoded)
    }
}

impl<'de: 'a, 'a, T> Deserialize<'de> for Chunked<'a, T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <Vec<(u32, &'a [u8])>>::deserialize(d).map(Chunked::Encoded)
    }
}

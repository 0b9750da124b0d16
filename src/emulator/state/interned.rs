//! Interned text: a subscriber's low-cardinality fields (a country, a city, a browser) and
//! its attributes' names, held once per distinct value instead of once per subscriber.
//!
//! A [`Sym`] is a 4-byte number (`Option<Sym>` as well) naming the one copy of its text, in
//! a table shared by the whole process: a subscriber's seven profile fields take 28 bytes,
//! where pointers took 56 and `Option<String>`s 168 and an allocation each. The copies lie
//! in a `boxcar::Vec`, an append-only list whose items never move, read without a lock, so
//! reading a `Sym`'s text is an index, and two `Sym`s are equal when their numbers are.
//! (`lasso` hands out such keys too, but needs its interner at hand to read one; the
//! subscribers are read where only the `Sym` is.) The copies are never freed: the table
//! holds what the process has seen (a few hundred countries, cities, devices and attribute
//! names), which is why only low-cardinality text belongs here, never a hash or a profile
//! id. On the wire and in the state file a `Sym` is its text, so the answers and the file's
//! layout are those of a `String`.

use std::collections::HashMap;
use std::fmt;
use std::num::NonZeroU32;
use std::ops::Deref;
use std::sync::{LazyLock, RwLock};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One interned text (see the module): its place in `TEXTS`, plus one.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Sym(NonZeroU32);

/// Each text's one copy, in the order first seen.
static TEXTS: LazyLock<boxcar::Vec<Box<str>>> = LazyLock::new(boxcar::Vec::new);

/// Each text's `Sym`, keyed by the text's copy in `TEXTS`.
static TABLE: LazyLock<RwLock<HashMap<&'static str, Sym>>> = LazyLock::new(Default::default);

impl Sym {
    /// The one `Sym` of `text`, interned on first sight.
    pub fn of(text: &str) -> Sym {
        let table = TABLE.read().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = table.get(text) {
            return *s;
        }
        drop(table);
        let mut table = TABLE.write().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = table.get(text) {
            return *s;
        }
        // Pushed under the write lock: places are handed out in order, one per text.
        let at = TEXTS.push(text.into());
        let sym = Sym(u32::try_from(at + 1)
            .ok()
            .and_then(NonZeroU32::new)
            .expect("fewer than 4 billion distinct interned texts"));
        table.insert(sym.as_str(), sym);
        sym
    }

    /// The `Sym` of `text` when it was ever interned (a filter's value that no subscriber
    /// holds has none: it matches no one).
    pub fn existing(text: &str) -> Option<Sym> {
        let table = TABLE.read().unwrap_or_else(|e| e.into_inner());
        table.get(text).copied()
    }

    /// Its number, from 0 in the order the texts were first seen (dense: a table indexed
    /// by it is as long as the texts interned).
    pub fn number(self) -> u32 {
        self.0.get() - 1
    }

    pub fn as_str(self) -> &'static str {
        let texts: &'static boxcar::Vec<Box<str>> = &TEXTS;
        &texts[self.0.get() as usize - 1]
    }
}

impl Deref for Sym {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Debug for Sym {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl From<&str> for Sym {
    fn from(text: &str) -> Sym {
        Sym::of(text)
    }
}

impl From<String> for Sym {
    fn from(text: String) -> Sym {
        Sym::of(&text)
    }
}

impl Serialize for Sym {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Sym {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Sym, D::Error> {
        read_text(d, Sym::of)
    }
}

/// A value that is its text on the wire, read through `of` where the text lies (borrowed
/// or not), so that nothing is copied unless `of` keeps it.
pub(super) fn read_text<'de, D: Deserializer<'de>, T, F: FnOnce(&str) -> T>(
    d: D,
    of: F,
) -> Result<T, D::Error> {
    struct Text<F>(F);
    impl<T, F: FnOnce(&str) -> T> serde::de::Visitor<'_> for Text<F> {
        type Value = T;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a string")
        }

        fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<T, E> {
            Ok((self.0)(text))
        }
    }
    d.deserialize_str(Text(of))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_copy_per_text_and_a_string_on_the_wire() {
        let (a, b) = (Sym::of("DE"), Sym::from(String::from("DE")));
        assert_eq!(a, b);
        assert_ne!(a, Sym::of("FR"));
        assert_eq!(std::mem::size_of::<Option<Sym>>(), 4);
        assert_eq!(serde_json::to_string(&Some(a)).unwrap(), "\"DE\"");
        let back: Option<Sym> = serde_json::from_str("\"DE\"").unwrap();
        assert_eq!(back, Some(a));
        assert_eq!(
            postcard::to_allocvec(&Some(a)).unwrap(),
            postcard::to_allocvec(&Some("DE".to_string())).unwrap()
        );
        assert_eq!(Sym::existing("never-seen-anywhere"), None);
    }
}

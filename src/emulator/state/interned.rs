//! Interned text: a subscriber's low-cardinality fields (a country, a city, a browser) and
//! its attributes' names, held once per distinct value instead of once per subscriber.
//!
//! A [`Sym`] is a thin pointer (8 bytes, `Option<Sym>` as well) to the one copy of its text,
//! in a table shared by the whole process. Our own rather than a crate's (`lasso` hands out
//! 4-byte keys but needs its table at hand to read one; `ustr` is this design with a
//! precomputed hash we do not need): reading a `Sym` is a plain dereference, no lock, and two
//! are equal when they point at the same copy. The copies are never freed: the table holds
//! what the process has seen (a few hundred countries, cities, devices and attribute names),
//! which is why only low-cardinality text belongs here, never a hash or a profile id.
//! On the wire and in the state file a `Sym` is its text, so the answers and the file's
//! layout are those of a `String`.

use std::collections::HashMap;
use std::fmt;
use std::ops::Deref;
use std::sync::{LazyLock, RwLock};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One interned text (see the module).
#[derive(Clone, Copy)]
pub struct Sym(&'static String);

/// Each text's one copy, keyed by its own text.
static TABLE: LazyLock<RwLock<HashMap<&'static str, &'static String>>> =
    LazyLock::new(Default::default);

impl Sym {
    /// The one `Sym` of `text`, interned on first sight.
    pub fn of(text: &str) -> Sym {
        let table = TABLE.read().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = table.get(text) {
            return Sym(s);
        }
        drop(table);
        let mut table = TABLE.write().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = table.get(text) {
            return Sym(s);
        }
        let s: &'static String = Box::leak(Box::new(text.to_string()));
        table.insert(s.as_str(), s);
        Sym(s)
    }

    /// The `Sym` of `text` when it was ever interned (a filter's value that no subscriber
    /// holds has none: it matches no one).
    pub fn existing(text: &str) -> Option<Sym> {
        let table = TABLE.read().unwrap_or_else(|e| e.into_inner());
        table.get(text).map(|s| Sym(s))
    }

    pub fn as_str(self) -> &'static str {
        self.0.as_str()
    }
}

impl PartialEq for Sym {
    fn eq(&self, other: &Sym) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

impl Eq for Sym {}

impl std::hash::Hash for Sym {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        std::ptr::hash(self.0, h)
    }
}

impl Deref for Sym {
    type Target = str;

    fn deref(&self) -> &str {
        self.0.as_str()
    }
}

impl fmt::Debug for Sym {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.0.as_str(), f)
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
        s.serialize_str(self.0)
    }
}

impl<'de> Deserialize<'de> for Sym {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Sym, D::Error> {
        struct Text;
        impl serde::de::Visitor<'_> for Text {
            type Value = Sym;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }

            // Read where it lies (borrowed or not): no copy unless the text is new.
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Sym, E> {
                Ok(Sym::of(text))
            }
        }
        d.deserialize_str(Text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_copy_per_text_and_a_string_on_the_wire() {
        let (a, b) = (Sym::of("DE"), Sym::from(String::from("DE")));
        assert_eq!(a, b);
        assert_ne!(a, Sym::of("FR"));
        assert_eq!(std::mem::size_of::<Option<Sym>>(), 8);
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

//! A subscriber's attributes, held compactly: the names interned ([`Sym`]), the pairs in the
//! order they were given, in one boxed slice. A JSON object with its own hash table (an
//! `IndexMap`) took some 260 bytes for a single attribute; this takes 16 and one small
//! allocation. A subscriber has a handful at most, so a look-up walks them.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::interned::Sym;

#[derive(Clone, Default, PartialEq)]
pub struct Attributes(Box<[(Sym, Value)]>);

impl Attributes {
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0
            .iter()
            .find(|(k, _)| k.as_str() == key)
            .map(|(_, v)| v)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &Value)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<Map<String, Value>> for Attributes {
    fn from(map: Map<String, Value>) -> Attributes {
        Attributes(map.into_iter().map(|(k, v)| (Sym::of(&k), v)).collect())
    }
}

impl FromIterator<(Sym, Value)> for Attributes {
    fn from_iter<I: IntoIterator<Item = (Sym, Value)>>(pairs: I) -> Attributes {
        Attributes(pairs.into_iter().collect())
    }
}

impl fmt::Debug for Attributes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// As the JSON object it was given as (the state file holds its JSON text, `loose`).
impl Serialize for Attributes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.iter())
    }
}

impl<'de> Deserialize<'de> for Attributes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Attributes, D::Error> {
        Map::<String, Value>::deserialize(d).map(Attributes::from)
    }
}

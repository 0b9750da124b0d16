//! A subscriber's attributes, held compactly: the names interned ([`Sym`]), the values as
//! [`Scalar`]s (24 bytes, where a JSON value took 80), the pairs in the order they were
//! given, in one boxed slice. A JSON object with its own hash table (an `IndexMap`) took some
//! 260 bytes for a single attribute; this takes 16 and one allocation of 32 a pair. A
//! subscriber has a handful at most, so a look-up walks them.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Number, Value};

use super::interned::Sym;

/// One attribute's value: the scalars a JSON value holds inline (a string in a box of its
/// exact size), anything else (a list, an object) as the JSON value, boxed.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    Null,
    Bool(bool),
    Number(Number),
    Text(Box<str>),
    Other(Box<Value>),
}

impl Scalar {
    /// As the JSON value it was given as (a string copied out, nothing else).
    pub fn value(&self) -> Cow<'_, Value> {
        match self {
            Scalar::Null => Cow::Owned(Value::Null),
            Scalar::Bool(b) => Cow::Owned(Value::Bool(*b)),
            Scalar::Number(n) => Cow::Owned(Value::Number(n.clone())),
            Scalar::Text(s) => Cow::Owned(Value::String(s.to_string())),
            Scalar::Other(v) => Cow::Borrowed(v),
        }
    }
}

impl From<Value> for Scalar {
    fn from(v: Value) -> Scalar {
        match v {
            Value::Null => Scalar::Null,
            Value::Bool(b) => Scalar::Bool(b),
            Value::Number(n) => Scalar::Number(n),
            Value::String(s) => Scalar::Text(s.into_boxed_str()),
            other => Scalar::Other(Box::new(other)),
        }
    }
}

impl Serialize for Scalar {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Scalar::Null => s.serialize_unit(),
            Scalar::Bool(b) => s.serialize_bool(*b),
            Scalar::Number(n) => n.serialize(s),
            Scalar::Text(t) => s.serialize_str(t),
            Scalar::Other(v) => v.serialize(s),
        }
    }
}

#[derive(Clone, Default, PartialEq)]
pub struct Attributes(Box<[(Sym, Scalar)]>);

impl Attributes {
    /// The value of `key`, as the JSON value it was given as.
    pub fn get(&self, key: &str) -> Option<Cow<'_, Value>> {
        self.0
            .iter()
            .find(|(k, _)| k.as_str() == key)
            .map(|(_, v)| v.value())
    }

    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &Scalar)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The value of `key` as held.
    pub fn scalar(&self, key: &str) -> Option<&Scalar> {
        self.0
            .iter()
            .find(|(k, _)| k.as_str() == key)
            .map(|(_, v)| v)
    }

    /// The value of the attribute named `key`'s interned text, as held.
    pub fn scalar_of(&self, key: Sym) -> Option<&Scalar> {
        self.0.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// The pairs, name and value, in the order given.
    pub fn pairs(&self) -> &[(Sym, Scalar)] {
        &self.0
    }

    pub fn of_pairs(pairs: Vec<(Sym, Scalar)>) -> Attributes {
        Attributes(pairs.into_boxed_slice())
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
        Attributes(
            map.into_iter()
                .map(|(k, v)| (Sym::of(&k), Scalar::from(v)))
                .collect(),
        )
    }
}

impl FromIterator<(Sym, Value)> for Attributes {
    fn from_iter<I: IntoIterator<Item = (Sym, Value)>>(pairs: I) -> Attributes {
        Attributes(
            pairs
                .into_iter()
                .map(|(k, v)| (k, Scalar::from(v)))
                .collect(),
        )
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn attributes_read_back_as_the_object_they_were_given_as() {
        let given = json!({"plan": "pro", "n": 1.5, "big": 18446744073709551615u64,
            "neg": -3, "ok": true, "none": null, "tags": ["a", {"b": 1}]});
        let Value::Object(map) = given.clone() else {
            unreachable!()
        };
        let attrs = Attributes::from(map);
        assert_eq!(serde_json::to_value(&attrs).unwrap(), given);
        assert_eq!(
            serde_json::to_string(&attrs).unwrap(),
            serde_json::to_string(&given).unwrap()
        );
        assert_eq!(attrs.get("plan").as_deref(), Some(&json!("pro")));
        assert_eq!(attrs.get("tags").as_deref(), Some(&json!(["a", {"b": 1}])));
        assert_eq!(attrs.get("nope"), None);
        assert_eq!(std::mem::size_of::<Scalar>(), 24);
    }
}

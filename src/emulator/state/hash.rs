//! A subscriber's hash, compact. The service's hashes (and those the emulator makes up) are
//! 32 lowercase hex digits: held as their 16 bytes (a `String` took 24 and an allocation of
//! 32 besides). Any other text a test gives as a hash is kept as it is, boxed; only the
//! canonical spelling is packed, so the hash reads back exactly as it was given.

use std::fmt;
use std::ops::Deref;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Clone, PartialEq, Eq, Hash)]
pub enum SubscriberHash {
    /// 32 lowercase hex digits, as bytes.
    Hex([u8; 16]),
    Text(Box<str>),
}

/// What the subscriber index hashes and compares: the packed bytes, or the text. A hash and
/// its text give the same key, so a look-up by text needs no allocation, and indexing a
/// million packed hashes no formatting.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub enum Key<'a> {
    Hex([u8; 16]),
    Text(&'a str),
}

impl Key<'_> {
    /// The key of the hash spelt `text`.
    pub fn of(text: &str) -> Key<'_> {
        match unhex(text) {
            Some(bytes) => Key::Hex(bytes),
            None => Key::Text(text),
        }
    }
}

/// A hash's text, on the stack when it was packed: derefs to `str`.
pub enum HashText<'a> {
    Hex([u8; 32]),
    Text(&'a str),
}

impl Deref for HashText<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        match self {
            // Only hex digits are written into it.
            HashText::Hex(digits) => std::str::from_utf8(digits).unwrap_or_default(),
            HashText::Text(t) => t,
        }
    }
}

const DIGITS: &[u8; 16] = b"0123456789abcdef";

fn unhex(text: &str) -> Option<[u8; 16]> {
    let b = text.as_bytes();
    if b.len() != 32 {
        return None;
    }
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; 16];
    for (i, pair) in b.chunks_exact(2).enumerate() {
        out[i] = (digit(pair[0])? << 4) | digit(pair[1])?;
    }
    Some(out)
}

impl SubscriberHash {
    pub fn of(text: &str) -> SubscriberHash {
        match unhex(text) {
            Some(bytes) => SubscriberHash::Hex(bytes),
            None => SubscriberHash::Text(text.into()),
        }
    }

    /// Its text.
    pub fn text(&self) -> HashText<'_> {
        match self {
            SubscriberHash::Hex(bytes) => {
                let mut digits = [0u8; 32];
                for (i, b) in bytes.iter().enumerate() {
                    digits[2 * i] = DIGITS[usize::from(b >> 4)];
                    digits[2 * i + 1] = DIGITS[usize::from(b & 15)];
                }
                HashText::Hex(digits)
            }
            SubscriberHash::Text(t) => HashText::Text(t),
        }
    }

    pub fn key(&self) -> Key<'_> {
        match self {
            SubscriberHash::Hex(bytes) => Key::Hex(*bytes),
            SubscriberHash::Text(t) => Key::Text(t),
        }
    }

    pub fn is_empty(&self) -> bool {
        matches!(self, SubscriberHash::Text(t) if t.is_empty())
    }
}

impl Default for SubscriberHash {
    fn default() -> Self {
        SubscriberHash::Text("".into())
    }
}

impl PartialEq<str> for SubscriberHash {
    fn eq(&self, other: &str) -> bool {
        match self {
            SubscriberHash::Hex(bytes) => unhex(other).is_some_and(|o| &o == bytes),
            SubscriberHash::Text(t) => &**t == other,
        }
    }
}

impl PartialEq<&str> for SubscriberHash {
    fn eq(&self, other: &&str) -> bool {
        *self == **other
    }
}

impl PartialEq<String> for SubscriberHash {
    fn eq(&self, other: &String) -> bool {
        *self == **other
    }
}

impl From<String> for SubscriberHash {
    fn from(text: String) -> Self {
        match unhex(&text) {
            Some(bytes) => SubscriberHash::Hex(bytes),
            None => SubscriberHash::Text(text.into_boxed_str()),
        }
    }
}

impl From<&str> for SubscriberHash {
    fn from(text: &str) -> Self {
        SubscriberHash::of(text)
    }
}

impl fmt::Display for SubscriberHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

impl fmt::Debug for SubscriberHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.text(), f)
    }
}

impl Serialize for SubscriberHash {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text())
    }
}

impl<'de> Deserialize<'de> for SubscriberHash {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<SubscriberHash, D::Error> {
        super::interned::read_text(d, SubscriberHash::of)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_reads_back_as_it_was_given() {
        for text in [
            "0123456789abcdef0123456789abcdef",
            "0123456789ABCDEF0123456789ABCDEF",
            "h1",
            "",
            "0123456789abcdef0123456789abcdeg",
        ] {
            let h = SubscriberHash::of(text);
            assert_eq!(&*h.text(), text);
            assert_eq!(h, *text);
            assert_eq!(serde_json::to_value(&h).unwrap(), serde_json::json!(text));
            assert_eq!(
                postcard::to_allocvec(&h).unwrap(),
                postcard::to_allocvec(text).unwrap()
            );
        }
        assert!(matches!(
            SubscriberHash::of("0123456789abcdef0123456789abcdef"),
            SubscriberHash::Hex(_)
        ));
        assert_ne!(SubscriberHash::of("ab"), *"AB");
        for text in ["0123456789abcdef0123456789abcdef", "h1"] {
            assert!(SubscriberHash::of(text).key() == Key::of(text));
        }
        assert_eq!(std::mem::size_of::<SubscriberHash>(), 24);
    }
}

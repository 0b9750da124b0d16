//! Form bodies (`application/x-www-form-urlencoded`, and the fields of
//! `multipart/form-data`) with arrays.
//!
//! The spec sends arrays as indexed keys (`name[0]=a&name[1]=b`); real clients also send
//! `name[]=a&name[]=b` and repeated plain keys (`name=a&name=b`). serde_qs reads the first two
//! but not repeated keys, and errors instead of keeping a stray scalar, so decoding is done
//! here over `form_urlencoded` (which does the percent-decoding): every key maps to the list
//! of its values, in index order.

use std::collections::BTreeMap;

/// A decoded form body: each base key with its values.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Form {
    fields: BTreeMap<String, Vec<(Option<u64>, String)>>,
    /// Keys with brackets that are not an array index (`name[x]`, `name[0][0]`, `name[-1]`):
    /// kept apart, never read as another field.
    bad_keys: Vec<String>,
}

impl Form {
    pub fn parse(body: &[u8]) -> Form {
        Form::from_pairs(form_urlencoded::parse(body))
    }

    /// A form of `(key, value)` pairs as they came, keys spelt as in a form body
    /// (`name[0]`, `name[]`, repeated `name`): the fields of a `multipart/form-data` body.
    pub fn from_pairs<K: AsRef<str>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Form {
        let mut fields: BTreeMap<String, Vec<(Option<u64>, String)>> = BTreeMap::new();
        let mut bad_keys = Vec::new();
        for (key, value) in pairs {
            let key = key.as_ref();
            match split_index(key) {
                Some((base, index)) => fields
                    .entry(base.to_string())
                    .or_default()
                    .push((index, value.into())),
                None => bad_keys.push(key.to_string()),
            }
        }
        for values in fields.values_mut() {
            // Indexed entries in index order; `[]` and plain repeats keep arrival order.
            values.sort_by_key(|(i, _)| i.unwrap_or(u64::MAX));
        }
        Form { fields, bad_keys }
    }

    /// The first key whose brackets are not an array index, as it was sent. Such a key names
    /// no field: a reader that skipped it could widen a broadcast, so it is refused.
    pub fn bad_key(&self) -> Option<&str> {
        self.bad_keys.first().map(String::as_str)
    }

    /// The message refusing [`Form::bad_key`].
    pub fn bad_key_message(key: &str) -> String {
        format!("The {key} parameter has an invalid array index: arrays are sent as name[0], name[1]... or name[].")
    }

    /// The base names of every key sent (indexed keys under their base name).
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.fields.keys().map(String::as_str)
    }

    /// The single value of `key` (the first, if several were sent).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields
            .get(key)
            .and_then(|v| v.first())
            .map(|(_, s)| s.as_str())
    }

    /// The non-empty value of `key`, trimmed.
    pub fn text(&self, key: &str) -> Option<String> {
        self.get(key)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    }

    /// Every value of `key` as an array.
    pub fn list(&self, key: &str) -> Vec<String> {
        self.fields
            .get(key)
            .map(|v| v.iter().map(|(_, s)| s.clone()).collect())
            .unwrap_or_default()
    }

    pub fn contains(&self, key: &str) -> bool {
        self.fields.contains_key(key)
    }
}

/// `name[3]` -> (`name`, Some(3)); `name[]` -> (`name`, None); `name` -> (`name`, None).
/// Any other use of brackets (`name[x]`, `name[-1]`, `name[+1]`, `name[ 0]`, `name[0][0]`,
/// an index past `u64`, `[0]` without a name, a stray `]`) is `None`: not an array index.
fn split_index(key: &str) -> Option<(&str, Option<u64>)> {
    let Some(open) = key.find('[') else {
        return (!key.contains(']')).then_some((key, None));
    };
    let base = &key[..open];
    let inner = key[open + 1..].strip_suffix(']')?;
    if base.is_empty() || base.contains(']') || inner.contains(['[', ']']) {
        return None;
    }
    if inner.is_empty() {
        return Some((base, None));
    }
    if !inner.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    inner.parse::<u64>().ok().map(|i| (base, Some(i)))
}

/// Builds a form body, arrays as the spec's indexed keys.
pub struct FormWriter {
    out: form_urlencoded::Serializer<'static, String>,
}

impl Default for FormWriter {
    fn default() -> Self {
        Self::new()
    }
}

impl FormWriter {
    pub fn new() -> Self {
        FormWriter {
            out: form_urlencoded::Serializer::new(String::new()),
        }
    }

    pub fn field(&mut self, key: &str, value: &str) -> &mut Self {
        self.out.append_pair(key, value);
        self
    }

    pub fn opt(&mut self, key: &str, value: Option<&str>) -> &mut Self {
        if let Some(v) = value {
            self.out.append_pair(key, v);
        }
        self
    }

    pub fn list<S: AsRef<str>>(&mut self, key: &str, values: &[S]) -> &mut Self {
        for (i, v) in values.iter().enumerate() {
            self.out.append_pair(&format!("{key}[{i}]"), v.as_ref());
        }
        self
    }

    pub fn finish(&mut self) -> String {
        self.out.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_three_array_spellings() {
        let f = Form::parse(b"a[1]=y&a[0]=x&b[]=1&b[]=2&c=p&c=q&d=%20z%20");
        assert_eq!(f.list("a"), ["x", "y"]);
        assert_eq!(f.list("b"), ["1", "2"]);
        assert_eq!(f.list("c"), ["p", "q"]);
        assert_eq!(f.text("d").as_deref(), Some("z"));
        assert_eq!(f.get("missing"), None);
    }

    #[test]
    fn keys_with_brackets_that_are_no_index_are_kept_apart() {
        for key in [
            "a[x]",
            "a[-1]",
            "a[+1]",
            "a[ 0]",
            "a[0][0]",
            "a[99999999999999999999]",
            "[0]",
            "a[0",
            "a]",
            "a[0]x",
        ] {
            let body = format!(
                "{}=v&a[0]=w",
                form_urlencoded::byte_serialize(key.as_bytes()).collect::<String>()
            );
            let f = Form::parse(body.as_bytes());
            assert_eq!(f.bad_key(), Some(key), "{key}");
            assert_eq!(f.list("a"), ["w"], "{key}");
        }
        let f = Form::parse(b"a[18446744073709551615]=x&b[]=y&c=z");
        assert_eq!(f.bad_key(), None);
        assert_eq!(f.keys().collect::<Vec<_>>(), ["a", "b", "c"]);
    }

    #[test]
    fn writes_indexed_keys() {
        let body = FormWriter::new()
            .field("segment_id", "7")
            .list("subscriber_hash", &["h 1", "h&2"])
            .finish();
        assert_eq!(
            body,
            "segment_id=7&subscriber_hash%5B0%5D=h+1&subscriber_hash%5B1%5D=h%262"
        );
        let back = Form::parse(body.as_bytes());
        assert_eq!(back.list("subscriber_hash"), ["h 1", "h&2"]);
    }
}

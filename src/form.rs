//! Form-encoded bodies (`application/x-www-form-urlencoded`) with arrays.
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
}

impl Form {
    pub fn parse(body: &[u8]) -> Form {
        let mut fields: BTreeMap<String, Vec<(Option<u64>, String)>> = BTreeMap::new();
        for (key, value) in form_urlencoded::parse(body) {
            let (base, index) = split_index(&key);
            fields
                .entry(base.to_string())
                .or_default()
                .push((index, value.into_owned()));
        }
        for values in fields.values_mut() {
            // Indexed entries in index order; `[]` and plain repeats keep arrival order.
            values.sort_by_key(|(i, _)| i.unwrap_or(u64::MAX));
        }
        Form { fields }
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
fn split_index(key: &str) -> (&str, Option<u64>) {
    if let Some(open) = key.find('[') {
        if let Some(inner) = key[open + 1..].strip_suffix(']') {
            if inner.is_empty() {
                return (&key[..open], None);
            }
            if let Ok(i) = inner.parse::<u64>() {
                return (&key[..open], Some(i));
            }
        }
    }
    (key, None)
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

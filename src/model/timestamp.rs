//! A UTC timestamp as the service sends it (`created_at_utc`, `updated_at_utc`: "UTC ISO
//! 8601" in the spec): the text as sent, and the instant it names when it names one.
//!
//! The text is kept because the service is not held to its word: a timestamp it spells some
//! other way (`0000-00-00 00:00:00`, `yesterday`, a number) must not fail the read of the
//! whole result. Such a value reads as no instant (`None` in Python), and its text is what
//! `to_dict()`, `to_json()` and the state file give back. A missing, `null` or empty one
//! has no text, and is written `null`.

use chrono::{DateTime, Datelike, SecondsFormat, Timelike, Utc};
use serde::{Deserializer, Serialize, Serializer};

use super::lenient;

/// A UTC timestamp: the text as the service sent it, and the instant it names when it is an
/// ISO 8601 date or date-time (a missing offset meaning UTC) within the years 1 to 9999 (what
/// a Python `datetime` holds), to the microsecond.
///
/// Only the text is kept: the instant is read from it when asked for (an attribute read, a
/// comparison), so that decoding a page of results costs what decoding its texts does.
#[derive(Clone, Debug, Default)]
pub struct Timestamp {
    text: String,
}

impl Timestamp {
    /// The timestamp of `at`, written as the service writes its own: milliseconds and `Z`.
    pub fn new(at: DateTime<Utc>) -> Timestamp {
        Timestamp {
            text: at.to_rfc3339_opts(SecondsFormat::Millis, true),
        }
    }

    /// A timestamp of the service's text.
    pub fn parse(text: impl Into<String>) -> Timestamp {
        Timestamp { text: text.into() }
    }

    /// The instant, or `None` when the text names none (empty, not ISO 8601, or outside the
    /// years 1 to 9999 once in UTC). Finer than a microsecond is cut, as Python's `datetime`
    /// would.
    pub fn at(&self) -> Option<DateTime<Utc>> {
        let at = crate::validate::iso_instant(&self.text)?;
        if !(1..=9999).contains(&at.year()) {
            return None;
        }
        at.with_nanosecond(at.nanosecond() / 1000 * 1000)
    }

    /// The text as sent.
    pub fn text(&self) -> &str {
        &self.text
    }
}

/// Two timestamps are equal when they name the same instant, however each is written
/// (`...T10:00:00Z` and `...T10:00:00.000Z`); two that name none, when their texts are.
/// This is what `==` on a model compares, so that a model written out and read back (by
/// pydantic, a dataframe, `to_dict`) equals itself.
impl PartialEq for Timestamp {
    fn eq(&self, other: &Timestamp) -> bool {
        match (self.at(), other.at()) {
            (Some(a), Some(b)) => a == b,
            (None, None) => self.text == other.text,
            _ => false,
        }
    }
}

/// Written as its text; a timestamp with none (missing or `null` where it was read, or
/// built from `None`) as `null`, which reads back as the same.
impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.text.is_empty() {
            s.serialize_none()
        } else {
            s.serialize_str(&self.text)
        }
    }
}

impl<'de> serde::Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Timestamp, D::Error> {
        lenient::string(d).map(Timestamp::parse)
    }
}

impl lenient::Lenient for Timestamp {
    fn read<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        lenient::string(d).map(Timestamp::parse)
    }
}

// An aware datetime in UTC (`pushwire._dataclass` names the NewType), None for a text that
// names no instant.
#[cfg(feature = "python")]
super::annotation::annotated!(Timestamp => "Optional[UTCDateTime]");

#[cfg(feature = "emulator")]
impl schemars::JsonSchema for Timestamp {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Timestamp".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": ["string", "null"],
            "format": "date-time",
            "description": "UTC, ISO 8601",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_instant_and_keeps_the_text() {
        let t: Timestamp = serde_json::from_str(r#""2024-03-01T10:20:30.500Z""#).unwrap();
        assert_eq!(t.at().unwrap().timestamp_millis(), 1_709_288_430_500);
        assert_eq!(t.text(), "2024-03-01T10:20:30.500Z");
        // No offset is UTC; a space for the T as the service's other dates have it.
        let t: Timestamp = serde_json::from_str(r#""2024-03-01 10:20:30""#).unwrap();
        assert_eq!(t.at().unwrap().timestamp(), 1_709_288_430);
        assert_eq!(
            serde_json::to_string(&t).unwrap(),
            r#""2024-03-01 10:20:30""#
        );
    }

    #[test]
    fn a_value_that_is_no_timestamp_reads_as_none_with_its_text() {
        for (json, text) in [
            (r#""0000-00-00 00:00:00""#, "0000-00-00 00:00:00"),
            (r#""yesterday""#, "yesterday"),
            ("1709288430", "1709288430"),
            ("null", ""),
            (r#""""#, ""),
        ] {
            let t: Timestamp = serde_json::from_str(json).unwrap();
            assert_eq!((t.at(), t.text()), (None, text), "{json}");
            let back = if text.is_empty() {
                "null".to_string()
            } else {
                format!("{text:?}")
            };
            assert_eq!(serde_json::to_string(&t).unwrap(), back);
        }
    }

    #[test]
    fn an_instant_python_cannot_hold_is_none_and_finer_than_a_microsecond_is_cut() {
        for text in [
            "0000-01-01 00:00:00",
            "0001-01-01T00:00:00+01:00",
            "9999-12-31T23:00:00-05:00",
        ] {
            assert_eq!(Timestamp::parse(text).at(), None, "{text}");
        }
        let t = Timestamp::parse("2024-03-01T10:20:30.123456789Z");
        assert_eq!(t.at().unwrap().nanosecond(), 123_456_000);
        assert_eq!(t, Timestamp::parse("2024-03-01T10:20:30.123456Z"));
        assert_eq!(t.text(), "2024-03-01T10:20:30.123456789Z");
    }

    #[test]
    fn equal_when_the_same_instant() {
        let a = Timestamp::parse("2024-03-01T10:20:30Z");
        assert_eq!(a, Timestamp::parse("2024-03-01T10:20:30.000+00:00"));
        assert_eq!(a, Timestamp::new(a.at().unwrap()));
        assert_ne!(a, Timestamp::parse("2024-03-01T10:20:31Z"));
        assert_ne!(Timestamp::parse("x"), Timestamp::parse("y"));
        assert_ne!(a, Timestamp::parse("x"));
    }
}

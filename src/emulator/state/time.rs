//! Timestamps as the service writes them.

use chrono::{DateTime, SecondsFormat, Utc};

/// Timestamps as the service gives them: UTC ISO 8601 with milliseconds and `Z`.
pub fn iso(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

pub(crate) fn ser_time<S: serde::Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&iso(*t))
}

pub(crate) fn ser_opt_time<S: serde::Serializer>(
    t: &Option<DateTime<Utc>>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match t {
        Some(t) => s.serialize_str(&iso(*t)),
        None => s.serialize_none(),
    }
}

/// An optional instant in 8 bytes, for records held by the million (a delivery's sent,
/// viewed and clicked times): microseconds since 1970, `i64::MIN` for none, where an
/// `Option<DateTime<Utc>>` takes 12 bytes and aligns its record to 4. Microseconds: the
/// admin API and the service show milliseconds, and they span any year a clock can reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp(i64);

impl Stamp {
    pub const NONE: Stamp = Stamp(i64::MIN);

    pub fn of(t: Option<DateTime<Utc>>) -> Stamp {
        t.map_or(Stamp::NONE, |t| Stamp(t.timestamp_micros()))
    }

    pub fn get(self) -> Option<DateTime<Utc>> {
        if self == Stamp::NONE {
            None
        } else {
            DateTime::from_timestamp_micros(self.0)
        }
    }

    pub fn is_some(self) -> bool {
        self != Stamp::NONE
    }

    /// Microseconds since the epoch, or None.
    pub fn micros(self) -> Option<i64> {
        self.is_some().then_some(self.0)
    }
}

/// A timestamp both ways: as [`iso`] in a human-readable format (the admin API's JSON), and
/// exact, as seconds and nanoseconds since 1970, in a binary one (the state file, which keeps
/// what the clock said to the nanosecond).
pub(crate) mod stamp {
    use chrono::{DateTime, Utc};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            super::ser_time(t, s)
        } else {
            (t.timestamp(), t.timestamp_subsec_nanos()).serialize(s)
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<Utc>, D::Error> {
        use serde::de::Error;
        if d.is_human_readable() {
            let text = String::deserialize(d)?;
            DateTime::parse_from_rfc3339(&text)
                .map(|t| t.with_timezone(&Utc))
                .map_err(D::Error::custom)
        } else {
            let (secs, nanos) = <(i64, u32)>::deserialize(d)?;
            DateTime::from_timestamp(secs, nanos)
                .ok_or_else(|| D::Error::custom("a timestamp out of range"))
        }
    }
}

/// [`stamp`] for an optional timestamp.
pub(crate) mod opt_stamp {
    use chrono::{DateTime, Utc};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    #[serde(transparent)]
    struct Stamp(#[serde(with = "super::stamp")] DateTime<Utc>);

    pub fn serialize<S: Serializer>(t: &Option<DateTime<Utc>>, s: S) -> Result<S::Ok, S::Error> {
        t.map(Stamp).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<DateTime<Utc>>, D::Error> {
        Ok(Option::<Stamp>::deserialize(d)?.map(|s| s.0))
    }
}

/// A value the binary state file cannot hold field by field (a JSON value, whose reader
/// needs a self-describing format, or a model type with its lenient readers), held there as
/// its JSON text; written as itself in a human-readable format.
pub(crate) mod loose {
    use serde::de::DeserializeOwned;
    use serde::{Deserializer, Serialize, Serializer};

    pub fn serialize<T: Serialize + ?Sized, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            v.serialize(s)
        } else {
            let text = serde_json::to_string(v).map_err(serde::ser::Error::custom)?;
            s.serialize_str(&text)
        }
    }

    pub fn deserialize<'de, T: DeserializeOwned, D: Deserializer<'de>>(
        d: D,
    ) -> Result<T, D::Error> {
        if d.is_human_readable() {
            T::deserialize(d)
        } else {
            // Parsed where it lies (in the file's bytes), not copied out first.
            d.deserialize_str(JsonText(std::marker::PhantomData))
        }
    }

    struct JsonText<T>(std::marker::PhantomData<T>);

    impl<T: DeserializeOwned> serde::de::Visitor<'_> for JsonText<T> {
        type Value = T;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("JSON text")
        }

        fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<T, E> {
            serde_json::from_str(text).map_err(E::custom)
        }
    }
}

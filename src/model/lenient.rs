//! Deserializers that accept what the real service sends, not only what the spec's tables
//! say: ids arrive as numbers or as numeric strings, numbers sometimes as strings, and a
//! missing or `null` field means its default.
//!
//! Each is a visitor over the value as it comes, never an intermediate `serde_json::Value`:
//! decoding a page of 500 campaigns goes through these a few dozen thousand times.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};

/// A scalar as the service may spell it, `None` for null.
enum Scalar {
    Int(i64),
    /// A whole number past `i64`: kept exact for text, refused as an integer.
    Big(u64),
    Float(f64),
    Text(String),
    Bool(bool),
    Null,
}

/// Reads a [`Scalar`]; with `in_object`, also the one field of an object, as
/// [`float_or_wrapped`] takes it (an object is otherwise refused, as serde refuses it).
struct ScalarVisitor {
    in_object: bool,
}

impl<'de> Visitor<'de> for ScalarVisitor {
    type Value = Scalar;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(if self.in_object {
            "a number, a numeric string, or an object of one such field"
        } else {
            "a number, a string, a boolean or null"
        })
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Scalar, E> {
        Ok(Scalar::Int(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Scalar, E> {
        Ok(i64::try_from(v).map_or(Scalar::Big(v), Scalar::Int))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Scalar, E> {
        Ok(Scalar::Float(v))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Scalar, E> {
        Ok(Scalar::Bool(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Scalar, E> {
        Ok(Scalar::Text(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Scalar, E> {
        Ok(Scalar::Text(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Scalar, E> {
        Ok(Scalar::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Scalar, E> {
        Ok(Scalar::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Scalar, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Scalar, A::Error> {
        if !self.in_object {
            return Err(de::Error::invalid_type(de::Unexpected::Map, &self));
        }
        let Some((_, Field(value))) = map.next_entry::<de::IgnoredAny, Field>()? else {
            return Err(de::Error::invalid_length(0, &self));
        };
        if map.next_key::<de::IgnoredAny>()?.is_some() {
            return Err(de::Error::invalid_length(2, &self));
        }
        Ok(value)
    }
}

/// The scalar an object of one field holds.
struct Field(Scalar);

impl<'de> serde::Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Field, D::Error> {
        scalar(d).map(Field)
    }
}

fn scalar<'de, D: Deserializer<'de>>(d: D) -> Result<Scalar, D::Error> {
    d.deserialize_any(ScalarVisitor { in_object: false })
}

/// The largest magnitude an `f64` holds every integer up to (2^53).
const EXACT_IN_F64: f64 = 9_007_199_254_740_992.0;

fn text_to_int(s: &str) -> Option<i64> {
    let s = s.trim();
    s.parse::<i64>().ok().or_else(|| {
        s.parse::<f64>()
            .ok()
            .filter(|f| f.is_finite() && f.abs() <= EXACT_IN_F64)
            .map(|f| f as i64)
    })
}

fn as_int<E: de::Error>(v: Scalar) -> Result<Option<i64>, E> {
    match v {
        Scalar::Int(i) => Ok(Some(i)),
        // Past `i64` (or past where a float holds every integer), any integer read from it
        // would be another number, an id of something else: refused, the read fails saying
        // where, rather than clamped.
        Scalar::Big(u) => Err(E::invalid_value(
            de::Unexpected::Unsigned(u),
            &"an integer within 64 bits",
        )),
        Scalar::Float(f) if !(f.is_finite() && f.abs() <= EXACT_IN_F64) => Err(E::invalid_value(
            de::Unexpected::Float(f),
            &"an integer within 2^53",
        )),
        Scalar::Float(f) => Ok(Some(f as i64)),
        Scalar::Bool(b) => Ok(Some(i64::from(b))),
        Scalar::Null => Ok(None),
        Scalar::Text(s) if s.is_empty() => Ok(None),
        Scalar::Text(s) => text_to_int(&s)
            .map(Some)
            .ok_or_else(|| E::invalid_value(de::Unexpected::Str(&s), &"an integer")),
    }
}

/// An integer sent as a number or a numeric string; `null` or missing is 0.
pub fn int<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    as_int(scalar(d)?).map(Option::unwrap_or_default)
}

/// An optional integer sent as a number or a numeric string (`""` is none).
pub fn opt_int<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    as_int(scalar(d)?)
}

/// A float sent as a number or a numeric string; `null` or missing is 0.
pub fn float<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    as_float(scalar(d)?)
}

fn as_float<E: de::Error>(v: Scalar) -> Result<f64, E> {
    match v {
        Scalar::Int(i) => Ok(i as f64),
        Scalar::Big(u) => Ok(u as f64),
        Scalar::Float(f) => Ok(f),
        Scalar::Null => Ok(0.0),
        Scalar::Bool(b) => Err(E::invalid_type(de::Unexpected::Bool(b), &"a number")),
        Scalar::Text(s) => s
            .trim()
            .parse::<f64>()
            .map_err(|_| E::invalid_value(de::Unexpected::Str(&s), &"a number")),
    }
}

/// A number that may also arrive wrapped in an object of one field (the spec lists
/// `price_drop_threshold.value` as an Object: a database decimal such as
/// `{"$numberDecimal": "12.5"}`); `null` or missing is 0. Anything else fails the read.
pub fn float_or_wrapped<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    as_float(d.deserialize_any(ScalarVisitor { in_object: true })?)
}

fn as_text(v: Scalar) -> Option<String> {
    match v {
        Scalar::Text(s) => Some(s),
        Scalar::Int(i) => Some(i.to_string()),
        Scalar::Big(u) => Some(u.to_string()),
        // A whole number sent as a float (`12.0`) is the id `12`.
        Scalar::Float(f) if f.fract() == 0.0 && f.abs() <= EXACT_IN_F64 => {
            Some((f as i64).to_string())
        }
        Scalar::Float(f) => {
            Some(serde_json::Number::from_f64(f).map_or_else(|| f.to_string(), |n| n.to_string()))
        }
        Scalar::Bool(b) => Some(b.to_string()),
        Scalar::Null => None,
    }
}

/// A string that may arrive as a number; `null` or missing is empty.
pub fn string<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(as_text(scalar(d)?).unwrap_or_default())
}

/// An optional string that may arrive as a number.
pub fn opt_string<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(as_text(scalar(d)?))
}

/// A list of ids, each a string or an integer (segment ids are numeric strings in answers;
/// callers and hand-written bodies send either). Anything else is refused.
pub fn ids<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    struct Id(String);
    impl<'de> serde::Deserialize<'de> for Id {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Id, D::Error> {
            match scalar(d)? {
                Scalar::Text(s) => Ok(Id(s)),
                Scalar::Int(i) => Ok(Id(i.to_string())),
                Scalar::Big(u) => Ok(Id(u.to_string())),
                _ => Err(de::Error::custom("expected an id: a string or an integer")),
            }
        }
    }
    let ids: Vec<Id> = serde::Deserialize::deserialize(d)?;
    Ok(ids.into_iter().map(|Id(s)| s).collect())
}

/// [`ids`] for a list that may be left out: `null` is left out (`None`); a list, even an
/// empty one, is `Some`.
pub fn opt_ids<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    struct Ids(Vec<String>);
    impl<'de> serde::Deserialize<'de> for Ids {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Ids, D::Error> {
            ids(d).map(Ids)
        }
    }
    Ok(<Option<Ids> as serde::Deserialize>::deserialize(d)?.map(|Ids(v)| v))
}

/// `T`, or its default for `null`: a response's `null` list or object reads as an absent
/// one does (empty), rather than failing the whole read, a page of a list included.
pub fn or_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: serde::Deserialize<'de> + Default,
{
    Ok(<Option<T> as serde::Deserialize>::deserialize(d)?.unwrap_or_default())
}

/// A field type with a lenient reader: what `#[lenient]` on a field of a `model!` struct
/// reads the field with (numbers and strings as above, a nested model or list as
/// [`or_default`]), and whether the field is left out when written (an absent optional
/// one only).
pub trait Lenient: Sized {
    fn read<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error>;

    fn absent(&self) -> bool {
        false
    }
}

/// [`Lenient`] for each type by its reader above; an optional one is absent when `None`.
macro_rules! read_with {
    ($($ty:ty => $read:ident),*; optional: $($opt:ty => $opt_read:ident),*) => {
        $(impl Lenient for $ty {
            fn read<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $read(d)
            }
        })*
        $(impl Lenient for Option<$opt> {
            fn read<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $opt_read(d)
            }

            fn absent(&self) -> bool {
                self.is_none()
            }
        })*
    };
}

read_with!(i64 => int, f64 => float, String => string; optional: i64 => opt_int, String => opt_string);

impl<T: serde::de::DeserializeOwned> Lenient for Vec<T> {
    fn read<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<T>, D::Error> {
        or_default(d)
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    #[derive(Deserialize, Debug, PartialEq)]
    struct T {
        #[serde(default, deserialize_with = "super::int")]
        i: i64,
        #[serde(default, deserialize_with = "super::opt_int")]
        oi: Option<i64>,
        #[serde(default, deserialize_with = "super::float")]
        f: f64,
        #[serde(default, deserialize_with = "super::string")]
        s: String,
        #[serde(default, deserialize_with = "super::opt_string")]
        os: Option<String>,
    }

    #[derive(Deserialize, Debug, PartialEq)]
    struct W {
        #[serde(default, deserialize_with = "super::float_or_wrapped")]
        v: f64,
    }

    #[test]
    fn a_number_reads_bare_or_wrapped_in_one_field() {
        let read = |s: &str| serde_json::from_str::<W>(s).map(|w| w.v);
        assert_eq!(read(r#"{"v":10}"#).unwrap(), 10.0);
        assert_eq!(read(r#"{"v":"12.5"}"#).unwrap(), 12.5);
        assert_eq!(read(r#"{"v":{"$numberDecimal":"12.5"}}"#).unwrap(), 12.5);
        assert_eq!(read(r#"{"v":{"value":7}}"#).unwrap(), 7.0);
        assert_eq!(read(r#"{"v":null}"#).unwrap(), 0.0);
        assert_eq!(read("{}").unwrap(), 0.0);
        assert!(read(r#"{"v":{}}"#).is_err());
        assert!(read(r#"{"v":{"a":1,"b":2}}"#).is_err());
        assert!(read(r#"{"v":{"a":"x"}}"#).is_err());
        assert!(read(r#"{"v":[1]}"#).is_err());
        assert!(read(r#"{"v":{"a":{"b":1}}}"#).is_err());
    }

    #[test]
    fn accepts_what_the_service_sends() {
        let t: T = serde_json::from_str(r#"{"i":"12","oi":"","f":"2.5","s":7,"os":null}"#).unwrap();
        assert_eq!(
            t,
            T {
                i: 12,
                oi: None,
                f: 2.5,
                s: "7".into(),
                os: None
            }
        );
        let t: T = serde_json::from_str(r#"{"i":3.0,"oi":4,"f":1,"s":"x","os":1.5}"#).unwrap();
        assert_eq!(
            (t.i, t.oi, t.f, t.os.as_deref()),
            (3, Some(4), 1.0, Some("1.5"))
        );
        let t: T = serde_json::from_str(r#"{"i":null}"#).unwrap();
        assert_eq!((t.i, t.s.as_str()), (0, ""));
        assert!(serde_json::from_str::<T>(r#"{"i":"abc"}"#).is_err());
        assert!(serde_json::from_str::<T>(r#"{"i":[1]}"#).is_err());
        // Only `float_or_wrapped` reads an object's field; elsewhere an object is refused.
        let refused = serde_json::from_str::<T>(r#"{"f":{"a":1}}"#).unwrap_err();
        assert!(refused
            .to_string()
            .starts_with("invalid type: map, expected a number, a string"));
    }
}

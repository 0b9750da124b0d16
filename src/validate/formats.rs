//! The spec's text formats: dates, times, `valid_from_utc`, ISO 8601 instants and web URLs,
//! each read exactly as the service reads it (chrono alone is looser).

use super::violation::FIELD;
use crate::message;
use chrono::{Datelike, NaiveDate, NaiveDateTime, NaiveTime, Timelike};

use super::limits::VALID_FROM_FORMAT;
use super::violation::{Check, Violation};

/// Whether `s` has exactly the shape of `pattern`, where `D` is one ASCII digit and every
/// other character stands for itself. chrono alone is looser than the spec's formats: it
/// takes signed years of any width, one-digit fields and spaces before a number.
pub(super) fn shaped(s: &str, pattern: &str) -> bool {
    s.len() == pattern.len()
        && s.bytes().zip(pattern.bytes()).all(|(c, p)| match p {
            b'D' => c.is_ascii_digit(),
            _ => c == p,
        })
}

/// A `YYYY-MM-DD` date.
pub fn date(field: &str, s: &str) -> Check<NaiveDate> {
    let s = s.trim();
    Some(s)
        .filter(|s| shaped(s, "DDDD-DD-DD"))
        .and_then(|s| NaiveDate::parse_from_str(s, "%Y-%m-%d").ok())
        .filter(|d| d.year() >= 1)
        .ok_or_else(|| {
            Violation::new(
                field,
                message![FIELD, " must be a date in YYYY-MM-DD format"],
            )
        })
}

pub(super) fn is_web_url(s: &str) -> bool {
    reqwest::Url::parse(s)
        .map(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
        .unwrap_or(false)
}

/// `HH:mm:ss`, two digits each, seconds 00-59 (chrono alone would take a leap second `60`).
pub(super) fn is_time(s: &str) -> bool {
    shaped(s, "DD:DD:DD")
        && NaiveTime::parse_from_str(s, "%H:%M:%S").is_ok_and(|t| t.nanosecond() < 1_000_000_000)
}

/// `valid_from_utc` of 4.13: exactly `YYYY-MM-DD hh:mm:ss`, a real date, hour 00-23, minute
/// and second 00-59.
pub fn valid_from(s: &str) -> bool {
    shaped(s, "DDDD-DD-DD DD:DD:DD")
        && NaiveDateTime::parse_from_str(s, VALID_FROM_FORMAT)
            .is_ok_and(|t| t.nanosecond() < 1_000_000_000)
}

/// An ISO 8601 date or date-time (`from_date`, `to_date`).
pub fn iso_date_or_datetime(s: &str) -> bool {
    iso_instant(s).is_some()
}

/// The instant of an ISO 8601 date or date-time, in the extended format with two-digit
/// fields: `YYYY-MM-DD` (its midnight UTC), or `YYYY-MM-DDThh:mm:ss` (`T` or a space), with
/// an optional fraction of a second and an optional `Z` or `+hh:mm` / `-hh:mm` offset (none
/// is UTC). `None` for anything else, a date that does not exist included.
pub fn iso_instant(s: &str) -> Option<chrono::DateTime<chrono::Utc>> {
    let s = s.trim();
    if !s.is_ascii() || s.len() < 10 || !shaped(&s[..10], "DDDD-DD-DD") {
        return None;
    }
    let date = NaiveDate::parse_from_str(&s[..10], "%Y-%m-%d").ok()?;
    if s.len() == 10 {
        return date.and_hms_opt(0, 0, 0).map(|t| t.and_utc());
    }
    // RFC 3339 allows a lowercase `t` and `z`, as chrono's parser did before.
    if s.len() < 19
        || !matches!(s.as_bytes()[10], b'T' | b't' | b' ')
        || !shaped(&s[11..19], "DD:DD:DD")
    {
        return None;
    }
    let time = NaiveTime::parse_from_str(&s[11..19], "%H:%M:%S")
        .ok()
        .filter(|t| t.nanosecond() < 1_000_000_000)?;
    let mut rest = &s[19..];
    let mut nanos = 0u32;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        // Nanoseconds from the first nine digits; finer ones are dropped.
        let mut n: u32 = 0;
        for (i, b) in frac
            .bytes()
            .take(9)
            .take_while(u8::is_ascii_digit)
            .enumerate()
        {
            n += u32::from(b - b'0') * 10u32.pow(8 - i as u32);
        }
        nanos = n;
        rest = &frac[digits..];
    }
    let offset_seconds: i32 = match rest {
        "" | "Z" | "z" => 0,
        _ if shaped(rest, "+DD:DD") || shaped(rest, "-DD:DD") => {
            let hours: i32 = rest[1..3].parse().ok()?;
            let minutes: i32 = rest[4..6].parse().ok()?;
            if hours > 23 || minutes > 59 {
                return None;
            }
            let sign = if rest.starts_with('-') { -1 } else { 1 };
            sign * (hours * 3600 + minutes * 60)
        }
        _ => return None,
    };
    let local = date.and_time(time.with_nanosecond(nanos)?);
    local
        .checked_sub_signed(chrono::Duration::seconds(i64::from(offset_seconds)))
        .map(|t| t.and_utc())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_times_have_exactly_the_spec_shapes() {
        assert!(date("f", "2024-01-05").is_ok());
        for bad in [
            "2024-01- 5",
            "2024- 1-05",
            "2024-1-05",
            "+2024-01-05",
            "02024-01-05",
        ] {
            assert!(date("f", bad).is_err(), "{bad}");
        }
        for bad in [
            "2030-1-2 3:4:5",
            "+2030-01-02 03:04:05",
            "2030-01-02  03:04:05",
            "2030-01-02 3:04:05",
            "2030-02-30 03:04:05",
        ] {
            assert!(!valid_from(bad), "{bad}");
        }
        assert!(!is_time("1:2:3") && !is_time("01:02") && !is_time(" 1:02:03"));
        for good in [
            "2024-01-01",
            "2024-01-01T10:00:00",
            "2024-01-01 10:00:00",
            "2024-01-01T10:00:00Z",
            "2024-01-01T10:00:00.123456+02:00",
        ] {
            assert!(iso_date_or_datetime(good), "{good}");
        }
        for bad in [
            "2024-1-1",
            "2024-01-1",
            "+2024-01-01",
            "2024-01-01T1:00:00",
            "2024-01-01T10:00",
            "2024-01-01T10:00:00.",
            "2024-01-01T10:00:00+2",
            "2024-02-30",
            "2024-01-01T10:00:00é",
        ] {
            assert!(!iso_date_or_datetime(bad), "{bad}");
        }
        assert_eq!(
            iso_instant("2024-01-01T10:00:00.5+02:00").map(|t| t.to_rfc3339()),
            Some("2024-01-01T08:00:00.500+00:00".to_string())
        );
    }

    #[test]
    fn times_have_no_leap_second() {
        assert!(valid_from("2030-01-01 23:59:59"));
        assert!(!valid_from("2030-01-01 23:59:60"));
        assert!(is_time("10:00:59"));
        assert!(!is_time("10:00:60"));
    }
}

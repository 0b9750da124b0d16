//! When the next notification of a series is due (2.2, 2.8 `schedule_options`), in the
//! site's time zone, and a subscriber's series of a drip or a triggered run put in the
//! schedule by it.

use std::sync::Arc;

use chrono::{DateTime, Datelike, Duration, FixedOffset, NaiveTime, TimeZone, Utc};

use crate::emulator::state::{Content, Scheduled, Site, Source};
use crate::model::ScheduleOptions;

/// One notification of a campaign's series, as it is scheduled.
pub(super) struct Step<'a> {
    pub notification_id: i64,
    /// Its wait after the one before (the first one's after the series starts).
    pub wait: &'a ScheduleOptions,
    pub expiry_seconds: i64,
    pub content: Content,
}

/// Schedules one subscriber's series of `source`'s campaign `source_id`, starting `now`,
/// each step due after the one before by its wait; `run` is the triggered run the sends
/// belong to (0 for a drip's).
pub(super) fn schedule_series<'a>(
    site: &mut Site,
    (source, source_id, run): (Source, i64, u64),
    hash: &str,
    now: DateTime<Utc>,
    steps: impl IntoIterator<Item = Step<'a>>,
) {
    let mut due = now;
    for step in steps {
        due = next_due(due, step.wait, site.timezone);
        site.engine.schedule(Scheduled {
            due_at: due,
            subscriber_hash: Some(hash.to_string()),
            source,
            source_id,
            notification_id: step.notification_id,
            content: Arc::new(step.content),
            expiry_seconds: step.expiry_seconds,
            run,
        });
    }
}

fn at_time(s: &ScheduleOptions) -> NaiveTime {
    s.at.as_deref()
        .and_then(|a| NaiveTime::parse_from_str(a, "%H:%M:%S").ok())
        .unwrap_or(NaiveTime::MIN)
}

/// The due time of a notification whose predecessor was due at `prev`:
/// - `rightaway`: at `prev` (the series' start for the first one);
/// - `after N minutes`: N minutes after `prev`;
/// - `after N days at T`: on the local date N days after `prev`'s, at T; never before
///   `prev` (0 days at a time already past goes out at once, as an overdue broadcast does,
///   never back-dated to before the subscriber or the previous message);
/// - `after dow D at T`: the first weekday D at T strictly after `prev` (0 is Sunday).
pub fn next_due(prev: DateTime<Utc>, s: &ScheduleOptions, tz: FixedOffset) -> DateTime<Utc> {
    let value = s.value.unwrap_or(0);
    match (s.r#type.as_str(), s.unit.as_deref()) {
        // Checked: a wait past the calendar's end means never (the validation bounds the
        // waits; this keeps the engine from panicking whatever reaches it).
        ("after", Some("minutes")) => Duration::try_minutes(value)
            .and_then(|d| prev.checked_add_signed(d))
            .unwrap_or(DateTime::<Utc>::MAX_UTC),
        ("after", Some("days")) => {
            let local = prev.with_timezone(&tz);
            match Duration::try_days(value).and_then(|d| local.date_naive().checked_add_signed(d)) {
                Some(date) => local_to_utc(tz, date.and_time(at_time(s))).max(prev),
                None => DateTime::<Utc>::MAX_UTC,
            }
        }
        ("after", Some("dow")) => {
            let local = prev.with_timezone(&tz);
            let target = value.rem_euclid(7) as u32;
            let mut date = local.date_naive();
            for _ in 0..8 {
                let candidate = local_to_utc(tz, date.and_time(at_time(s)));
                if date.weekday().num_days_from_sunday() == target && candidate > prev {
                    return candidate;
                }
                match date.succ_opt() {
                    Some(next) => date = next,
                    None => return DateTime::<Utc>::MAX_UTC,
                }
            }
            prev
        }
        _ => prev,
    }
}

pub fn local_to_utc(tz: FixedOffset, local: chrono::NaiveDateTime) -> DateTime<Utc> {
    tz.from_local_datetime(&local)
        .single()
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_else(|| local.and_utc())
}

/// A UTC offset like `+05:30`, `-08:00`, `Z` or `UTC`.
pub fn parse_offset(s: &str) -> Option<FixedOffset> {
    let s = s.trim();
    if s.eq_ignore_ascii_case("z") || s.eq_ignore_ascii_case("utc") {
        return FixedOffset::east_opt(0);
    }
    let s = s.strip_prefix("UTC").unwrap_or(s);
    let (sign, rest) = match s.as_bytes().first()? {
        b'+' => (1, &s[1..]),
        b'-' => (-1, &s[1..]),
        _ => return None,
    };
    let (h, m) = rest.split_once(':').unwrap_or((rest, "0"));
    let digits = |t: &str| !t.is_empty() && t.len() <= 2 && t.bytes().all(|b| b.is_ascii_digit());
    if !digits(h) || !digits(m) {
        return None;
    }
    // Within -14:00 and +14:00 (real offsets run from -12:00 to +14:00), minutes below 60.
    let (h, m) = (h.parse::<i32>().ok()?, m.parse::<i32>().ok()?);
    if m >= 60 || h * 60 + m > 14 * 60 {
        return None;
    }
    FixedOffset::east_opt(sign * (h * 3600 + m * 60))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `after {value} {unit}` at `at`.
    fn after(value: i64, unit: &str, at: &str) -> ScheduleOptions {
        ScheduleOptions {
            r#type: "after".into(),
            value: Some(value),
            unit: Some(unit.into()),
            at: Some(at.into()),
        }
    }

    /// 2026-03-`day` at `hour`:`minute` UTC (2026-03-02 is a Monday).
    fn march(day: u32, hour: u32, minute: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 3, day, hour, minute, 0).unwrap()
    }

    #[test]
    fn days_land_on_the_local_time() {
        let tz = FixedOffset::east_opt(5 * 3600 + 1800).unwrap();
        // 2026-03-02 20:00 UTC is 2026-03-03 01:30 local; one day later at 09:00 local is
        // 2026-03-04 09:00 local = 03:30 UTC.
        let due = next_due(march(2, 20, 0), &after(1, "days", "09:00:00"), tz);
        assert_eq!(due, march(4, 3, 30));
    }

    #[test]
    fn days_never_go_back_in_time() {
        let utc = FixedOffset::east_opt(0).unwrap();
        let prev = march(2, 4, 10);
        assert_eq!(next_due(prev, &after(0, "days", "00:00:01"), utc), prev);
        let later = next_due(prev, &after(0, "days", "23:00:00"), utc);
        assert_eq!(later, march(2, 23, 0));
    }

    #[test]
    fn dow_is_strictly_after() {
        let utc = FixedOffset::east_opt(0).unwrap();
        let monday_noon = march(2, 12, 0);
        let next_monday = next_due(monday_noon, &after(1, "dow", "12:00:00"), utc);
        assert_eq!(next_monday, march(9, 12, 0));
        let same_day = next_due(monday_noon, &after(1, "dow", "13:00:00"), utc);
        assert_eq!(same_day, march(2, 13, 0));
    }

    #[test]
    fn offsets_parse() {
        assert_eq!(parse_offset("+05:30"), FixedOffset::east_opt(19800));
        assert_eq!(parse_offset("-08:00"), FixedOffset::east_opt(-28800));
        assert_eq!(parse_offset("UTC"), FixedOffset::east_opt(0));
        assert_eq!(parse_offset("nope"), None);
        // nothing out of range wraps into another offset, and blank is no offset
        for bad in ["+05:60", "+05:99", "+15:00", "", " ", "+5:3x", "+123"] {
            assert_eq!(parse_offset(bad), None, "{bad:?}");
        }
        assert_eq!(parse_offset("+14:00"), FixedOffset::east_opt(50400));
    }
}

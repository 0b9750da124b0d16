//! What every campaign shares, drips (4.3) and the price-drop and inventory alerts (4.12)
//! alike: list paging (4.2, 4.4), analytics ranges (4.1, 4.5) and the pieces of a campaign
//! notification (2.2, 2.6, 2.8): its buttons, its expiry and its place in the series.

use super::violation::{field, FIELD};
use crate::message;
use chrono::NaiveDate;

use crate::model::{Action, ScheduleOptions, UtmError};

use super::formats::{date, is_time};
use super::limits::{
    ACTIONS_MAX, CAMPAIGN_EXPIRY_MAX_SECONDS, LIMIT_DEFAULT, LIMIT_MAX, LIMIT_MIN, PAGE_DEFAULT,
    PAGE_MIN, SCHEDULE_MAX_DAYS, SCHEDULE_MAX_MINUTES,
};
use super::violation::{required, Check, Violation};

/// Why `utm_params` is refused, naming the field.
pub fn utm_refused(e: UtmError) -> Violation {
    match e {
        UtmError::NotAnObject => {
            Violation::new("utm_params", message![FIELD, " must be an object"])
        }
        UtmError::Missing(key) => {
            Violation::new("utm_params", message![FIELD, format!(".{key} is required")])
        }
    }
}

/// `page` of a campaign list: at least 1 and no maximum (a page past the last is empty).
pub fn page(page: Option<i64>) -> Check<i64> {
    match page {
        None => Ok(i64::from(PAGE_DEFAULT)),
        Some(p) if p >= PAGE_MIN => Ok(p),
        Some(_) => Err(Violation::new(
            "page",
            message![
                FIELD,
                format!(" must be greater than or equal to {PAGE_MIN}")
            ],
        )),
    }
}

pub fn limit(limit: Option<i64>) -> Check<u32> {
    match limit {
        None => Ok(LIMIT_DEFAULT),
        Some(l) if (LIMIT_MIN..=LIMIT_MAX).contains(&l) => Ok(l as u32),
        Some(_) => Err(Violation::new(
            "limit",
            message![
                FIELD,
                format!(" must be between {LIMIT_MIN} and {LIMIT_MAX}")
            ],
        )),
    }
}

/// `analytics_start_at` / `analytics_end_at`: each optional, start not after end.
pub fn analytics_range(
    start: Option<&str>,
    end: Option<&str>,
) -> Check<(Option<NaiveDate>, Option<NaiveDate>)> {
    let s = start.map(|s| date("analytics_start_at", s)).transpose()?;
    let e = end.map(|e| date("analytics_end_at", e)).transpose()?;
    if let (Some(s), Some(e)) = (s, e) {
        if s > e {
            return Err(Violation::new(
                "analytics_start_at",
                message![FIELD, " must not be after ", field("analytics_end_at")],
            ));
        }
    }
    Ok((s, e))
}

/// Buttons: at most two, each with a label and a URL.
pub fn actions(prefix: &str, actions: &[Action]) -> Check {
    if actions.len() > ACTIONS_MAX {
        return Err(Violation::new(
            format!("{prefix}actions"),
            format!("at most {ACTIONS_MAX} actions are allowed"),
        ));
    }
    for (i, a) in actions.iter().enumerate() {
        required(
            &format!("{prefix}actions[{i}]."),
            &[("label", &a.label), ("url", &a.url)],
        )?;
    }
    Ok(())
}

/// `expiry` of a campaign notification, in seconds: 1 to 28 days.
pub fn campaign_expiry(field: &str, seconds: i64) -> Check {
    if !(1..=CAMPAIGN_EXPIRY_MAX_SECONDS).contains(&seconds) {
        return Err(Violation::new(
            field,
            format!("expiry must be between 1 and {CAMPAIGN_EXPIRY_MAX_SECONDS} seconds (28 days)"),
        ));
    }
    Ok(())
}

/// `schedule_options` of a campaign notification at `index` in its series.
pub fn schedule(prefix: &str, index: usize, s: &ScheduleOptions, allow_dow: bool) -> Check {
    let field = |f: &str| format!("{prefix}schedule_options.{f}");
    // `at` is required with days and dow; when sent with another unit it is not used, but
    // it is still checked rather than stored and echoed as it came. An empty one there is
    // simply absent (copied bodies often carry `"at": ""`).
    let at_used = matches!(s.unit.as_deref(), Some("days" | "dow"));
    if let Some(at) =
        s.at.as_deref()
            .filter(|at| at_used || !at.trim().is_empty())
    {
        if !is_time(at) {
            return Err(Violation::new(
                field("at"),
                "at must be a time in HH:mm:ss format",
            ));
        }
    }
    match s.r#type.as_str() {
        "rightaway" if index == 0 => return Ok(()),
        "rightaway" => {
            return Err(Violation::new(
                field("type"),
                "only the first notification may be rightaway; later ones are after",
            ))
        }
        "after" => {}
        _ => {
            return Err(Violation::new(
                field("type"),
                "type must be rightaway or after",
            ))
        }
    }
    let value = s
        .value
        .ok_or_else(|| Violation::new(field("value"), "value is required when type is after"))?;
    let unit = s
        .unit
        .as_deref()
        .ok_or_else(|| Violation::new(field("unit"), "unit is required when type is after"))?;
    match unit {
        "minutes" | "days" if value < 0 => {
            return Err(Violation::new(field("value"), "value must not be negative"))
        }
        "minutes" if value > SCHEDULE_MAX_MINUTES => {
            return Err(Violation::new(
                field("value"),
                format!("value must be at most {SCHEDULE_MAX_MINUTES} minutes (a year)"),
            ))
        }
        "days" if value > SCHEDULE_MAX_DAYS => {
            return Err(Violation::new(
                field("value"),
                format!("value must be at most {SCHEDULE_MAX_DAYS} days (a year)"),
            ))
        }
        "minutes" | "days" => {}
        "dow" if allow_dow => {
            if !(0..=6).contains(&value) {
                return Err(Violation::new(
                    field("value"),
                    "value must be a weekday from 0 (Sunday) to 6 (Saturday) when unit is dow",
                ));
            }
        }
        _ => {
            let allowed = if allow_dow {
                "minutes, days or dow"
            } else {
                "minutes or days"
            };
            return Err(Violation::new(
                field("unit"),
                format!("unit must be {allowed}"),
            ));
        }
    }
    if unit != "minutes" {
        match s.at.as_deref() {
            Some(at) if is_time(at) => {}
            Some(_) => {
                return Err(Violation::new(
                    field("at"),
                    "at must be a time in HH:mm:ss format",
                ))
            }
            None => {
                return Err(Violation::new(
                    field("at"),
                    format!("at is required when unit is {unit}"),
                ))
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_inclusive() {
        assert_eq!(limit(Some(500)), Ok(500));
        assert!(limit(Some(501)).is_err());
        assert!(limit(Some(0)).is_err());
        assert_eq!(page(None), Ok(1));
        assert!(page(Some(0)).is_err());
    }
}

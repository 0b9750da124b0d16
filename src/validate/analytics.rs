//! Account analytics: the summary's dates and grouping (4.10) and the subscriber
//! dimensions (4.11).

use super::violation::{field, FIELD};
use crate::message;
use chrono::NaiveDate;

use super::formats::date;
use super::limits::ANALYTICS_MAX_DAYS;
use super::violation::{Check, Violation};

/// `group_by` of 4.10. The spec shows `day`; weeks and months are named in prose, so the
/// singular and plural of each are accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupBy {
    Day,
    Week,
    Month,
}

impl GroupBy {
    pub fn parse(s: &str) -> Option<GroupBy> {
        match s.trim().to_ascii_lowercase().as_str() {
            "day" | "days" | "daily" => Some(GroupBy::Day),
            "week" | "weeks" | "weekly" => Some(GroupBy::Week),
            "month" | "months" | "monthly" => Some(GroupBy::Month),
            _ => None,
        }
    }
}

pub fn summary_query(
    from: Option<&str>,
    to: Option<&str>,
    group_by: Option<&str>,
) -> Check<(NaiveDate, NaiveDate, GroupBy)> {
    let from = from
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| Violation::new("from", message!["The ", FIELD, " field is required."]))?;
    let to = to
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| Violation::new("to", message!["The ", FIELD, " field is required."]))?;
    let from = date("from", from)?;
    let to = date("to", to)?;
    if from > to {
        return Err(Violation::new(
            "from",
            message![FIELD, " must not be after ", field("to")],
        ));
    }
    if (to - from).num_days() > ANALYTICS_MAX_DAYS {
        return Err(Violation::new(
            "to",
            message![
                "the range ",
                field("from"),
                "..",
                FIELD,
                format!(" must be at most {ANALYTICS_MAX_DAYS} days")
            ],
        ));
    }
    let group_by = group_by.filter(|s| !s.trim().is_empty()).ok_or_else(|| {
        Violation::new("group_by", message!["The ", FIELD, " field is required."])
    })?;
    let g = GroupBy::parse(group_by).ok_or_else(|| {
        Violation::new(
            "group_by",
            message![FIELD, " must be one of day, week, month"],
        )
    })?;
    Ok((from, to, g))
}

/// The dimensions of 4.11.
pub const SUBSCRIBER_DIMENSIONS: [&str; 6] = [
    "country",
    "state",
    "city",
    "device",
    "device_type",
    "platform",
];
/// What 4.11 returns when `type` is omitted ("all available dimensions"); platform only
/// when requested, as 2.13 says.
pub const DEFAULT_SUBSCRIBER_DIMENSIONS: [&str; 5] =
    ["city", "country", "device", "device_type", "state"];

pub fn subscriber_dimensions(types: Option<&str>) -> Check<Vec<String>> {
    let Some(types) = types.filter(|t| !t.trim().is_empty()) else {
        return Ok(DEFAULT_SUBSCRIBER_DIMENSIONS.map(String::from).to_vec());
    };
    let mut out = Vec::new();
    for t in types.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        if !SUBSCRIBER_DIMENSIONS.contains(&t) {
            return Err(Violation::new(
                "type",
                message![
                    FIELD,
                    format!(
                        " lists {t:?}, which is not one of: {}",
                        SUBSCRIBER_DIMENSIONS.join(", ")
                    )
                ],
            ));
        }
        if !out.iter().any(|o: &String| o == t) {
            out.push(t.to_string());
        }
    }
    Ok(out)
}

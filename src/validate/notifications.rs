//! Broadcasts (4.13): the Laravel-style checks of the broadcast endpoint, with its title and
//! message lengths per type, its audience filters and its buttons.

use super::violation::{Message, FIELD};
use crate::message;
use crate::model::{Action, NewNotification, NotificationType};

use super::formats::{is_web_url, iso_date_or_datetime, valid_from};
use super::limits::{
    ACTIONS_MAX, BROADCAST_EXPIRY_MAX_MINUTES, BROADCAST_HASHES_MAX, BROADCAST_PROFILE_IDS_MAX,
    MESSAGE_MAX, MESSAGE_MAX_SCHEDULED, TITLE_MAX, TITLE_MAX_SCHEDULED,
};
use super::segments::segment_ids;
use super::violation::{Check, Violation};

pub const TITLE_REQUIRED: &str = "The Title field is required.";
pub const MESSAGE_REQUIRED: &str = "The Message field is required.";
pub const URL_REQUIRED: &str = "The URL field is required.";
pub const NO_PROFILE_SUBSCRIBERS: &str = "No Subcribers Found for the given profile_id";
pub const ATTRIBUTE_OPS: [&str; 10] = [
    "eq",
    "ne",
    "lt",
    "lte",
    "gt",
    "gte",
    "in",
    "nin",
    "exists",
    "not_exists",
];

/// What an include list given empty is told: it would be no filter, which sends to
/// everyone.
pub fn empty_filter() -> Message {
    message![
        FIELD,
        " is empty, which would send to everyone: leave it out for no filter"
    ]
}

/// How far behind UTC a site's clock can be: the westernmost zone in use is UTC−12, so a
/// site-local time more than this before UTC's now has passed in every zone.
pub const SCHEDULE_PAST_HOURS: i64 = 12;
/// How far ahead a broadcast may be scheduled: ten years. A year typed wrong lands decades
/// ahead (2062 for 2026, 2999), where a plan, or a test's emulator clock travelled to a later
/// year, lands within a few.
pub const SCHEDULE_AHEAD_DAYS: i64 = 3653;

/// Whether a `later` broadcast's time is one somebody meant, at `now`: the service reads
/// `valid_from_utc` in the site's zone and sends a time already passed at once, to the whole
/// audience (a year typed wrong in a form), so a time that has passed in every zone is
/// refused, as is one more than [`SCHEDULE_AHEAD_DAYS`] ahead. The client's check before
/// sending, which a caller may skip to send a late one on purpose; the service has none.
pub fn broadcast_schedule(n: &NewNotification, now: chrono::DateTime<chrono::Utc>) -> Check {
    let Some(v) = present(&n.valid_from_utc) else {
        return Ok(());
    };
    if n.notification_type != NotificationType::Later {
        return Ok(());
    }
    let Ok(at) = chrono::NaiveDateTime::parse_from_str(v, "%Y-%m-%d %H:%M:%S") else {
        return Ok(()); // its format is `broadcast`'s to refuse
    };
    let now = now.naive_utc();
    let shown = now.format("%Y-%m-%d %H:%M:%S");
    if at < now - chrono::Duration::hours(SCHEDULE_PAST_HOURS) {
        return Err(Violation::new(
            "valid_from_utc",
            message![
                FIELD,
                format!(
                    " {v} has passed in every time zone (it is more than {SCHEDULE_PAST_HOURS} \
                     hours before {shown} UTC, and no site's clock is further behind UTC): the \
                     service would send the broadcast at once, to its whole audience; to send \
                     it now on purpose, pass send_late=True"
                )
            ],
        ));
    }
    if at > now + chrono::Duration::days(SCHEDULE_AHEAD_DAYS) {
        return Err(Violation::new(
            "valid_from_utc",
            message![
                FIELD,
                format!(
                    " {v} is more than ten years ahead ({SCHEDULE_AHEAD_DAYS} days after \
                     {shown} UTC): check the year; a broadcast can be scheduled at most that \
                     far ahead"
                )
            ],
        ));
    }
    Ok(())
}

fn present(s: &Option<String>) -> Option<&str> {
    s.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

pub fn broadcast(n: &NewNotification) -> Check {
    let title = present(&n.notification_title)
        .ok_or_else(|| Violation::new("notification_title", TITLE_REQUIRED))?;
    let message = present(&n.notification_message)
        .ok_or_else(|| Violation::new("notification_message", MESSAGE_REQUIRED))?;
    let url = present(&n.notification_url)
        .ok_or_else(|| Violation::new("notification_url", URL_REQUIRED))?;
    let (title_max, message_max) = match n.notification_type {
        NotificationType::Later => (TITLE_MAX_SCHEDULED, MESSAGE_MAX_SCHEDULED),
        _ => (TITLE_MAX, MESSAGE_MAX),
    };
    if title.chars().count() > title_max {
        return Err(Violation::new(
            "notification_title",
            format!("The Title may not be greater than {title_max} characters."),
        ));
    }
    if message.chars().count() > message_max {
        return Err(Violation::new(
            "notification_message",
            format!("The Message may not be greater than {message_max} characters."),
        ));
    }
    if !is_web_url(url) {
        return Err(Violation::new(
            "notification_url",
            "The URL format is invalid.",
        ));
    }
    for (name, v) in [
        ("image_url", &n.image_url),
        ("big_image_url", &n.big_image_url),
    ] {
        if let Some(u) = present(v) {
            if !is_web_url(u) {
                return Err(Violation::new(
                    name,
                    message!["The ", FIELD, " format is invalid."],
                ));
            }
        }
    }
    match (n.notification_type, present(&n.valid_from_utc)) {
        (NotificationType::Later, None) => {
            return Err(Violation::new(
                "valid_from_utc",
                message![
                    "The ",
                    FIELD,
                    " field is required when notification type is later."
                ],
            ))
        }
        (_, Some(v)) if !valid_from(v) => {
            return Err(Violation::new(
                "valid_from_utc",
                message![
                    "The ",
                    FIELD,
                    " does not match the format Y-m-d H:i:s (YYYY-MM-DD hh:mm:ss, 24-hour clock)."
                ],
            ))
        }
        _ => {}
    }
    for (name, list) in n.lists() {
        let Some(list) = list else { continue };
        // An empty filter is no filter, which sends to everyone; an empty exclusion
        // excludes no one, which is what it says.
        if list.is_empty() && !name.starts_with("exclude_") {
            return Err(Violation::new(name, empty_filter()));
        }
        // An empty entry would be dropped on the way and widen the audience: refuse it.
        if list.iter().any(|v| v.trim().is_empty()) {
            return Err(Violation::new(
                name,
                message!["The ", FIELD, " entries must not be empty."],
            ));
        }
    }
    let given = |list: &Option<Vec<String>>| list.as_deref().unwrap_or_default().len();
    segment_ids(
        "include_segments",
        n.include_segments.as_deref().unwrap_or_default(),
    )?;
    segment_ids(
        "exclude_segments",
        n.exclude_segments.as_deref().unwrap_or_default(),
    )?;
    for (name, list, max) in [
        ("profile_id", &n.profile_id, BROADCAST_PROFILE_IDS_MAX),
        ("subscriber_hash", &n.subscriber_hash, BROADCAST_HASHES_MAX),
    ] {
        if given(list) > max {
            let rest = format!(" may not have more than {max} items.");
            return Err(Violation::new(name, message!["The ", FIELD, rest]));
        }
    }
    for (name, v) in [("from_date", &n.from_date), ("to_date", &n.to_date)] {
        if let Some(d) = present(v) {
            if !iso_date_or_datetime(d) {
                return Err(Violation::new(
                    name,
                    message!["The ", FIELD, " is not a valid date."],
                ));
            }
        }
    }
    if let Some(ri) = n.require_interaction {
        if ri != 0 && ri != 1 {
            return Err(Violation::new(
                "require_interaction",
                message!["The ", FIELD, " must be 0 or 1."],
            ));
        }
    }
    if let Some(e) = n.notification_expiry {
        if !(1..=BROADCAST_EXPIRY_MAX_MINUTES).contains(&e) {
            return Err(Violation::new(
                "notification_expiry",
                message![
                    "The ",
                    FIELD,
                    format!(
                        " must be between 1 and {BROADCAST_EXPIRY_MAX_MINUTES} minutes (28 days)."
                    )
                ],
            ));
        }
    }
    if let Some(groups) = &n.attributes {
        // No group, or a group without rules, would select everyone: refused like any
        // filter that could silently widen a broadcast.
        if groups.is_empty() {
            return Err(Violation::new(
                "attributes",
                message!["The ", FIELD, " must contain at least one rule group."],
            ));
        }
        if groups.iter().any(Vec::is_empty) {
            return Err(Violation::new(
                "attributes",
                message!["The ", FIELD, " rule groups must not be empty."],
            ));
        }
        for group in groups {
            for rule in group {
                if rule.key.trim().is_empty() {
                    return Err(Violation::new(
                        "attributes",
                        message!["The ", FIELD, " rule key is required."],
                    ));
                }
                if !ATTRIBUTE_OPS.contains(&rule.op.as_str()) {
                    return Err(Violation::new(
                        "attributes",
                        message![
                            "The ",
                            FIELD,
                            format!(" op must be one of {}.", ATTRIBUTE_OPS.join(", "))
                        ],
                    ));
                }
                let needs_value = !matches!(rule.op.as_str(), "exists" | "not_exists");
                if needs_value && rule.value.0.is_null() {
                    return Err(Violation::new(
                        "attributes",
                        message![
                            "The ",
                            FIELD,
                            format!(" rule on {:?} needs a value.", rule.key)
                        ],
                    ));
                }
            }
        }
    }
    if n.actions.len() > ACTIONS_MAX {
        return Err(Violation::new(
            "actions",
            format!("At most {ACTIONS_MAX} buttons are allowed."),
        ));
    }
    for (i, a) in n.actions.iter().enumerate() {
        broadcast_button(i + 1, a)?;
    }
    Ok(())
}

/// The button of slot `k` (1 or 2) of a broadcast: `multi_element_title{k}`,
/// `multi_element_url{k}` and the optional `multi_element_image{k}`.
pub fn broadcast_button(k: usize, a: &Action) -> Check {
    if a.label.trim().is_empty() {
        return Err(Violation::new(
            format!("multi_element_title{k}"),
            message!["The ", FIELD, " field is required when a button is given."],
        ));
    }
    if !is_web_url(&a.url) {
        return Err(Violation::new(
            format!("multi_element_url{k}"),
            message!["The ", FIELD, " format is invalid."],
        ));
    }
    if let Some(img) = a.image_url.as_deref().filter(|s| !s.is_empty()) {
        if !is_web_url(img) {
            return Err(Violation::new(
                format!("multi_element_image{k}"),
                message!["The ", FIELD, " format is invalid."],
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn empty_attribute_filters_are_refused() {
        let rule = crate::model::AttributeRule {
            key: "age".into(),
            op: "gt".into(),
            value: crate::model::common::Json(json!(1)),
        };
        let with = |attributes| NewNotification {
            notification_title: Some("t".into()),
            notification_message: Some("m".into()),
            notification_url: Some("https://x.example/".into()),
            attributes: Some(attributes),
            ..Default::default()
        };
        assert!(broadcast(&with(vec![vec![rule.clone()]])).is_ok());
        for groups in [vec![], vec![vec![]], vec![vec![rule], vec![]]] {
            assert_eq!(broadcast(&with(groups)).unwrap_err().field, "attributes");
        }
    }
}

//! Segments (4.6-4.9): ids, membership by hash and by profile, and the listing window.

use super::limits::{SEGMENTS_LIMIT_MIN, SEGMENTS_OFFSET_MIN, SEGMENT_HASHES_MAX};
use super::violation::FIELD;
use super::violation::{Check, Violation};
use crate::message;

pub const INVALID_SEGMENT_ID: &str = "Enter a valid segment id";
pub const UNKNOWN_SEGMENT_ID: &str = "Your enter segment id does not exist";

/// A segment id: a positive integer, as a number or a numeric string.
pub fn segment_id(raw: &str) -> Check<i64> {
    match raw.trim().parse::<i64>() {
        Ok(id) if id > 0 => Ok(id),
        _ => Err(Violation::new("segment_id", INVALID_SEGMENT_ID)),
    }
}

/// A list of segment ids (`include_segments`, `exclude_segments`, a drip's `send_to`): each
/// entry a segment's id, named `{field}[i]` when it is not one. A segment's name is the easy
/// guess (`segments.add_profiles` takes names), and as a filter it would match no one: the
/// broadcast would go out to nobody and report success.
pub fn segment_ids(field: &str, ids: &[String]) -> Check {
    match ids
        .iter()
        .enumerate()
        .find(|(_, raw)| segment_id(raw).is_err())
    {
        Some((i, raw)) => {
            // A number that is not a positive whole one (0, -1, 1.5, a float column's 1.0,
            // one past 64 bits) is no id; anything else is most likely a segment's name.
            let why = if raw.trim().parse::<f64>().is_ok_and(f64::is_finite) {
                "a segment id is a positive whole number (1 or more), written without a \
                 fraction"
            } else {
                "a segment's name is not its id (GET /apiv1/segments lists both)"
            };
            Err(Violation::new(
                format!("{field}[{i}]"),
                message![
                    "The ",
                    FIELD,
                    format!(" must be a segment_id (a positive whole number), not {raw:?}: {why}")
                ],
            ))
        }
        None => Ok(()),
    }
}

/// `subscriber_hash` of 4.6: one to 500 non-empty entries.
pub fn segment_hashes(hashes: &[String]) -> Check {
    if hashes.is_empty() {
        return Err(Violation::new(
            "subscriber_hash",
            message!["The ", FIELD, " field is required."],
        ));
    }
    if hashes.len() > SEGMENT_HASHES_MAX {
        return Err(Violation::new(
            "subscriber_hash",
            message![
                "The ",
                FIELD,
                format!(" may not have more than {SEGMENT_HASHES_MAX} items.")
            ],
        ));
    }
    if hashes.iter().any(|h| h.trim().is_empty()) {
        return Err(Violation::new(
            "subscriber_hash",
            message!["The ", FIELD, " entries must not be empty."],
        ));
    }
    Ok(())
}

/// The body of 4.8.
pub fn profile_membership(segment_name: &str, profile_ids: &[String], operation: &str) -> Check {
    if segment_name.trim().is_empty() {
        return Err(Violation::new(
            "segment_name",
            message!["The ", FIELD, " field is required."],
        ));
    }
    if profile_ids.is_empty() || profile_ids.iter().any(|p| p.is_empty()) {
        return Err(Violation::new(
            "profile_id",
            message!["The ", FIELD, " field is required."],
        ));
    }
    if operation != "add" && operation != "delete" {
        return Err(Violation::new(
            "operation",
            message!["The ", FIELD, " must be add or delete."],
        ));
    }
    Ok(())
}

/// `limit` and `offset` of 4.9.
pub fn segments_window(limit: Option<i64>, offset: Option<i64>) -> Check {
    if matches!(limit, Some(l) if l < SEGMENTS_LIMIT_MIN) {
        return Err(Violation::new(
            "limit",
            message![FIELD, format!(" must be at least {SEGMENTS_LIMIT_MIN}")],
        ));
    }
    if matches!(offset, Some(o) if o < SEGMENTS_OFFSET_MIN) {
        return Err(Violation::new(
            "offset",
            message![FIELD, format!(" must be at least {SEGMENTS_OFFSET_MIN}")],
        ));
    }
    Ok(())
}

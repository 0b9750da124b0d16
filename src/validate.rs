//! The spec's limits (section 8) and required fields, written once and used by both the
//! client (before anything is sent) and the emulator (to answer as the service does).
//!
//! Each check returns a [`Violation`] naming the field by the spec's parameter name, with the
//! message the service gives (Laravel-style sentences on the broadcast endpoint, Joi-style on
//! the events interface, plain sentences on the campaign endpoints).

use chrono::{Datelike, NaiveDate, NaiveDateTime, NaiveTime, Timelike};
use serde_json::{Map, Value};

use crate::model::{Action, NewDrip, NewNotification, NotificationType, Product, ScheduleOptions};

/// List campaigns: `page` default and minimum.
pub const PAGE_DEFAULT: u32 = 1;
pub const PAGE_MIN: i64 = 1;
/// List campaigns: `limit` default and range.
pub const LIMIT_DEFAULT: u32 = 10;
pub const LIMIT_MIN: i64 = 1;
pub const LIMIT_MAX: i64 = 500;
/// View segments: `limit` minimum, `offset` minimum.
pub const SEGMENTS_LIMIT_MIN: i64 = 1;
pub const SEGMENTS_OFFSET_MIN: i64 = 0;
/// Add to segment by hash: entries per request.
pub const SEGMENT_HASHES_MAX: usize = 500;
/// Create broadcast: `subscriber_hash` and `profile_id` entries.
pub const BROADCAST_HASHES_MAX: usize = 100;
pub const BROADCAST_PROFILE_IDS_MAX: usize = 100;
/// Notification expiry: 28 days, in minutes for broadcasts, in seconds for campaigns.
pub const BROADCAST_EXPIRY_MAX_MINUTES: i64 = 28 * 24 * 60;
pub const CAMPAIGN_EXPIRY_MAX_SECONDS: i64 = 28 * 24 * 60 * 60;
/// Price-drop and inventory campaigns: `options.campaign.expiry` default, seconds.
pub const CAMPAIGN_ALERT_EXPIRY_DEFAULT_SECONDS: i64 = 2_592_000;
/// Buttons per notification.
pub const ACTIONS_MAX: usize = 2;
/// Broadcast title/message lengths: the broadcast reference (now, draft) and the
/// scheduled-push reference (later). Both references are honoured: each for its own type.
pub const TITLE_MAX: usize = 85;
pub const MESSAGE_MAX: usize = 135;
pub const TITLE_MAX_SCHEDULED: usize = 45;
pub const MESSAGE_MAX_SCHEDULED: usize = 73;
/// Track event.
pub const EVENT_NAME_MAX: usize = 64;
pub const RESERVED_EVENT_PREFIX: &str = "Service.";
pub const DATA_KEY_MAX: usize = 255;
pub const DATA_PAYLOAD_MAX_BYTES: usize = 4096;
/// The longest wait between two campaign notifications (the spec sets none; a year keeps
/// every schedule on the calendar).
pub const SCHEDULE_MAX_MINUTES: i64 = 366 * 24 * 60;
pub const SCHEDULE_MAX_DAYS: i64 = 366;
/// Analytics ranges: years 1 to 9999, at most ten years long.
pub const ANALYTICS_MAX_DAYS: i64 = 3660;
/// `valid_from_utc` format.
pub const VALID_FROM_FORMAT: &str = "%Y-%m-%d %H:%M:%S";

/// One failed check: the field by its spec name and the service's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub field: String,
    pub message: String,
}

impl Violation {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Violation {
            field: field.into(),
            message: message.into(),
        }
    }
}

impl Violation {
    /// The message, prefixed by the field's path when the message does not name it.
    pub fn message_with_field(&self) -> String {
        if self.message.contains(&self.field) {
            self.message.clone()
        } else {
            format!("{}: {}", self.field, self.message)
        }
    }
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

type Check<T = ()> = Result<T, Violation>;

// ---- campaign lists (4.2, 4.4) and analytics ranges (4.1, 4.5) ----

/// `page` of a campaign list: at least 1 and no maximum (a page past the last is empty).
pub fn page(page: Option<i64>) -> Check<i64> {
    match page {
        None => Ok(i64::from(PAGE_DEFAULT)),
        Some(p) if p >= PAGE_MIN => Ok(p),
        Some(_) => Err(Violation::new(
            "page",
            format!("page must be greater than or equal to {PAGE_MIN}"),
        )),
    }
}

pub fn limit(limit: Option<i64>) -> Check<u32> {
    match limit {
        None => Ok(LIMIT_DEFAULT),
        Some(l) if (LIMIT_MIN..=LIMIT_MAX).contains(&l) => Ok(l as u32),
        Some(_) => Err(Violation::new(
            "limit",
            format!("limit must be between {LIMIT_MIN} and {LIMIT_MAX}"),
        )),
    }
}

/// Whether `s` has exactly the shape of `pattern`, where `D` is one ASCII digit and every
/// other character stands for itself. chrono alone is looser than the spec's formats: it
/// takes signed years of any width, one-digit fields and spaces before a number.
fn shaped(s: &str, pattern: &str) -> bool {
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
                format!("{field} must be a date in YYYY-MM-DD format"),
            )
        })
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
                "analytics_start_at must not be after analytics_end_at",
            ));
        }
    }
    Ok((s, e))
}

// ---- segments (4.6-4.9) ----

pub const INVALID_SEGMENT_ID: &str = "Enter a valid segment id";
pub const UNKNOWN_SEGMENT_ID: &str = "Your enter segment id does not exist";

/// A segment id: a positive integer, as a number or a numeric string.
pub fn segment_id(raw: &str) -> Check<i64> {
    match raw.trim().parse::<i64>() {
        Ok(id) if id > 0 => Ok(id),
        _ => Err(Violation::new("segment_id", INVALID_SEGMENT_ID)),
    }
}

/// `subscriber_hash` of 4.6: one to 500 non-empty entries.
pub fn segment_hashes(hashes: &[String]) -> Check {
    if hashes.is_empty() {
        return Err(Violation::new(
            "subscriber_hash",
            "The subscriber_hash field is required.",
        ));
    }
    if hashes.len() > SEGMENT_HASHES_MAX {
        return Err(Violation::new(
            "subscriber_hash",
            format!("The subscriber_hash may not have more than {SEGMENT_HASHES_MAX} items."),
        ));
    }
    if hashes.iter().any(|h| h.trim().is_empty()) {
        return Err(Violation::new(
            "subscriber_hash",
            "The subscriber_hash entries must not be empty.",
        ));
    }
    Ok(())
}

/// The body of 4.8.
pub fn profile_membership(segment_name: &str, profile_ids: &[String], operation: &str) -> Check {
    if segment_name.trim().is_empty() {
        return Err(Violation::new(
            "segment_name",
            "The segment_name field is required.",
        ));
    }
    if profile_ids.is_empty() || profile_ids.iter().any(|p| p.is_empty()) {
        return Err(Violation::new(
            "profile_id",
            "The profile_id field is required.",
        ));
    }
    if operation != "add" && operation != "delete" {
        return Err(Violation::new(
            "operation",
            "The operation must be add or delete.",
        ));
    }
    Ok(())
}

/// `limit` and `offset` of 4.9.
pub fn segments_window(limit: Option<i64>, offset: Option<i64>) -> Check {
    if matches!(limit, Some(l) if l < SEGMENTS_LIMIT_MIN) {
        return Err(Violation::new(
            "limit",
            format!("limit must be at least {SEGMENTS_LIMIT_MIN}"),
        ));
    }
    if matches!(offset, Some(o) if o < SEGMENTS_OFFSET_MIN) {
        return Err(Violation::new(
            "offset",
            format!("offset must be at least {SEGMENTS_OFFSET_MIN}"),
        ));
    }
    Ok(())
}

// ---- analytics (4.10, 4.11) ----

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
        .ok_or_else(|| Violation::new("from", "The from field is required."))?;
    let to = to
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| Violation::new("to", "The to field is required."))?;
    let from = date("from", from)?;
    let to = date("to", to)?;
    if from > to {
        return Err(Violation::new("from", "from must not be after to"));
    }
    if (to - from).num_days() > ANALYTICS_MAX_DAYS {
        return Err(Violation::new(
            "to",
            format!("the range from..to must be at most {ANALYTICS_MAX_DAYS} days"),
        ));
    }
    let group_by = group_by
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| Violation::new("group_by", "The group_by field is required."))?;
    let g = GroupBy::parse(group_by)
        .ok_or_else(|| Violation::new("group_by", "group_by must be one of day, week, month"))?;
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
                format!(
                    "type lists {t:?}, which is not one of: {}",
                    SUBSCRIBER_DIMENSIONS.join(", ")
                ),
            ));
        }
        if !out.iter().any(|o: &String| o == t) {
            out.push(t.to_string());
        }
    }
    Ok(out)
}

// ---- products (4.12) ----

pub fn products(products: &[Product]) -> Check {
    if products.is_empty() {
        return Err(Violation::new("products", "products must not be empty"));
    }
    for (i, p) in products.iter().enumerate() {
        if p.product_id.trim().is_empty() {
            return Err(Violation::new(
                format!("products[{i}].product_id"),
                "product_id is required",
            ));
        }
        if !p.price.is_finite() || p.price < 0.0 {
            return Err(Violation::new(
                format!("products[{i}].price"),
                "price must be a number not below 0",
            ));
        }
        if let Some(a) = &p.availability {
            if a != "inStock" && a != "outOfStock" {
                return Err(Violation::new(
                    format!("products[{i}].availability"),
                    "availability must be inStock or outOfStock",
                ));
            }
        }
    }
    Ok(())
}

// ---- campaign notifications (2.2, 2.6, 2.8) and drips (4.3) ----

fn is_web_url(s: &str) -> bool {
    reqwest::Url::parse(s)
        .map(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
        .unwrap_or(false)
}

/// `HH:mm:ss`, two digits each, seconds 00-59 (chrono alone would take a leap second `60`).
fn is_time(s: &str) -> bool {
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

/// Buttons: at most two, each with a label and a URL.
pub fn actions(prefix: &str, actions: &[Action]) -> Check {
    if actions.len() > ACTIONS_MAX {
        return Err(Violation::new(
            format!("{prefix}actions"),
            format!("at most {ACTIONS_MAX} actions are allowed"),
        ));
    }
    for (i, a) in actions.iter().enumerate() {
        if a.label.trim().is_empty() {
            return Err(Violation::new(
                format!("{prefix}actions[{i}].label"),
                "label is required",
            ));
        }
        if a.url.trim().is_empty() {
            return Err(Violation::new(
                format!("{prefix}actions[{i}].url"),
                "url is required",
            ));
        }
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

/// The keys of a drip's `send_to` (2.9).
pub const SEND_TO_KEYS: [&str; 8] = [
    "include_segments",
    "exclude_segments",
    "include_countries",
    "exclude_countries",
    "include_states",
    "exclude_states",
    "include_cities",
    "exclude_cities",
];

/// The JSON types of the notifications of 4.3 (2.8), checked as the service does before the
/// model's lenient reading: text fields are strings, numbers are numbers (or numeric
/// strings), `schedule_options` an object and `actions` an array of objects. `null` stands
/// for a missing field, which the required-field checks report.
pub fn drip_json_types(obj: &Map<String, Value>) -> Result<(), String> {
    let Some(Value::Array(items)) = obj.get("notifications") else {
        return Err("notifications must be an array".into());
    };
    // A key 2.9 does not have (a typo, or a broadcast filter such as include_device_types)
    // would be dropped and the drip would reach everyone: refused.
    match obj.get("send_to") {
        None | Some(Value::Null) => {}
        Some(Value::Object(send_to)) => {
            if let Some(k) = send_to.keys().find(|k| !SEND_TO_KEYS.contains(&k.as_str())) {
                return Err(format!(
                    "send_to.{k} is not allowed: send_to takes {}",
                    SEND_TO_KEYS.join(", ")
                ));
            }
        }
        Some(_) => return Err("send_to must be an object".into()),
    }
    // A Number of the spec: an integer, a float with no fraction (`86400.0`, as JSON
    // encoders write some numbers) or a numeric string; `1.5` is no integer.
    let is_int = |v: &Value| {
        v.is_i64()
            || v.as_f64()
                .is_some_and(|f| f.fract() == 0.0 && f.abs() < 9.0e18)
            || v.as_str().is_some_and(|s| s.trim().parse::<i64>().is_ok())
    };
    let text = |m: &Map<String, Value>, prefix: &str, keys: &[&str]| {
        for k in keys {
            if !matches!(m.get(*k), None | Some(Value::Null) | Some(Value::String(_))) {
                return Err(format!("{prefix}{k} must be a string"));
            }
        }
        Ok(())
    };
    for (i, n) in items.iter().enumerate() {
        let prefix = format!("notifications[{i}].");
        let n = n
            .as_object()
            .ok_or_else(|| format!("notifications[{i}] must be an object"))?;
        text(
            n,
            &prefix,
            &["title", "message", "url", "image_url", "big_image_url"],
        )?;
        for k in ["require_interaction", "expiry"] {
            match n.get(k) {
                None | Some(Value::Null) => {}
                Some(v) if is_int(v) => {}
                Some(_) => return Err(format!("{prefix}{k} must be an integer")),
            }
        }
        match n.get("schedule_options") {
            None | Some(Value::Null) => {}
            Some(Value::Object(s)) => {
                let p = format!("{prefix}schedule_options.");
                text(s, &p, &["type", "unit", "at"])?;
                match s.get("value") {
                    None | Some(Value::Null) => {}
                    Some(v) if is_int(v) => {}
                    Some(_) => return Err(format!("{p}value must be an integer")),
                }
            }
            Some(_) => return Err(format!("{prefix}schedule_options must be an object")),
        }
        match n.get("actions") {
            None | Some(Value::Null) => {}
            Some(Value::Array(actions)) => {
                for (j, a) in actions.iter().enumerate() {
                    let p = format!("{prefix}actions[{j}].");
                    let a = a
                        .as_object()
                        .ok_or_else(|| format!("{prefix}actions[{j}] must be an object"))?;
                    text(a, &p, &["label", "url", "image_url"])?;
                }
            }
            Some(_) => return Err(format!("{prefix}actions must be an array")),
        }
    }
    Ok(())
}

/// The body of 4.3.
pub fn drip(d: &NewDrip) -> Check {
    if d.campaign_name.trim().is_empty() {
        return Err(Violation::new("campaign_name", "campaign_name is required"));
    }
    if d.notifications.is_empty() {
        return Err(Violation::new(
            "notifications",
            "notifications must contain at least one notification",
        ));
    }
    for (i, n) in d.notifications.iter().enumerate() {
        let prefix = format!("notifications[{i}].");
        let required = [
            ("title", &n.title),
            ("message", &n.message),
            ("url", &n.url),
            ("image_url", &n.image_url),
            ("big_image_url", &n.big_image_url),
        ];
        for (name, value) in required {
            if value.trim().is_empty() {
                return Err(Violation::new(
                    format!("{prefix}{name}"),
                    format!("{name} is required"),
                ));
            }
        }
        if !is_web_url(&n.url) {
            return Err(Violation::new(
                format!("{prefix}url"),
                "url must be a valid http or https URL",
            ));
        }
        match n.require_interaction {
            Some(0 | 1) => {}
            None => {
                return Err(Violation::new(
                    format!("{prefix}require_interaction"),
                    "require_interaction is required: 1 keeps the notification until the \
                     subscriber acts, 0 lets it close by itself",
                ))
            }
            Some(_) => {
                return Err(Violation::new(
                    format!("{prefix}require_interaction"),
                    "require_interaction must be 0 or 1",
                ))
            }
        }
        match n.expiry {
            Some(seconds) => campaign_expiry(&format!("{prefix}expiry"), seconds)?,
            None => {
                return Err(Violation::new(
                    format!("{prefix}expiry"),
                    format!(
                        "expiry is required: seconds from 1 to {CAMPAIGN_EXPIRY_MAX_SECONDS} \
                         (28 days) for the notification to wait for an offline device"
                    ),
                ))
            }
        }
        schedule(&prefix, i, &n.schedule_options, true)?;
        actions(&prefix, &n.actions)?;
    }
    if let Some(u) = &d.utm_params {
        for (name, v) in [
            ("utm_source", &u.utm_source),
            ("utm_medium", &u.utm_medium),
            ("utm_campaign", &u.utm_campaign),
        ] {
            if v.trim().is_empty() {
                return Err(Violation::new(
                    format!("utm_params.{name}"),
                    format!("{name} is required"),
                ));
            }
        }
    }
    Ok(())
}

// ---- broadcasts (4.13) ----

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
                    format!("The {name} format is invalid."),
                ));
            }
        }
    }
    match (n.notification_type, present(&n.valid_from_utc)) {
        (NotificationType::Later, None) => {
            return Err(Violation::new(
                "valid_from_utc",
                "The valid_from_utc field is required when notification type is later.",
            ))
        }
        (_, Some(v)) if !valid_from(v) => {
            return Err(Violation::new(
                "valid_from_utc",
                "The valid_from_utc does not match the format Y-m-d H:i:s (YYYY-MM-DD hh:mm:ss, 24-hour clock).",
            ))
        }
        _ => {}
    }
    // An empty entry would be dropped on the way and widen the audience: refuse it.
    for (name, list) in [
        ("profile_id", &n.profile_id),
        ("include_segments", &n.include_segments),
        ("exclude_segments", &n.exclude_segments),
        ("include_countries", &n.include_countries),
        ("exclude_countries", &n.exclude_countries),
        ("include_states", &n.include_states),
        ("include_cities", &n.include_cities),
        ("include_device_types", &n.include_device_types),
        ("include_browsers", &n.include_browsers),
        ("subscriber_hash", &n.subscriber_hash),
    ] {
        if list.iter().any(|v| v.trim().is_empty()) {
            return Err(Violation::new(
                name,
                format!("The {name} entries must not be empty."),
            ));
        }
    }
    if n.profile_id.len() > BROADCAST_PROFILE_IDS_MAX {
        return Err(Violation::new(
            "profile_id",
            format!("The profile_id may not have more than {BROADCAST_PROFILE_IDS_MAX} items."),
        ));
    }
    if n.subscriber_hash.len() > BROADCAST_HASHES_MAX {
        return Err(Violation::new(
            "subscriber_hash",
            format!("The subscriber_hash may not have more than {BROADCAST_HASHES_MAX} items."),
        ));
    }
    for (name, v) in [("from_date", &n.from_date), ("to_date", &n.to_date)] {
        if let Some(d) = present(v) {
            if !iso_date_or_datetime(d) {
                return Err(Violation::new(
                    name,
                    format!("The {name} is not a valid date."),
                ));
            }
        }
    }
    if let Some(ri) = n.require_interaction {
        if ri != 0 && ri != 1 {
            return Err(Violation::new(
                "require_interaction",
                "The require_interaction must be 0 or 1.",
            ));
        }
    }
    if let Some(e) = n.notification_expiry {
        if !(1..=BROADCAST_EXPIRY_MAX_MINUTES).contains(&e) {
            return Err(Violation::new(
                "notification_expiry",
                format!(
                    "The notification_expiry must be between 1 and {BROADCAST_EXPIRY_MAX_MINUTES} minutes (28 days)."
                ),
            ));
        }
    }
    if let Some(groups) = &n.attributes {
        // No group, or a group without rules, would select everyone: refused like any
        // filter that could silently widen a broadcast.
        if groups.is_empty() {
            return Err(Violation::new(
                "attributes",
                "The attributes must contain at least one rule group.",
            ));
        }
        if groups.iter().any(Vec::is_empty) {
            return Err(Violation::new(
                "attributes",
                "The attributes rule groups must not be empty.",
            ));
        }
        for group in groups {
            for rule in group {
                if rule.key.trim().is_empty() {
                    return Err(Violation::new(
                        "attributes",
                        "The attributes rule key is required.",
                    ));
                }
                if !ATTRIBUTE_OPS.contains(&rule.op.as_str()) {
                    return Err(Violation::new(
                        "attributes",
                        format!(
                            "The attributes op must be one of {}.",
                            ATTRIBUTE_OPS.join(", ")
                        ),
                    ));
                }
                let needs_value = !matches!(rule.op.as_str(), "exists" | "not_exists");
                if needs_value && rule.value.0.is_null() {
                    return Err(Violation::new(
                        "attributes",
                        format!("The attributes rule on {:?} needs a value.", rule.key),
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
            format!("The multi_element_title{k} field is required when a button is given."),
        ));
    }
    if !is_web_url(&a.url) {
        return Err(Violation::new(
            format!("multi_element_url{k}"),
            format!("The multi_element_url{k} format is invalid."),
        ));
    }
    if let Some(img) = a.image_url.as_deref().filter(|s| !s.is_empty()) {
        if !is_web_url(img) {
            return Err(Violation::new(
                format!("multi_element_image{k}"),
                format!("The multi_element_image{k} format is invalid."),
            ));
        }
    }
    Ok(())
}

// ---- events (4.14) ----

fn valid_data_key(k: &str) -> bool {
    let mut chars = k.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphanumeric())
        && k.len() <= DATA_KEY_MAX
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// The body of 4.14, as JSON: every failing field, as the events interface lists them all.
pub fn event(body: &Map<String, Value>) -> Vec<Violation> {
    let mut out = Vec::new();
    match body.get("event_name") {
        None | Some(Value::Null) => {
            out.push(Violation::new("event_name", "\"event_name\" is required"))
        }
        Some(Value::String(name)) => {
            if name.is_empty() {
                out.push(Violation::new(
                    "event_name",
                    "\"event_name\" is not allowed to be empty",
                ));
            } else if name.chars().count() > EVENT_NAME_MAX {
                out.push(Violation::new(
                    "event_name",
                    format!(
                        "\"event_name\" length must be less than or equal to {EVENT_NAME_MAX} characters long"
                    ),
                ));
            }
            if name.starts_with(RESERVED_EVENT_PREFIX) {
                out.push(Violation::new(
                    "event_name",
                    format!("\"event_name\" must not begin with the reserved prefix \"{RESERVED_EVENT_PREFIX}\""),
                ));
            }
        }
        Some(_) => out.push(Violation::new(
            "event_name",
            "\"event_name\" must be a string",
        )),
    }
    let mut identified = false;
    for key in ["profile_id", "device_token_hash"] {
        match body.get(key) {
            None => {}
            Some(Value::String(s)) if s.is_empty() => out.push(Violation::new(
                key,
                format!("\"{key}\" is not allowed to be empty"),
            )),
            Some(Value::String(_)) => identified = true,
            Some(_) => out.push(Violation::new(key, format!("\"{key}\" must be a string"))),
        }
    }
    if !identified
        && !out
            .iter()
            .any(|v| v.field == "profile_id" || v.field == "device_token_hash")
    {
        out.push(Violation::new(
            "profile_id",
            "\"value\" must contain at least one of [device_token_hash, profile_id]",
        ));
    }
    match body.get("data") {
        None => {}
        Some(Value::Object(data)) => {
            for (k, v) in data {
                if !valid_data_key(k) {
                    out.push(Violation::new(
                        format!("data.{k}"),
                        format!(
                            "\"data.{k}\" key must start with a letter or digit and contain only letters, digits, hyphens and underscores (at most {DATA_KEY_MAX} characters)"
                        ),
                    ));
                } else if !matches!(v, Value::String(_) | Value::Number(_) | Value::Bool(_)) {
                    out.push(Violation::new(
                        format!("data.{k}"),
                        format!("\"data.{k}\" must be a string, number, boolean or ISO 8601 date"),
                    ));
                }
            }
            let size = serde_json::to_vec(data)
                .map(|v| v.len())
                .unwrap_or(usize::MAX);
            if size > DATA_PAYLOAD_MAX_BYTES {
                out.push(Violation::new(
                    "data",
                    format!("\"data\" payload must be at most {DATA_PAYLOAD_MAX_BYTES} bytes (4 KB), got {size}"),
                ));
            }
        }
        Some(_) => out.push(Violation::new("data", "\"data\" must be of type object")),
    }
    for key in body.keys() {
        if !matches!(
            key.as_str(),
            "event_name" | "profile_id" | "device_token_hash" | "data"
        ) {
            out.push(Violation::new(
                key.clone(),
                format!("\"{key}\" is not allowed"),
            ));
        }
    }
    out
}

/// The first `include_*` list of a drip audience (`send_to`, 2.9) given empty: no filter,
/// which sends to everyone, when the caller meant to narrow it. (An empty `exclude_*` list
/// excludes no one, which is what it says.)
pub fn empty_include(send_to: &Value) -> Option<String> {
    send_to.as_object()?.iter().find_map(|(k, v)| {
        (k.starts_with("include_") && v.as_array().is_some_and(|a| a.is_empty())).then(|| k.clone())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn send_to_keys_are_the_fields_of_send_to() {
        // The list a drip's send_to is checked against must follow the model: a field added
        // to SendTo but not listed would be refused, one listed but removed dropped silently.
        // The literal names every field, so adding one to SendTo stops this from compiling.
        let one = || vec!["1".to_string()];
        let full = crate::model::SendTo {
            include_segments: one(),
            exclude_segments: one(),
            include_countries: one(),
            exclude_countries: one(),
            include_states: one(),
            exclude_states: one(),
            include_cities: one(),
            exclude_cities: one(),
        };
        let written = serde_json::to_value(&full).unwrap();
        let mut fields: Vec<&str> = written
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut listed = SEND_TO_KEYS.to_vec();
        fields.sort_unstable();
        listed.sort_unstable();
        assert_eq!(fields, listed);
    }

    #[test]
    fn limits_are_inclusive() {
        assert_eq!(limit(Some(500)), Ok(500));
        assert!(limit(Some(501)).is_err());
        assert!(limit(Some(0)).is_err());
        assert_eq!(page(None), Ok(1));
        assert!(page(Some(0)).is_err());
    }

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

    #[test]
    fn event_reports_every_failing_field() {
        let body = json!({"data": {"_bad": 1, "ok": [1]}});
        let v = event(body.as_object().unwrap());
        let fields: Vec<_> = v.iter().map(|v| v.field.as_str()).collect();
        assert_eq!(fields, ["event_name", "profile_id", "data._bad", "data.ok"]);
    }

    #[test]
    fn event_payload_limit_is_4kb() {
        let inside =
            json!({"event_name": "x", "profile_id": "p", "data": {"k": "a".repeat(4096 - 8)}});
        assert!(event(inside.as_object().unwrap()).is_empty());
        let outside =
            json!({"event_name": "x", "profile_id": "p", "data": {"k": "a".repeat(4096 - 7)}});
        assert_eq!(event(outside.as_object().unwrap())[0].field, "data");
    }
}

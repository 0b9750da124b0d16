//! Drip campaigns (4.3): the JSON types of the body as the service checks them before
//! reading it, the body itself, and the audience (`send_to`, 2.9), also as read back from a
//! drip's `audience` (2.7) to create it again.

use super::violation::{Message, FIELD};
use crate::message;
use serde_json::{Map, Value};

use crate::model::drip::SEND_TO_FIELDS;
use crate::model::{Audience, NewDrip, SendTo};

use super::campaigns::{actions, campaign_expiry, schedule};
use super::formats::is_web_url;
use super::limits::CAMPAIGN_EXPIRY_MAX_SECONDS;
use super::segments::segment_ids;
use super::violation::{required, Check, Violation};

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
pub fn drip_json_types(obj: &Map<String, Value>) -> Check {
    let Some(Value::Array(items)) = obj.get("notifications") else {
        return Err(Violation::new(
            "notifications",
            message![FIELD, " must be an array"],
        ));
    };
    // A key 2.9 does not have (a typo, or a broadcast filter such as include_device_types)
    // would be dropped and the drip would reach everyone: refused.
    match obj.get("send_to") {
        None | Some(Value::Null) => {}
        Some(Value::Object(send_to)) => {
            if let Some(k) = send_to.keys().find(|k| !SEND_TO_KEYS.contains(&k.as_str())) {
                let takes = SEND_TO_KEYS.join(", ");
                return Err(Violation::new(
                    format!("send_to.{k}"),
                    message![FIELD, format!(" is not allowed: send_to takes {takes}")],
                ));
            }
        }
        Some(_) => {
            return Err(Violation::new(
                "send_to",
                message![FIELD, " must be an object"],
            ))
        }
    }
    // A Number of the spec: an integer, a float with no fraction (`86400.0`, as JSON
    // encoders write some numbers) or a numeric string; `1.5` is no integer.
    let is_int = |v: &Value| {
        v.is_i64()
            || v.as_f64()
                .is_some_and(|f| f.fract() == 0.0 && f.abs() < 9.0e18)
            || v.as_str().is_some_and(|s| s.trim().parse::<i64>().is_ok())
    };
    // `path` holds no value of the JSON type `kind` names.
    let not_a = |path: String, kind: &str| {
        Err(Violation::new(
            path,
            message![FIELD, format!(" must be {kind}")],
        ))
    };
    // Each of `keys` in `m`, when present and not null, passes `is`.
    let each =
        |m: &Map<String, Value>, prefix: &str, keys: &[&str], kind, is: &dyn Fn(&Value) -> bool| {
            match keys
                .iter()
                .find(|k| m.get(**k).is_some_and(|v| !v.is_null() && !is(v)))
            {
                Some(k) => not_a(format!("{prefix}{k}"), kind),
                None => Ok(()),
            }
        };
    let text = |m: &Map<String, Value>, prefix: &str, keys: &[&str]| {
        each(m, prefix, keys, "a string", &Value::is_string)
    };
    let integer = |m: &Map<String, Value>, prefix: &str, keys: &[&str]| {
        each(m, prefix, keys, "an integer", &is_int)
    };
    for (i, n) in items.iter().enumerate() {
        let prefix = format!("notifications[{i}].");
        let Some(n) = n.as_object() else {
            return not_a(format!("notifications[{i}]"), "an object");
        };
        text(
            n,
            &prefix,
            &["title", "message", "url", "image_url", "big_image_url"],
        )?;
        integer(n, &prefix, &["require_interaction", "expiry"])?;
        match n.get("schedule_options") {
            None | Some(Value::Null) => {}
            Some(Value::Object(s)) => {
                let p = format!("{prefix}schedule_options.");
                text(s, &p, &["type", "unit", "at"])?;
                integer(s, &p, &["value"])?;
            }
            Some(_) => return not_a(format!("{prefix}schedule_options"), "an object"),
        }
        match n.get("actions") {
            None | Some(Value::Null) => {}
            Some(Value::Array(actions)) => {
                for (j, a) in actions.iter().enumerate() {
                    let Some(a) = a.as_object() else {
                        return not_a(format!("{prefix}actions[{j}]"), "an object");
                    };
                    text(
                        a,
                        &format!("{prefix}actions[{j}]."),
                        &["label", "url", "image_url"],
                    )?;
                }
            }
            Some(_) => return not_a(format!("{prefix}actions"), "an array"),
        }
    }
    Ok(())
}

/// The body of 4.3.
pub fn drip(d: &NewDrip) -> Check {
    if d.campaign_name.trim().is_empty() {
        return Err(Violation::new(
            "campaign_name",
            message![FIELD, " is required"],
        ));
    }
    if d.notifications.is_empty() {
        return Err(Violation::new(
            "notifications",
            message![FIELD, " must contain at least one notification"],
        ));
    }
    for (i, n) in d.notifications.iter().enumerate() {
        let prefix = format!("notifications[{i}].");
        required(
            &prefix,
            &[
                ("title", &n.title),
                ("message", &n.message),
                ("url", &n.url),
                ("image_url", &n.image_url),
                ("big_image_url", &n.big_image_url),
            ],
        )?;
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
    if let Some(to) = &d.send_to {
        if let Some(key) = to.empty_include() {
            let field = format!("send_to.{key}");
            let why = super::empty_filter();
            return Err(Violation::new(field, why));
        }
        let include = to.include_segments.as_deref().unwrap_or_default();
        segment_ids("send_to.include_segments", include)?;
        segment_ids("send_to.exclude_segments", &to.exclude_segments)?;
    }
    if let Some(u) = &d.utm_params {
        required(
            "utm_params.",
            &[
                ("utm_source", &u.utm_source),
                ("utm_medium", &u.utm_medium),
                ("utm_campaign", &u.utm_campaign),
            ],
        )?;
    }
    Ok(())
}

/// The first `include_*` key of a drip audience (`send_to`, 2.9) as it came over the wire
/// given empty or `null`: no filter, which sends to everyone, when the caller meant to
/// narrow it. (An empty `exclude_*` list excludes no one, which is what it says.)
pub fn lost_include(send_to: &Value) -> Option<String> {
    send_to.as_object()?.iter().find_map(|(k, v)| {
        let lost = v.is_null() || v.as_array().is_some_and(|a| a.is_empty());
        (k.starts_with("include_") && lost).then(|| k.clone())
    })
}

impl SendTo {
    /// The `send_to` that selects what `audience` does, for a drip read and created again:
    /// one group of rules AND-ed, each `in` or `nin` on segments, country, states or city,
    /// or the single `all` rule. Every audience `send_to` cannot say exactly is refused
    /// naming the rule, never widened or narrowed: OR-ed groups, no group at all (which
    /// selects no one), a device rule, two `in` rules on one field (AND-ed, where an include
    /// list is any of its values), an `in` with no value, `all` with values.
    pub fn from_audience(audience: &Audience, path: &str) -> Result<SendTo, Violation> {
        let groups = &audience.filter.value;
        fn refuse<T>(field: String, why: impl Into<Message>) -> Result<T, Violation> {
            Err(Violation::new(field, why))
        }
        let group = match groups.as_slice() {
            [group] => group,
            [] => {
                return refuse(
                    format!("{path}.filter.value"),
                    message![
                        FIELD,
                        " has no group of rules, which selects no one: \
                         send_to cannot say that (leave send_to out to reach everyone)"
                    ],
                )
            }
            more => {
                return refuse(
                    format!("{path}.filter.value"),
                    message![
                        FIELD,
                        format!(
                            " has {} groups of rules (OR-ed), which send_to \
                         cannot express: it takes one group of include and exclude lists",
                            more.len()
                        )
                    ],
                )
            }
        };
        let mut out = SendTo::default();
        for (i, rule) in group.iter().enumerate() {
            let at = format!("{path}.filter.value[0][{i}]");
            let values = match &rule.value.0 {
                Value::Array(items) => items
                    .iter()
                    .map(|v| match v {
                        Value::String(s) => Ok(s.clone()),
                        Value::Number(n) => Ok(n.to_string()),
                        other => Err(other),
                    })
                    .collect::<Result<Vec<_>, _>>()
                    .or_else(|bad| {
                        refuse(
                            format!("{at}.value"),
                            message![
                                FIELD,
                                format!(" holds {bad}: only strings and numbers match")
                            ],
                        )
                    })?,
                _ => return refuse(format!("{at}.value"), message![FIELD, " must be a list"]),
            };
            if rule.op == "all" {
                if !values.is_empty() || group.len() > 1 {
                    return refuse(
                        format!("{at}.op"),
                        format!("{at}: `all` selects everyone, so it stands alone with no values"),
                    );
                }
                continue;
            }
            let Some(slot) = SEND_TO_FIELDS.iter().position(|f| *f == rule.field) else {
                return refuse(
                    format!("{at}.field"),
                    message![
                        FIELD,
                        format!(
                            " {:?} has no send_to list (segments, country, states and \
                         city have)",
                            rule.field
                        )
                    ],
                );
            };
            let (include, exclude) = out.lists_mut().into_iter().nth(slot).expect("4 lists");
            match rule.op.as_str() {
                // An empty `in` selects no one; as an empty include list it would be no
                // filter at all, and the drip would reach everyone.
                "in" if values.is_empty() => {
                    return refuse(
                        format!("{at}.value"),
                        message![
                            FIELD,
                            " is empty, so the rule selects no one, which send_to cannot say"
                        ],
                    )
                }
                "in" if include.is_some() => {
                    return refuse(
                        format!("{at}.field"),
                        format!(
                            "{at} is a second `in` rule on {}: the two are AND-ed, which an \
                             include list (any of its values) cannot express",
                            rule.field
                        ),
                    )
                }
                "in" => *include = Some(values),
                // `nin a` AND `nin b` is `nin` both.
                "nin" => exclude.extend(values),
                other => {
                    return refuse(
                        format!("{at}.op"),
                        message![FIELD, format!(" must be all, in or nin, not {other:?}")],
                    )
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn send_to_keys_are_the_fields_of_send_to() {
        // The list a drip's send_to is checked against must follow the model: a field added
        // to SendTo but not listed would be refused, one listed but removed dropped silently.
        // The literal names every field, so adding one to SendTo stops this from compiling.
        let one = || vec!["1".to_string()];
        let full = crate::model::SendTo {
            include_segments: Some(one()),
            exclude_segments: one(),
            include_countries: Some(one()),
            exclude_countries: one(),
            include_states: Some(one()),
            exclude_states: one(),
            include_cities: Some(one()),
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
}

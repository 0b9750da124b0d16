//! Who a broadcast (4.13), a drip audience (2.7, 2.9) or an attribute filter (2.14) selects.

use std::cmp::Ordering;
use std::collections::HashSet;

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::emulator::state::Subscriber;
use crate::model::{AttributeRule, AudienceRule, NewNotification};

/// A `from_date` / `to_date` bound: a date is its midnight UTC; a date-time without an
/// offset is UTC. Read exactly as the validation accepts it.
pub fn instant(s: &str) -> Option<DateTime<Utc>> {
    crate::validate::iso_instant(s)
}

fn any_of<T: std::ops::Deref<Target = str>>(list: &[String], value: &Option<T>) -> bool {
    value
        .as_deref()
        .is_some_and(|v| list.iter().any(|x| x == v))
}

/// A broadcast's filters (4.13) read once, for the whole audience: whether an active
/// subscriber is selected by every filter given. An empty list is no filter; `from_date` is
/// inclusive ("joined on or after"), `to_date` exclusive ("joined before").
pub struct Selector<'a> {
    n: &'a NewNotification,
    include_segments: Vec<i64>,
    exclude_segments: Vec<i64>,
    from: Option<DateTime<Utc>>,
    to: Option<DateTime<Utc>>,
    /// `subscriber_hash` as a set: a broadcast may name thousands.
    hashes: HashSet<&'a str>,
}

impl<'a> Selector<'a> {
    pub fn of(n: &'a NewNotification) -> Selector<'a> {
        let ids = |list: &[String]| {
            list.iter()
                .filter_map(|s| s.trim().parse::<i64>().ok())
                .collect()
        };
        Selector {
            n,
            include_segments: ids(&n.include_segments),
            exclude_segments: ids(&n.exclude_segments),
            from: n.from_date.as_deref().and_then(instant),
            to: n.to_date.as_deref().and_then(instant),
            hashes: n.subscriber_hash.iter().map(String::as_str).collect(),
        }
    }

    pub fn selects(&self, sub: &Subscriber) -> bool {
        let n = self.n;
        if sub.unsubscribed_at.is_some() {
            return false;
        }
        let in_segments = |ids: &[i64]| ids.iter().any(|id| sub.segments.contains(id));
        (n.include_segments.is_empty() || in_segments(&self.include_segments))
            && !in_segments(&self.exclude_segments)
            && (n.include_countries.is_empty() || any_of(&n.include_countries, &sub.country))
            && !any_of(&n.exclude_countries, &sub.country)
            && (n.include_states.is_empty() || any_of(&n.include_states, &sub.state))
            && (n.include_cities.is_empty() || any_of(&n.include_cities, &sub.city))
            && (n.include_device_types.is_empty()
                || any_of(&n.include_device_types, &sub.device_type))
            && (n.include_browsers.is_empty() || any_of(&n.include_browsers, &sub.browser))
            && (n.profile_id.is_empty() || any_of(&n.profile_id, &sub.profile_id))
            && (self.hashes.is_empty() || self.hashes.contains(&*sub.subscriber_hash.text()))
            && self.from.is_none_or(|from| sub.subscribed_at >= from)
            && self.to.is_none_or(|to| sub.subscribed_at < to)
            && n.attributes
                .as_ref()
                .is_none_or(|groups| attributes_match(groups, sub))
    }
}

/// Groups OR-ed, rules in a group AND-ed; no groups selects everyone.
pub fn attributes_match(groups: &[Vec<AttributeRule>], sub: &Subscriber) -> bool {
    groups.is_empty()
        || groups.iter().any(|g| {
            g.iter()
                .all(|r| rule_holds(r, sub.attributes.get(&r.key).as_deref()))
        })
}

/// Numbers compare as numbers, strings as strings; values of different types are never
/// equal or ordered. A missing attribute satisfies only `not_exists`.
pub fn rule_holds(rule: &AttributeRule, attr: Option<&Value>) -> bool {
    let Some(attr) = attr.filter(|a| !a.is_null()) else {
        return rule.op == "not_exists";
    };
    let want = &rule.value.0;
    match rule.op.as_str() {
        "exists" => true,
        "not_exists" => false,
        "eq" => same(attr, want),
        "ne" => !same(attr, want),
        "lt" => order(attr, want) == Some(Ordering::Less),
        "lte" => matches!(order(attr, want), Some(Ordering::Less | Ordering::Equal)),
        "gt" => order(attr, want) == Some(Ordering::Greater),
        "gte" => matches!(order(attr, want), Some(Ordering::Greater | Ordering::Equal)),
        "in" => want
            .as_array()
            .is_some_and(|xs| xs.iter().any(|x| same(attr, x))),
        "nin" => !want
            .as_array()
            .is_some_and(|xs| xs.iter().any(|x| same(attr, x))),
        _ => false,
    }
}

fn same(a: &Value, b: &Value) -> bool {
    order(a, b) == Some(Ordering::Equal) || (a == b && !a.is_number())
}

fn order(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64()?.partial_cmp(&y.as_f64()?),
        (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
        (Value::Bool(x), Value::Bool(y)) if x == y => Some(Ordering::Equal),
        _ => None,
    }
}

fn field_values(field: &str, sub: &Subscriber) -> Vec<Value> {
    match field {
        "segments" => sub.segments.iter().map(|s| Value::from(*s)).collect(),
        "country" => sub
            .country
            .iter()
            .map(|s| Value::from(s.as_str()))
            .collect(),
        "states" => sub.state.iter().map(|s| Value::from(s.as_str())).collect(),
        "city" => sub.city.iter().map(|s| Value::from(s.as_str())).collect(),
        "device" => sub.device.iter().map(|s| Value::from(s.as_str())).collect(),
        "device_type" => sub
            .device_type
            .iter()
            .map(|s| Value::from(s.as_str()))
            .collect(),
        _ => Vec::new(),
    }
}

fn loosely_equal(a: &Value, b: &Value) -> bool {
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    text(a) == text(b)
}

/// A drip audience (2.7): groups OR-ed, rules AND-ed; `all` matches everyone, `in` needs
/// one of the values, `nin` none of them. Segment ids compare as text, so `"12"` and `12`
/// name the same segment.
pub fn audience_match(groups: &[Vec<AudienceRule>], sub: &Subscriber) -> bool {
    if sub.unsubscribed_at.is_some() {
        return false;
    }
    groups.is_empty()
        || groups.iter().any(|g| {
            g.iter().all(|r| {
                let have = field_values(&r.field, sub);
                let want = r.value.0.as_array().cloned().unwrap_or_default();
                let hit = have
                    .iter()
                    .any(|h| want.iter().any(|w| loosely_equal(h, w)));
                match r.op.as_str() {
                    "all" => true,
                    "in" => hit,
                    "nin" => !hit,
                    _ => false,
                }
            })
        })
}

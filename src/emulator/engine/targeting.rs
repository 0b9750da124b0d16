//! Who a broadcast (4.13), a drip audience (2.7, 2.9) or an attribute filter (2.14) selects.

use std::cmp::Ordering;
use std::collections::HashSet;

use chrono::{DateTime, Utc};
use roaring::RoaringBitmap;
use serde_json::Value;

use crate::emulator::state::{Field, Scalar, Site, Subscriber, Sym};
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
    /// The profile filters' values as interned texts, compared by number for each
    /// subscriber read (a value never interned is held by no one, so it is left out).
    include_countries: Vec<Sym>,
    exclude_countries: Vec<Sym>,
    include_states: Vec<Sym>,
    include_cities: Vec<Sym>,
    include_device_types: Vec<Sym>,
    include_browsers: Vec<Sym>,
    /// The attribute rules' keys as interned texts (`None`: a key no subscriber holds),
    /// group by group: compared by number with each subscriber's attributes.
    attribute_keys: Vec<Vec<Option<Sym>>>,
    /// Whether the include filters the site's indexes answer exactly (segments, countries,
    /// states, cities, device types, browsers) were applied by [`Selector::candidates`]:
    /// [`Selector::selects_candidate`] leaves them out.
    indexed: bool,
}

/// The interned texts of `list`'s values that were ever interned.
fn interned(list: &[String]) -> Vec<Sym> {
    list.iter().filter_map(|v| Sym::existing(v)).collect()
}

/// Whether `value` is one of `list`.
fn one_of(list: &[Sym], value: Option<Sym>) -> bool {
    value.is_some_and(|v| list.contains(&v))
}

impl<'a> Selector<'a> {
    pub fn of(n: &'a NewNotification) -> Selector<'a> {
        // A list not given is no filter; the engine reads one given empty (refused before a
        // broadcast is made) as selecting no one.
        let given = |list: &'a Option<Vec<String>>| list.as_deref().unwrap_or_default();
        let ids = |list: &[String]| {
            list.iter()
                .filter_map(|s| s.trim().parse::<i64>().ok())
                .collect()
        };
        Selector {
            n,
            include_segments: ids(given(&n.include_segments)),
            exclude_segments: ids(given(&n.exclude_segments)),
            from: n.from_date.as_deref().and_then(instant),
            to: n.to_date.as_deref().and_then(instant),
            hashes: given(&n.subscriber_hash)
                .iter()
                .map(String::as_str)
                .collect(),
            include_countries: interned(given(&n.include_countries)),
            exclude_countries: interned(given(&n.exclude_countries)),
            include_states: interned(given(&n.include_states)),
            include_cities: interned(given(&n.include_cities)),
            include_device_types: interned(given(&n.include_device_types)),
            include_browsers: interned(given(&n.include_browsers)),
            attribute_keys: n
                .attributes
                .iter()
                .flatten()
                .map(|group| group.iter().map(|r| Sym::existing(&r.key)).collect())
                .collect(),
            indexed: false,
        }
    }

    /// The positions in `Site::subscribers` the include filters narrow the audience to,
    /// from the site's indexes (segments, countries, states, cities, device types, browsers)
    /// and its hash and profile look-ups; `None` when no filter narrows it (then every
    /// subscriber is a candidate). A superset of the audience: each candidate is still
    /// checked with [`Selector::selects`], so the answer is the walk's, in the same order.
    pub fn candidates(&mut self, site: &Site) -> Option<RoaringBitmap> {
        let n = self.n;
        let index = site.index();
        let mut narrowed: Option<RoaringBitmap> = None;
        let mut narrow = |set: RoaringBitmap| {
            narrowed = Some(match narrowed.take() {
                Some(before) => before & set,
                None => set,
            });
        };
        if n.include_segments.is_some() {
            narrow(index.in_segments(&self.include_segments));
        }
        for (field, list) in [
            (Field::Country, &n.include_countries),
            (Field::State, &n.include_states),
            (Field::City, &n.include_cities),
            (Field::DeviceType, &n.include_device_types),
            (Field::Browser, &n.include_browsers),
        ] {
            if let Some(list) = list {
                narrow(index.any_of(field, list));
            }
        }
        let at = |i: usize| u32::try_from(i).ok();
        if n.subscriber_hash.is_some() {
            narrow(
                self.hashes
                    .iter()
                    .filter_map(|h| site.subscriber_position(h).and_then(at))
                    .collect(),
            );
        }
        if let Some(profile_ids) = &n.profile_id {
            narrow(
                profile_ids
                    .iter()
                    .flat_map(|p| site.profile_positions(p))
                    .filter_map(|&i| at(i))
                    .collect(),
            );
        }
        self.indexed = narrowed.is_some();
        narrowed
    }

    pub fn selects(&self, sub: &Subscriber) -> bool {
        let n = self.n;
        if sub.unsubscribed_at.is_some() {
            return false;
        }
        let in_segments = |ids: &[i64]| ids.iter().any(|id| sub.segments.contains(id));
        (n.include_segments.is_none() || in_segments(&self.include_segments))
            && (n.include_countries.is_none() || one_of(&self.include_countries, sub.country))
            && (n.include_states.is_none() || one_of(&self.include_states, sub.state))
            && (n.include_cities.is_none() || one_of(&self.include_cities, sub.city))
            && (n.include_device_types.is_none()
                || one_of(&self.include_device_types, sub.device_type))
            && (n.include_browsers.is_none() || one_of(&self.include_browsers, sub.browser))
            && self.selects_the_rest(sub)
    }

    /// [`Selector::selects`] of one of [`Selector::candidates`]: the include filters the
    /// indexes answered are not read again (a subscriber's segments lie apart from it, and
    /// reading them for each candidate of a large audience cost as much as its delivery).
    pub fn selects_candidate(&self, sub: &Subscriber) -> bool {
        if !self.indexed {
            return self.selects(sub);
        }
        sub.unsubscribed_at.is_none() && self.selects_the_rest(sub)
    }

    /// The filters no index answers: exclusions, profile ids, hashes, dates, attributes.
    fn selects_the_rest(&self, sub: &Subscriber) -> bool {
        let n = self.n;
        let in_segments = |ids: &[i64]| ids.iter().any(|id| sub.segments.contains(id));
        (self.exclude_segments.is_empty() || !in_segments(&self.exclude_segments))
            && !one_of(&self.exclude_countries, sub.country)
            && n.profile_id
                .as_ref()
                .is_none_or(|ids| any_of(ids, &sub.profile_id))
            && (n.subscriber_hash.is_none() || self.hashes.contains(&*sub.subscriber_hash.text()))
            && self.from.is_none_or(|from| sub.subscribed_at >= from)
            && self.to.is_none_or(|to| sub.subscribed_at < to)
            && n.attributes
                .as_ref()
                .is_none_or(|groups| self.attributes_match(groups, sub))
    }

    /// The attribute filter: groups OR-ed, rules in a group AND-ed, no groups selecting
    /// everyone; each rule's key found by its interned number.
    fn attributes_match(&self, groups: &[Vec<AttributeRule>], sub: &Subscriber) -> bool {
        groups.is_empty()
            || groups.iter().zip(&self.attribute_keys).any(|(g, keys)| {
                g.iter()
                    .zip(keys)
                    .all(|(r, key)| scalar_holds(r, key.and_then(|k| sub.attributes.scalar_of(k))))
            })
    }
}

/// [`rule_holds`] on an attribute as a subscriber holds it: a text compared where it lies,
/// not copied into a JSON value for each subscriber a broadcast reads.
fn scalar_holds(rule: &AttributeRule, attr: Option<&Scalar>) -> bool {
    match attr {
        Some(Scalar::Text(text)) => {
            // A string equals and orders against strings only (as `same` and `order`).
            let order = |want: &Value| want.as_str().map(|w| (**text).cmp(w));
            holds(rule, order, order)
        }
        other => rule_holds(rule, other.map(Scalar::value).as_deref()),
    }
}

/// Numbers compare as numbers, strings as strings; values of different types are never
/// equal or ordered. A missing attribute satisfies only `not_exists`.
pub fn rule_holds(rule: &AttributeRule, attr: Option<&Value>) -> bool {
    let Some(attr) = attr.filter(|a| !a.is_null()) else {
        return rule.op == "not_exists";
    };
    let equal = |want: &Value| same(attr, want).then_some(Ordering::Equal);
    holds(rule, equal, |want| order(attr, want))
}

/// `rule` on a present attribute, told how it equals (`Some(Equal)`) and orders against a
/// wanted value.
fn holds(
    rule: &AttributeRule,
    equal: impl Fn(&Value) -> Option<Ordering>,
    order: impl Fn(&Value) -> Option<Ordering>,
) -> bool {
    let want = &rule.value.0;
    let same = |w: &Value| equal(w) == Some(Ordering::Equal);
    match rule.op.as_str() {
        "exists" => true,
        "not_exists" => false,
        "eq" => same(want),
        "ne" => !same(want),
        "lt" => order(want) == Some(Ordering::Less),
        "lte" => matches!(order(want), Some(Ordering::Less | Ordering::Equal)),
        "gt" => order(want) == Some(Ordering::Greater),
        "gte" => matches!(order(want), Some(Ordering::Greater | Ordering::Equal)),
        "in" => want.as_array().is_some_and(|xs| xs.iter().any(same)),
        "nin" => !want.as_array().is_some_and(|xs| xs.iter().any(same)),
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

#[cfg(test)]
mod tests {
    use chrono::{Duration, TimeZone};

    use serde_json::json;

    use super::*;
    use crate::emulator::state::{SegmentRec, Sym};
    use crate::model::NewNotification;

    const COUNTRIES: [&str; 4] = ["US", "DE", "FR", "JP"];
    const BROWSERS: [&str; 3] = ["chrome", "safari", "firefox"];

    fn pick(rng: &mut fastrand::Rng, from: &[&str]) -> Option<Sym> {
        let i = rng.usize(0..=from.len());
        from.get(i).map(|t| Sym::of(t))
    }

    /// A site of `n` subscribers with random profiles and memberships, changed afterwards
    /// through the site's segment operations.
    fn site(n: usize, rng: &mut fastrand::Rng) -> Site {
        let at = Utc.with_ymd_and_hms(2030, 1, 1, 0, 0, 0).unwrap();
        let mut site = Site::new(1, "k".into());
        for id in 1..=4 {
            site.segments.push(SegmentRec {
                segment_id: id,
                segment_name: format!("s{id}"),
                segment_type: "custom".into(),
                created_at: at,
            });
        }
        for i in 0..n {
            site.add_subscriber(Subscriber {
                subscriber_hash: format!("h{i}").as_str().into(),
                profile_id: (i % 3 == 0).then(|| format!("p{}", i % 50).into()),
                country: pick(rng, &COUNTRIES),
                state: None,
                city: pick(rng, &["Paris", "Berlin"]),
                device: None,
                device_type: pick(rng, &["desktop", "mobile"]),
                browser: pick(rng, &BROWSERS),
                platform: None,
                attributes: Default::default(),
                subscribed_at: at + Duration::days(rng.i64(0..10)),
                unsubscribed_at: (rng.u8(..) < 20).then_some(at),
                segments: (1..=3).filter(|_| rng.bool()).collect(),
                online: true,
            });
        }
        for _ in 0..n {
            let (at, id) = (rng.usize(0..n), rng.i64(1..=4));
            if rng.bool() {
                site.join_segment(at, id);
            } else {
                site.leave_segment(at, id);
            }
        }
        site.delete_segment(3);
        site
    }

    /// Some of `from`, or `None` (the list not given) for none of them.
    fn some(rng: &mut fastrand::Rng, from: &[&str]) -> Option<Vec<String>> {
        let picked: Vec<String> = from
            .iter()
            .filter(|_| rng.u8(..) < 60)
            .map(|t| t.to_string())
            .collect();
        Some(picked).filter(|p| !p.is_empty())
    }

    #[test]
    fn the_indexes_choose_exactly_whom_a_walk_of_every_subscriber_chooses() {
        let mut rng = fastrand::Rng::with_seed(4);
        let site = site(3_000, &mut rng);
        let mut narrowed = 0;
        for _ in 0..400 {
            let n = NewNotification {
                include_segments: some(&mut rng, &["1", "2", "3", "4", "x"]),
                exclude_segments: some(&mut rng, &["2"]),
                include_countries: some(&mut rng, &["US", "DE", "NZ"]),
                exclude_countries: some(&mut rng, &["FR"]),
                include_cities: some(&mut rng, &["Paris"]),
                include_device_types: some(&mut rng, &["mobile"]),
                include_browsers: some(&mut rng, &BROWSERS),
                profile_id: some(&mut rng, &["p3", "p6", "p9"]),
                subscriber_hash: some(&mut rng, &["h1", "h2", "h3", "h9", "h300"]),
                ..Default::default()
            };
            let mut selector = Selector::of(&n);
            let walk: Vec<usize> = (0..site.subscribers.len())
                .filter(|&at| selector.selects(&site.subscribers[at]))
                .collect();
            // The candidates checked without the filters the indexes answered: exact.
            let indexed: Vec<usize> = match selector.candidates(&site) {
                Some(few) => {
                    narrowed += 1;
                    few.iter()
                        .map(|at| at as usize)
                        .filter(|&at| selector.selects_candidate(&site.subscribers[at]))
                        .collect()
                }
                None => walk.clone(),
            };
            assert_eq!(indexed, walk, "{n:?}");
        }
        assert!(narrowed > 350, "most draws have an include filter");
        let members: Vec<usize> = site.index().members(1).collect();
        let holders: Vec<usize> = (0..site.subscribers.len())
            .filter(|&at| site.subscribers[at].segments.contains(&1))
            .collect();
        assert_eq!(members, holders);
        assert!(site.subscribers.iter().all(|s| !s.segments.contains(&3)));
        assert_eq!(site.index().members(3).count(), 0);
    }

    #[test]
    fn a_text_attribute_is_judged_where_it_lies_as_its_json_value_would_be() {
        let values = [
            json!("pro"),
            json!("free"),
            json!(3),
            json!(null),
            json!(true),
            json!(["pro"]),
        ];
        // Every operator the API takes, and one it does not.
        let ops = crate::validate::ATTRIBUTE_OPS.iter().chain(&["x"]);
        for held in [json!("pro"), json!("apple"), json!(7), json!(false)] {
            let scalar = Scalar::from(held.clone());
            for op in ops.clone() {
                for want in &values {
                    let rule: AttributeRule = serde_json::from_value(
                        json!({"key": "plan", "op": op, "value": want.clone()}),
                    )
                    .unwrap();
                    assert_eq!(
                        scalar_holds(&rule, Some(&scalar)),
                        rule_holds(&rule, Some(&held)),
                        "{held} {op} {want}"
                    );
                }
            }
        }
    }
}

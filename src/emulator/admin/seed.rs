//! Many given subscribers in one operation: rows (a list of objects, each as
//! `add_subscriber` takes one) or columns (a data frame's: one list per field). Everything is
//! checked before anything is added: a refused batch leaves the site as it was. A population
//! drawn from distributions is `population.rs`.

use std::collections::HashSet;
use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use super::args::{str_arg, time_arg};
use crate::emulator::engine;
use crate::emulator::state::{Attributes, Counters, Site, Subscriber, SubscriberHash, Sym};

/// The profile fields of a subscriber, which a population draws from a distribution each.
pub const DRAWN: [&str; 7] = [
    "country",
    "state",
    "city",
    "device",
    "device_type",
    "browser",
    "platform",
];

/// The fields of a subscriber as `add_subscriber` takes them (its `api_key` apart).
pub static FIELDS: LazyLock<Vec<&str>> = LazyLock::new(|| {
    [
        &["subscriber_hash", "profile_id"][..],
        &DRAWN,
        &["attributes", "subscribed_at", "online", "segments"],
    ]
    .concat()
});

/// A subscriber read from its fields, before the site has seen it: its segments still to be
/// checked, its subscription date still to default to the site's clock.
pub struct NewSubscriber {
    pub sub: Subscriber,
    pub segments: Vec<i64>,
    pub subscribed_at: Option<DateTime<Utc>>,
}

pub fn random_hash(rng: &mut fastrand::Rng) -> String {
    format!("{:032x}", rng.u128(..))
}

/// A subscriber from an object of [`FIELDS`]; an error names the field.
pub fn subscriber_of(args: &Map<String, Value>) -> Result<NewSubscriber, String> {
    if let Some(k) = args.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        return Err(format!(
            "{k} is not a field of a subscriber (the fields: {})",
            FIELDS.join(", ")
        ));
    }
    let attributes = match args.get("attributes") {
        None | Some(Value::Null) => Attributes::default(),
        Some(Value::Object(m)) => Attributes::from(m.clone()),
        Some(_) => return Err("attributes must be an object".into()),
    };
    let segments: Vec<i64> = match args.get("segments") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| {
                v.as_i64()
                    .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
                    .ok_or("segments must be segment ids")
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err("segments must be a list of segment ids".into()),
    };
    let sub = Subscriber {
        subscriber_hash: match str_arg(args, "subscriber_hash")? {
            Some(h) if h.is_empty() => return Err("subscriber_hash must not be empty".into()),
            Some(h) => h.into(),
            None => SubscriberHash::default(),
        },
        profile_id: str_arg(args, "profile_id")?.map(String::into_boxed_str),
        country: str_arg(args, "country")?.map(Sym::from),
        state: str_arg(args, "state")?.map(Sym::from),
        city: str_arg(args, "city")?.map(Sym::from),
        device: str_arg(args, "device")?.map(Sym::from),
        device_type: str_arg(args, "device_type")?.map(Sym::from),
        browser: str_arg(args, "browser")?.map(Sym::from),
        platform: str_arg(args, "platform")?.map(Sym::from),
        attributes,
        subscribed_at: DateTime::<Utc>::MIN_UTC,
        unsubscribed_at: None,
        segments: Default::default(),
        online: match args.get("online") {
            None | Some(Value::Null) => true,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err("online must be true or false".into()),
        },
    };
    Ok(NewSubscriber {
        sub,
        segments,
        subscribed_at: time_arg(args, "subscribed_at")?,
    })
}

/// The rows of `rows` (a list of objects) or `columns` (an object of equally long lists;
/// `attributes.<name>` columns are attributes, a null cell is no value).
pub fn read_batch(args: &Map<String, Value>) -> Result<Vec<NewSubscriber>, String> {
    let at = |i: usize| move |e: String| format!("row {i}: {e}");
    match (args.get("rows"), args.get("columns")) {
        (Some(Value::Array(rows)), None) => rows
            .iter()
            .enumerate()
            .map(|(i, row)| match row {
                Value::Object(m) => subscriber_of(m).map_err(at(i)),
                _ => Err(format!(
                    "row {i}: a subscriber must be an object of its fields"
                )),
            })
            .collect(),
        (None, Some(Value::Object(columns))) => {
            let mut len = None;
            for (name, col) in columns {
                let Value::Array(values) = col else {
                    return Err(format!("column {name} must be a list of values"));
                };
                match len {
                    None => len = Some((name, values.len())),
                    Some((first, n)) if n != values.len() => {
                        return Err(format!(
                            "column {name} has {} values, column {first} has {n}",
                            values.len()
                        ))
                    }
                    Some(_) => {}
                }
                let field = name.strip_prefix("attributes.").unwrap_or(name);
                if field == name && !FIELDS.contains(&name.as_str()) {
                    return Err(format!(
                        "column {name} is not a field of a subscriber (the fields: {}; \
                         name an attribute's column attributes.{name})",
                        FIELDS.join(", ")
                    ));
                }
            }
            let rows = len.map_or(0, |(_, n)| n);
            (0..rows)
                .map(|i| {
                    let mut row = Map::new();
                    let mut attributes = Map::new();
                    for (name, col) in columns {
                        let v = &col[i];
                        if v.is_null() {
                            continue;
                        }
                        match name.strip_prefix("attributes.") {
                            Some(attr) => {
                                attributes.insert(attr.to_string(), v.clone());
                            }
                            None => {
                                row.insert(name.clone(), v.clone());
                            }
                        }
                    }
                    if !attributes.is_empty() {
                        match row.get_mut("attributes") {
                            Some(Value::Object(m)) => m.extend(attributes),
                            Some(_) => {}
                            None => {
                                row.insert("attributes".into(), Value::Object(attributes));
                            }
                        }
                    }
                    subscriber_of(&row).map_err(at(i))
                })
                .collect()
        }
        (Some(_), Some(_)) => Err("give rows or columns, not both".into()),
        (Some(_), None) => Err("rows must be a list of subscribers".into()),
        (None, Some(_)) => Err("columns must be an object of lists".into()),
        (None, None) => Err("give rows (a list of subscribers) or columns".into()),
    }
}

/// Adds a checked batch: every hash new (one is drawn for a row without), every segment
/// the site's. All or nothing. The hashes, in the batch's order.
pub fn add_batch(
    site: &mut Site,
    ids: &mut Counters,
    now: DateTime<Utc>,
    batch: Vec<NewSubscriber>,
) -> Result<Vec<String>, String> {
    let mut rng = fastrand::Rng::new();
    let mut taken: HashSet<&SubscriberHash> = HashSet::with_capacity(batch.len());
    for (i, n) in batch.iter().enumerate() {
        let hash = &n.sub.subscriber_hash;
        if !hash.is_empty() && (site.subscriber(&hash.text()).is_some() || !taken.insert(hash)) {
            return Err(format!("row {i}: subscriber {hash} already exists"));
        }
        if let Some(id) = n.segments.iter().find(|id| site.segment(**id).is_none()) {
            return Err(format!("row {i}: segment {id} does not exist"));
        }
    }
    drop(taken);
    let mut hashes = Vec::with_capacity(batch.len());
    site.reserve_subscribers(batch.len());
    for n in batch {
        let mut sub = n.sub;
        if sub.subscriber_hash.is_empty() {
            sub.subscriber_hash = fresh_hash(site, &mut rng).into();
        }
        sub.subscribed_at = n.subscribed_at.unwrap_or(now);
        sub.segments = n.segments.into_iter().collect();
        hashes.push(sub.subscriber_hash.to_string());
        site.add_subscriber(sub);
    }
    engine::on_audience_change(site, ids, now, &hashes);
    Ok(hashes)
}

fn fresh_hash(site: &Site, rng: &mut fastrand::Rng) -> String {
    loop {
        let hash = random_hash(rng);
        if site.subscriber(&hash).is_none() {
            return hash;
        }
    }
}

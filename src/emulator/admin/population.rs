//! A generated population: many subscribers drawn from given distributions (or the default
//! mix of `mix.rs`), seeded so that a seed draws the same site on any number of cores. Checked
//! before anything is added: a refused population leaves the site as it was.

use std::sync::LazyLock;

use chrono::{DateTime, Duration, Utc};
use serde_json::{Map, Value};

use super::args::time_arg;
use super::dist::Dist;
use super::mix::{self, Mix};
use super::seed::DRAWN;
use crate::emulator::state::{Counters, Site, Subscriber, SubscriberHash, Sym};
use crate::emulator::{engine, parallel};

/// A fraction from 0 to 1 (`online`, a segment's share).
fn fraction(v: &Value, name: &str) -> Result<f64, String> {
    match v.as_f64() {
        Some(f) if (0.0..=1.0).contains(&f) => Ok(f),
        _ => Err(format!("{name} must be a fraction from 0 to 1")),
    }
}

/// The arguments of `generate_subscribers`.
static GENERATE_ARGS: LazyLock<Vec<&str>> = LazyLock::new(|| {
    [
        &["api_key", "count", "seed"][..],
        &DRAWN,
        &[
            "attributes",
            "subscribed_between",
            "online",
            "segments",
            "profile_id",
        ],
    ]
    .concat()
});

/// How many subscribers of a generated population one generator draws.
const BLOCK: usize = 1 << 16;

/// A population described by its distributions, ready to draw from.
pub struct Population {
    count: usize,
    seed: Option<u64>,
    fields: Vec<(usize, Dist)>,
    attributes: Vec<(String, Dist)>,
    between: Option<(DateTime<Utc>, DateTime<Utc>)>,
    online: f64,
    segments: Vec<(i64, f64)>,
    /// Each subscriber's profile id: the pattern with `{n}` replaced by the subscriber's
    /// number on the site (its first subscriber is 1).
    profile_id: Option<String>,
}

impl Population {
    pub fn of(args: &Map<String, Value>) -> Result<Population, String> {
        if let Some(k) = args.keys().find(|k| !GENERATE_ARGS.contains(&k.as_str())) {
            return Err(format!(
                "{k} is not an argument of generate_subscribers (they are: {})",
                GENERATE_ARGS[1..].join(", ")
            ));
        }
        let count = match args.get("count") {
            Some(Value::Number(n)) => n
                .as_u64()
                .filter(|n| *n <= 100_000_000)
                .ok_or("count must be a whole number from 0 to 100,000,000")?,
            _ => return Err("count must be a whole number from 0 to 100,000,000".into()),
        } as usize;
        let seed = match args.get("seed") {
            None | Some(Value::Null) => None,
            Some(v) => Some(v.as_u64().ok_or("seed must be a whole number from 0 up")?),
        };
        let mut fields = Vec::new();
        for (i, name) in DRAWN.iter().enumerate() {
            match args.get(*name) {
                None | Some(Value::Null) => {}
                Some(v) => {
                    let d = Dist::of(v, name)?;
                    if let Some(bad) = d.values.iter().find(|v| !(v.is_string() || v.is_null())) {
                        return Err(format!("{name}: {bad} is not text"));
                    }
                    fields.push((i, d));
                }
            }
        }
        let attributes = match args.get("attributes") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Object(o)) => o
                .iter()
                .map(|(k, v)| Ok((k.clone(), Dist::of(v, &format!("attributes.{k}"))?)))
                .collect::<Result<_, String>>()?,
            Some(_) => return Err("attributes must be an object of distributions".into()),
        };
        let between = match args.get("subscribed_between") {
            None | Some(Value::Null) => None,
            Some(Value::Array(a)) if a.len() == 2 => {
                let mut m = Map::new();
                m.insert("from".into(), a[0].clone());
                m.insert("to".into(), a[1].clone());
                let at = |k: &str| {
                    time_arg(&m, k)?.ok_or_else(|| format!("subscribed_between: {k} is missing"))
                };
                let (from, to) = (at("from")?, at("to")?);
                if to < from {
                    return Err("subscribed_between: the end comes before the start".into());
                }
                Some((from, to))
            }
            Some(_) => return Err("subscribed_between must be [start, end]".into()),
        };
        let online = match args.get("online") {
            None | Some(Value::Null) => mix::DEFAULT_ONLINE,
            Some(Value::Bool(b)) => f64::from(u8::from(*b)),
            Some(v) => fraction(v, "online")?,
        };
        let segments = match args.get("segments") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Object(o)) => o
                .iter()
                .map(|(k, v)| {
                    let id = k
                        .trim()
                        .parse::<i64>()
                        .map_err(|_| format!("segments: {k} is not a segment id"))?;
                    Ok((id, fraction(v, &format!("segments.{k}"))?))
                })
                .collect::<Result<_, String>>()?,
            Some(_) => {
                return Err("segments must be an object of segment id to the share in it".into())
            }
        };
        let profile_id = match args.get("profile_id") {
            None | Some(Value::Null) => None,
            Some(Value::String(p)) if p.contains("{n}") => Some(p.clone()),
            Some(_) => {
                return Err(
                    "profile_id must be a pattern with {n}, the subscriber's number on \
                            the site (\"user-{n}\")"
                        .into(),
                )
            }
        };
        Ok(Population {
            count,
            seed,
            fields,
            attributes,
            between,
            online,
            segments,
            profile_id,
        })
    }

    /// Adds the population to `site` (its segments checked first); how many were added.
    pub fn add_to(
        &self,
        site: &mut Site,
        ids: &mut Counters,
        now: DateTime<Utc>,
    ) -> Result<usize, String> {
        if let Some((id, _)) = self
            .segments
            .iter()
            .find(|(id, _)| site.segment(*id).is_none())
        {
            return Err(format!("segment {id} does not exist"));
        }
        let mut rng = match self.seed {
            Some(s) => fastrand::Rng::with_seed(s),
            None => fastrand::Rng::new(),
        };
        let (from, to) = self
            .between
            .unwrap_or((now - Duration::days(mix::DEFAULT_JOIN_DAYS), now));
        let span = (to - from).num_milliseconds();
        let mut given = [false; 7];
        for (i, _) in &self.fields {
            given[*i] = true;
        }
        // The new hashes, for the drips they may start (none kept when no drip is active:
        // a million strings made for nothing).
        let starts_drips = site.drips.iter().any(|d| d.drip.status == "active");
        let mut hashes = Vec::with_capacity(if starts_drips { self.count } else { 0 });
        site.reserve_subscribers(self.count);
        let first = site.subscribers.len();
        // Each field's values and each attribute's name interned once, not per subscriber.
        let fields: Vec<(usize, &Dist, Vec<Option<Sym>>)> = self
            .fields
            .iter()
            .map(|(i, d)| {
                (
                    *i,
                    d,
                    d.values.iter().map(|v| v.as_str().map(Sym::of)).collect(),
                )
            })
            .collect();
        let names: Vec<(Sym, &Dist)> = self
            .attributes
            .iter()
            .map(|(k, d)| (Sym::of(k), d))
            .collect();
        let draw = |rng: &mut fastrand::Rng, mix: &mut Mix| {
            let mut profile: mix::Profile = [None; 7];
            for (i, d, syms) in &fields {
                profile[*i] = syms[d.pick(rng)];
            }
            mix.fill(&mut profile, rng);
            let [country, state, city, device, device_type, browser, platform] = profile;
            let attributes = names
                .iter()
                .filter_map(|(k, d)| {
                    let v = &d.values[d.pick(rng)];
                    (!v.is_null()).then(|| (*k, v.clone()))
                })
                .collect();
            let subscribed_at = if span > 0 {
                from + Duration::milliseconds(rng.i64(0..=span))
            } else {
                from
            };
            let online = self.online >= 1.0 || rng.f64() < self.online;
            let segments = self
                .segments
                .iter()
                .filter(|(_, share)| rng.f64() < *share)
                .map(|(id, _)| *id)
                .collect();
            Subscriber {
                // A made-up hash is 32 hex digits, packed as it is drawn.
                subscriber_hash: SubscriberHash::Hex(rng.u128(..).to_be_bytes()),
                profile_id: None,
                country,
                state,
                city,
                device,
                device_type,
                browser,
                platform,
                attributes,
                subscribed_at,
                unsubscribed_at: None,
                segments,
                online,
            }
        };
        // Drawn where they will lie, on every core, a block at a time, each block from a
        // generator forked in turn from the population's: the same population for a seed
        // however many cores draw it.
        let blocks: Vec<(usize, (fastrand::Rng, Mix))> = (0..self.count)
            .step_by(BLOCK)
            .map(|start| {
                (
                    BLOCK.min(self.count - start),
                    (rng.fork(), Mix::new(&given)),
                )
            })
            .collect();
        parallel::extend_in_parts(&mut site.subscribers, blocks, |(rng, mix)| draw(rng, mix));
        if let Some(pattern) = &self.profile_id {
            for (at, sub) in site.subscribers.iter_mut().enumerate().skip(first) {
                sub.profile_id = Some(pattern.replace("{n}", &(at + 1).to_string()).into());
            }
        }
        // Indexed together, all of them; a hash already taken drawn again.
        site.index_pushed(first, || SubscriberHash::Hex(rng.u128(..).to_be_bytes()));
        if starts_drips {
            hashes.extend(
                site.subscribers[first..]
                    .iter()
                    .map(|s| s.subscriber_hash.to_string()),
            );
        }
        engine::on_audience_change(site, ids, now, &hashes);
        Ok(self.count)
    }
}

#[cfg(test)]
mod tests {
    use chrono::Utc;
    use serde_json::json;

    use super::{Population, BLOCK};
    use crate::emulator::state::{Counters, Site};

    /// A population of several blocks, seeded: its countries, devices and hashes.
    fn drawn(seed: u64) -> Vec<(Option<&'static str>, Option<&'static str>, String)> {
        let args = json!({"count": 2 * BLOCK + 17, "seed": seed});
        let population = Population::of(args.as_object().expect("an object")).expect("valid");
        let mut site = Site::new(1, "site-key-1234".into());
        population
            .add_to(&mut site, &mut Counters::default(), Utc::now())
            .expect("generated");
        let text = |t: Option<crate::emulator::state::Sym>| t.map(|t| t.as_str());
        site.subscribers
            .iter()
            .map(|r| {
                (
                    text(r.country),
                    text(r.device),
                    r.subscriber_hash.to_string(),
                )
            })
            .collect()
    }

    #[test]
    fn a_seed_draws_the_same_population_across_blocks_and_each_block_its_own() {
        let first = drawn(5);
        assert_eq!(
            first,
            drawn(5),
            "a seed makes the same population on every run"
        );
        // Each block drawn from a generator of its own: no block starts as another does.
        let profiles = |block: &[(_, _, String)]| -> Vec<_> {
            block[..17].iter().map(|(c, d, _)| (*c, *d)).collect()
        };
        let blocks: Vec<_> = first.chunks(BLOCK).map(profiles).collect();
        assert!(blocks.windows(2).all(|w| w[0] != w[1]));
    }
}

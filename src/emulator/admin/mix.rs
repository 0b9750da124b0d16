//! The default mix of a generated population (`generate_subscribers` without a distribution
//! for a field): where subscribers are (a country with its states and cities) and what they
//! subscribe from (a device type with its devices, browsers and platforms), so that a
//! generated site's inspector, targeting and analytics look like a real site's.
//!
//! Each table is a list of coherent rows with a weight (a share in percent). A field given a
//! distribution is drawn from it; the table's other fields are then drawn from the rows that
//! agree with what was given (a given `country=["DE"]` gets German states and cities, a given
//! `browser=["safari"]` Apple devices); when no row agrees they stay empty. The tables are
//! documented in `docs/emulator.md`.

use std::collections::HashMap;

use super::dist::Dist;
use crate::emulator::state::Sym;

/// Places: country, state, city, share in percent (sums to 100).
const PLACES: [([&str; 3], u32); 32] = [
    (["US", "California", "Los Angeles"], 6),
    (["US", "California", "San Francisco"], 4),
    (["US", "New York", "New York"], 7),
    (["US", "Texas", "Houston"], 4),
    (["US", "Texas", "Austin"], 3),
    (["US", "Illinois", "Chicago"], 4),
    (["US", "Florida", "Miami"], 3),
    (["US", "Washington", "Seattle"], 3),
    (["IN", "Maharashtra", "Mumbai"], 4),
    (["IN", "Maharashtra", "Pune"], 2),
    (["IN", "Karnataka", "Bengaluru"], 3),
    (["IN", "Delhi", "New Delhi"], 3),
    (["GB", "England", "London"], 5),
    (["GB", "England", "Manchester"], 2),
    (["GB", "Scotland", "Edinburgh"], 1),
    (["DE", "Berlin", "Berlin"], 3),
    (["DE", "Bavaria", "Munich"], 2),
    (["DE", "Hamburg", "Hamburg"], 2),
    (["BR", "São Paulo", "São Paulo"], 4),
    (["BR", "Rio de Janeiro", "Rio de Janeiro"], 2),
    (["FR", "Île-de-France", "Paris"], 4),
    (["FR", "Auvergne-Rhône-Alpes", "Lyon"], 2),
    (["CA", "Ontario", "Toronto"], 3),
    (["CA", "Quebec", "Montreal"], 2),
    (["CA", "British Columbia", "Vancouver"], 1),
    (["JP", "Tokyo", "Tokyo"], 3),
    (["JP", "Osaka", "Osaka"], 2),
    (["AU", "New South Wales", "Sydney"], 4),
    (["MX", "Mexico City", "Mexico City"], 3),
    (["MX", "Jalisco", "Guadalajara"], 1),
    (["ES", "Madrid", "Madrid"], 4),
    (["IT", "Lombardy", "Milan"], 4),
];

/// Devices: device type, device, browser, platform, share in percent (sums to 100).
const DEVICES: [([&str; 4], u32); 16] = [
    (["desktop", "Windows PC", "chrome", "windows"], 24),
    (["desktop", "Windows PC", "edge", "windows"], 8),
    (["desktop", "Windows PC", "firefox", "windows"], 4),
    (["desktop", "Mac", "chrome", "macos"], 7),
    (["desktop", "Mac", "safari", "macos"], 6),
    (["desktop", "Mac", "firefox", "macos"], 1),
    (["desktop", "Linux PC", "chrome", "linux"], 2),
    (["desktop", "Linux PC", "firefox", "linux"], 2),
    (["desktop", "Chromebook", "chrome", "chromeos"], 1),
    (["mobile", "Android phone", "chrome", "android"], 22),
    (["mobile", "Android phone", "samsung", "android"], 5),
    (["mobile", "Android phone", "opera", "android"], 2),
    (["mobile", "Android phone", "firefox", "android"], 1),
    (["mobile", "iPhone", "safari", "ios"], 10),
    (["tablet", "iPad", "safari", "ipados"], 3),
    (["tablet", "Android tablet", "chrome", "android"], 2),
];

/// The places' fields, as positions in a subscriber's drawn profile
/// (`seed::DRAWN`: country, state, city, device, device_type, browser, platform).
const PLACE_FIELDS: [usize; 3] = [0, 1, 2];
/// The devices' fields, likewise.
const DEVICE_FIELDS: [usize; 4] = [4, 3, 5, 6];

/// The share of devices online when `online` is not given: a real audience has some
/// browsers closed, whose notifications wait (pending) until they open or expire.
pub const DEFAULT_ONLINE: f64 = 0.9;

/// The days over which join dates spread when `subscribed_between` is not given: the past
/// year, up to now.
pub const DEFAULT_JOIN_DAYS: i64 = 365;

/// A profile as drawn so far: each field's value, `None` where nothing is there.
pub type Profile = [Option<Sym>; 7];

/// The rows agreeing with some given values, and a draw among them by weight.
type Agreeing = (Vec<usize>, Dist);

/// The given fields' values of a table (at most four fields), with whether each was given
/// and empty: a key on the stack, looked up once per subscriber.
type Key = [(bool, Option<Sym>); 4];

/// One table, interned, with the draws it has made ready for each combination of given
/// values it met (a population draws from a handful of them, ten million times).
struct Table {
    fields: Vec<usize>,
    rows: Vec<Vec<Sym>>,
    weights: Vec<f64>,
    /// Which of the table's fields have a distribution of their own (left as drawn).
    given: Vec<bool>,
    /// For a combination of the given fields' values (in the table's order, `None` where
    /// a field is not given or its value is empty): the rows agreeing with it, drawn by
    /// weight; `None` when none agrees.
    ready: HashMap<Key, Option<Agreeing>, foldhash::fast::RandomState>,
}

impl Table {
    fn new<const N: usize>(rows: &[([&str; N], u32)], fields: &[usize], given: &[bool; 7]) -> Self {
        Table {
            fields: fields.to_vec(),
            rows: rows
                .iter()
                .map(|(r, _)| r.iter().map(|t| Sym::of(t)).collect())
                .collect(),
            weights: rows.iter().map(|(_, w)| f64::from(*w)).collect(),
            given: fields.iter().map(|&f| given[f]).collect(),
            ready: HashMap::default(),
        }
    }

    /// Fills the fields the caller gave no distribution for, from a row that agrees with
    /// those it did.
    fn fill(&mut self, profile: &mut Profile, rng: &mut fastrand::Rng) {
        if self.given.iter().all(|g| *g) {
            return;
        }
        let mut key: Key = [(false, None); 4];
        for (i, (&f, &g)) in self.fields.iter().zip(&self.given).enumerate() {
            key[i] = (g, if g { profile[f] } else { None });
        }
        let Table {
            rows,
            weights,
            ready,
            ..
        } = self;
        let draw = ready.entry(key).or_insert_with_key(|key| {
            // A row agrees when each given field's value is the row's (an empty one none).
            let agreeing: Vec<usize> = (0..rows.len())
                .filter(|&r| {
                    key.iter()
                        .zip(&rows[r])
                        .all(|((given, value), have)| !given || *value == Some(*have))
                })
                .collect();
            let w: Vec<f64> = agreeing.iter().map(|&r| weights[r]).collect();
            Dist::of_weights(w).map(|d| (agreeing, d))
        });
        if let Some((agreeing, dist)) = draw {
            let row = &rows[agreeing[dist.pick(rng)]];
            for (i, &f) in self.fields.iter().enumerate() {
                if !self.given[i] {
                    profile[f] = Some(row[i]);
                }
            }
        }
    }
}

/// The default mix for a population whose fields in `given` (by position in `seed::DRAWN`)
/// have a distribution of their own.
pub struct Mix {
    places: Table,
    devices: Table,
}

impl Mix {
    pub fn new(given: &[bool; 7]) -> Mix {
        Mix {
            places: Table::new(&PLACES, &PLACE_FIELDS, given),
            devices: Table::new(&DEVICES, &DEVICE_FIELDS, given),
        }
    }

    /// Fills what the given distributions left to the mix.
    pub fn fill(&mut self, profile: &mut Profile, rng: &mut fastrand::Rng) {
        self.places.fill(profile, rng);
        self.devices.fill(profile, rng);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tables_shares_add_up_to_a_hundred() {
        assert_eq!(PLACES.iter().map(|(_, w)| w).sum::<u32>(), 100);
        assert_eq!(DEVICES.iter().map(|(_, w)| w).sum::<u32>(), 100);
    }

    #[test]
    fn a_given_country_gets_its_own_cities_and_an_unknown_one_none() {
        let mut given = [false; 7];
        given[0] = true;
        let mut mix = Mix::new(&given);
        let mut rng = fastrand::Rng::with_seed(1);
        for (country, city) in [("DE", true), ("ZZ", false)] {
            for _ in 0..50 {
                let mut p: Profile = [None; 7];
                p[0] = Some(Sym::of(country));
                mix.fill(&mut p, &mut rng);
                assert_eq!(p[2].is_some(), city);
                if let Some(c) = p[2] {
                    assert!(["Berlin", "Munich", "Hamburg"].contains(&c.as_str()));
                }
                assert!(p[4].is_some(), "the devices are still drawn");
            }
        }
    }
}

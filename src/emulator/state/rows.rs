//! What a site holds, row by row: its subscribers (a row of 128 bytes each, ten million to
//! a site) and the records of its segments, drips, broadcasts, products and events, as the
//! state file stores them.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::attributes::Attributes;
use super::hash::SubscriberHash;
use super::index::Indexed;
use super::interned::Sym;
use super::time::{loose, opt_stamp, stamp};
use crate::model::{Drip, NewNotification, Product, SendTo};

/// The segments a subscriber is in: a sorted boxed slice (a subscriber is in a few; a tree's
/// node would take a hundred bytes for each of a million subscribers, a `Vec` its capacity
/// besides).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SegmentSet(Box<[i64]>);

impl SegmentSet {
    /// Adds `id`; false when it was there.
    pub fn insert(&mut self, id: i64) -> bool {
        match self.0.binary_search(&id) {
            Ok(_) => false,
            Err(at) => {
                let mut ids = std::mem::take(&mut self.0).into_vec();
                ids.insert(at, id);
                self.0 = ids.into_boxed_slice();
                true
            }
        }
    }

    pub fn remove(&mut self, id: &i64) -> bool {
        match self.0.binary_search(id) {
            Ok(at) => {
                let mut ids = std::mem::take(&mut self.0).into_vec();
                ids.remove(at);
                self.0 = ids.into_boxed_slice();
                true
            }
            Err(_) => false,
        }
    }

    pub fn contains(&self, id: &i64) -> bool {
        self.0.binary_search(id).is_ok()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, i64> {
        self.0.iter()
    }

    pub fn as_slice(&self) -> &[i64] {
        &self.0
    }
}

impl FromIterator<i64> for SegmentSet {
    fn from_iter<I: IntoIterator<Item = i64>>(ids: I) -> Self {
        let mut v: Vec<i64> = ids.into_iter().collect();
        v.sort_unstable();
        v.dedup();
        SegmentSet(v.into_boxed_slice())
    }
}

/// A subscriber (the spec does not show its record; these are the fields targeting uses).
/// The profile's low-cardinality fields are interned ([`Sym`]: 8 bytes, where an
/// `Option<String>` took 24 and an allocation of its own), the attributes a compact list
/// ([`Attributes`]); both read and write as the text they hold, so the admin API's answers
/// and the state file's layout are those of strings.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Subscriber {
    pub subscriber_hash: SubscriberHash,
    /// Boxed at its length (16 bytes, where a `String` takes 24).
    pub profile_id: Option<Box<str>>,
    pub country: Option<Sym>,
    pub state: Option<Sym>,
    pub city: Option<Sym>,
    pub device: Option<Sym>,
    pub device_type: Option<Sym>,
    pub browser: Option<Sym>,
    pub platform: Option<Sym>,
    #[serde(with = "loose")]
    pub attributes: Attributes,
    #[serde(with = "stamp")]
    pub subscribed_at: DateTime<Utc>,
    #[serde(with = "opt_stamp")]
    pub unsubscribed_at: Option<DateTime<Utc>>,
    /// Changed only through `Site` (`join_segment`, `leave_segment`, `delete_segment`),
    /// which keeps the segment index.
    pub segments: SegmentSet,
    /// Whether the subscriber's device fetches notifications now (else they wait, until
    /// they expire).
    pub online: bool,
}

impl Indexed for Subscriber {
    #[inline]
    fn indexed(&self) -> [Option<Sym>; 5] {
        [
            self.country,
            self.state,
            self.city,
            self.device_type,
            self.browser,
        ]
    }

    #[inline]
    fn segment_ids(&self) -> &[i64] {
        self.segments.as_slice()
    }
}

impl Subscriber {
    /// Its profile fields: country, state, city, device, device type, browser, platform.
    pub fn profile(&self) -> [Option<Sym>; 7] {
        [
            self.country,
            self.state,
            self.city,
            self.device,
            self.device_type,
            self.browser,
            self.platform,
        ]
    }

    /// The interned texts of its profile.
    pub fn texts(&self) -> impl Iterator<Item = Sym> {
        self.profile().into_iter().flatten()
    }
}

// A subscriber's row, held to at compile time: ten million of them are 1.28 GB.
const _: () = assert!(std::mem::size_of::<Subscriber>() == 128);

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SegmentRec {
    pub segment_id: i64,
    pub segment_name: String,
    /// `custom` (made by the site), or `geo`, `device`, `browser` (the service's own,
    /// listed only with `segment_type=all`).
    pub segment_type: String,
    #[serde(with = "stamp")]
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DripRec {
    #[serde(with = "loose")]
    pub drip: Drip,
    #[serde(with = "loose")]
    pub send_to: SendTo,
}

/// A broadcast as the service holds it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NotificationRec {
    pub notification_id: i64,
    /// `sent`, `scheduled` or `draft`.
    pub status: String,
    #[serde(with = "stamp")]
    pub created_at: DateTime<Utc>,
    #[serde(with = "loose")]
    pub request: NewNotification,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProductRec {
    #[serde(with = "loose")]
    pub product: Product,
    #[serde(with = "stamp")]
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EventRec {
    pub event_name: String,
    pub profile_id: Option<String>,
    pub device_token_hash: Option<String>,
    #[serde(with = "loose")]
    pub data: Map<String, Value>,
    #[serde(with = "stamp")]
    pub received_at: DateTime<Utc>,
}

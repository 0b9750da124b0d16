//! The state file's bulk rows, compact: the millions of subscribers and deliveries are most
//! of a file, so each is written as numbers where it can be.
//!
//! - A subscriber's interned texts (country, city, browser, attribute names) are numbers
//!   into the site's list of the texts its subscribers use ([`Texts`]), each text written
//!   once; its hash, when it is 32 hex digits, is its 16 bytes; its attributes' values are
//!   typed scalars, not JSON text.
//! - A delivery names its send by number in the site's list of sends ([`DispatchRow`]), and
//!   its subscriber by position in the site's subscribers (the file keeps their order); its
//!   own times are microseconds after its send was queued.
//!
//! Reading a row back makes no look-up by text: a text's number is an index into the
//! texts read first, a subscriber's position an index into the subscribers.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Number, Value};

use crate::emulator::state::{
    stamp, Attributes, Content, Delivery, Dispatch, Scalar, SegmentSet, Source, Status, Subscriber,
    SubscriberHash, Sym, Tally,
};

/// The texts a site's subscribers use, each with its number in the file.
pub struct Texts {
    /// By a `Sym`'s number: its number in the file, plus one (0: not used).
    numbers: Vec<u32>,
    /// In the file's order.
    pub list: Vec<Sym>,
}

impl Texts {
    /// The texts of `subscribers`, numbered in the order first met.
    pub fn of(subscribers: &[Subscriber]) -> Texts {
        let mut texts = Texts {
            numbers: Vec::new(),
            list: Vec::new(),
        };
        for sub in subscribers {
            for s in sub.texts() {
                texts.note(s);
            }
            for (name, _) in sub.attributes.pairs() {
                texts.note(*name);
            }
        }
        texts
    }

    fn note(&mut self, s: Sym) {
        let at = s.number() as usize;
        if at >= self.numbers.len() {
            self.numbers.resize(at + 1, 0);
        }
        if self.numbers[at] == 0 {
            self.list.push(s);
            // Fewer texts than there are `Sym`s: a u32 holds the count.
            self.numbers[at] = self.list.len() as u32;
        }
    }

    /// The number `s` is written as, plus one.
    fn number(&self, s: Sym) -> u32 {
        self.numbers.get(s.number() as usize).copied().unwrap_or(0)
    }
}

/// A hash as the file holds it.
#[derive(Serialize, Deserialize)]
enum HashRow<'a> {
    Hex([u8; 16]),
    Text(#[serde(borrow)] Cow<'a, str>),
}

/// An attribute's value as the file holds it: a number by its kind, anything that is not a
/// scalar as its JSON text.
#[derive(Serialize, Deserialize)]
enum ScalarRow<'a> {
    Null,
    Bool(bool),
    Unsigned(u64),
    Signed(i64),
    Float(f64),
    Text(#[serde(borrow)] Cow<'a, str>),
    Json(#[serde(borrow)] Cow<'a, str>),
}

impl<'a> ScalarRow<'a> {
    fn of(v: &'a Scalar) -> ScalarRow<'a> {
        match v {
            Scalar::Null => ScalarRow::Null,
            Scalar::Bool(b) => ScalarRow::Bool(*b),
            Scalar::Number(n) => match (n.as_u64(), n.as_i64()) {
                (Some(u), _) => ScalarRow::Unsigned(u),
                (None, Some(i)) => ScalarRow::Signed(i),
                _ => ScalarRow::Float(n.as_f64().unwrap_or_default()),
            },
            Scalar::Text(t) => ScalarRow::Text(Cow::Borrowed(t)),
            Scalar::Other(v) => ScalarRow::Json(Cow::Owned(v.to_string())),
        }
    }

    fn into_scalar(self) -> Result<Scalar, String> {
        Ok(match self {
            ScalarRow::Null => Scalar::Null,
            ScalarRow::Bool(b) => Scalar::Bool(b),
            ScalarRow::Unsigned(u) => Scalar::Number(u.into()),
            ScalarRow::Signed(i) => Scalar::Number(i.into()),
            ScalarRow::Float(f) => {
                Scalar::Number(Number::from_f64(f).ok_or("an attribute's number is not finite")?)
            }
            ScalarRow::Text(t) => Scalar::Text(t.into()),
            ScalarRow::Json(text) => Scalar::Other(Box::new(
                serde_json::from_str::<Value>(&text).map_err(|e| e.to_string())?,
            )),
        })
    }
}

/// A subscriber as the file holds it.
#[derive(Serialize, Deserialize)]
pub struct SubscriberRow<'a> {
    #[serde(borrow)]
    hash: HashRow<'a>,
    #[serde(borrow)]
    profile_id: Option<Cow<'a, str>>,
    /// Country, state, city, device, device type, browser, platform: each a text's number
    /// plus one, 0 for none.
    fields: [u32; 7],
    #[serde(borrow)]
    attributes: Vec<(u32, ScalarRow<'a>)>,
    #[serde(with = "stamp")]
    subscribed_at: DateTime<Utc>,
    #[serde(with = "crate::emulator::state::opt_stamp")]
    unsubscribed_at: Option<DateTime<Utc>>,
    #[serde(borrow)]
    segments: Cow<'a, [i64]>,
    online: bool,
}

impl<'a> SubscriberRow<'a> {
    pub fn of(sub: &'a Subscriber, texts: &Texts) -> SubscriberRow<'a> {
        let number = |s: Option<Sym>| s.map_or(0, |s| texts.number(s));
        let [country, state, city, device, device_type, browser, platform] = sub.profile();
        SubscriberRow {
            hash: match &sub.subscriber_hash {
                SubscriberHash::Hex(bytes) => HashRow::Hex(*bytes),
                SubscriberHash::Text(t) => HashRow::Text(Cow::Borrowed(t)),
            },
            profile_id: sub.profile_id.as_deref().map(Cow::Borrowed),
            fields: [
                number(country),
                number(state),
                number(city),
                number(device),
                number(device_type),
                number(browser),
                number(platform),
            ],
            attributes: sub
                .attributes
                .pairs()
                .iter()
                .map(|(k, v)| (texts.number(*k), ScalarRow::of(v)))
                .collect(),
            subscribed_at: sub.subscribed_at,
            unsubscribed_at: sub.unsubscribed_at,
            segments: Cow::Borrowed(sub.segments.as_slice()),
            online: sub.online,
        }
    }

    /// The subscriber, its texts read from `texts` (the site's, in the file's order).
    pub fn into_subscriber(self, texts: &[Sym]) -> Result<Subscriber, String> {
        let text = |n: u32| -> Result<Option<Sym>, String> {
            match n {
                0 => Ok(None),
                n => texts
                    .get(n as usize - 1)
                    .copied()
                    .map(Some)
                    .ok_or_else(|| format!("a subscriber names text {n} of {}", texts.len())),
            }
        };
        let [country, state, city, device, device_type, browser, platform] = self.fields;
        let attributes = self
            .attributes
            .into_iter()
            .map(|(k, v)| {
                let name = text(k)?.ok_or("an attribute without a name")?;
                Ok((name, v.into_scalar()?))
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Subscriber {
            subscriber_hash: match self.hash {
                HashRow::Hex(bytes) => SubscriberHash::Hex(bytes),
                HashRow::Text(t) => SubscriberHash::of(&t),
            },
            profile_id: self.profile_id.map(|p| p.into()),
            country: text(country)?,
            state: text(state)?,
            city: text(city)?,
            device: text(device)?,
            device_type: text(device_type)?,
            browser: text(browser)?,
            platform: text(platform)?,
            attributes: Attributes::of_pairs(attributes),
            subscribed_at: self.subscribed_at,
            unsubscribed_at: self.unsubscribed_at,
            segments: self.segments.iter().copied().collect::<SegmentSet>(),
            online: self.online,
        })
    }
}

/// A send as the file holds it: what its deliveries share.
#[derive(Serialize, Deserialize)]
pub struct DispatchRow {
    /// Its place in the engine's list of contents.
    pub content: u32,
    source: Source,
    source_id: i64,
    notification_id: i64,
    #[serde(with = "stamp")]
    queued_at: DateTime<Utc>,
    #[serde(with = "stamp")]
    expires_at: DateTime<Utc>,
}

impl DispatchRow {
    pub fn of(d: &Dispatch, content: u32) -> DispatchRow {
        DispatchRow {
            content,
            source: d.source,
            source_id: d.source_id,
            notification_id: d.notification_id,
            queued_at: d.queued_at,
            expires_at: d.expires_at,
        }
    }

    pub fn into_dispatch(self, content: Arc<Content>) -> Dispatch {
        Dispatch {
            content,
            source: self.source,
            source_id: self.source_id,
            notification_id: self.notification_id,
            queued_at: self.queued_at,
            expires_at: self.expires_at,
            tally: Tally::default(),
        }
    }
}

/// The sends of a list of deliveries, each once, in the order first met: each delivery's
/// send's number.
pub struct Dispatches<'a> {
    pub list: Vec<&'a Arc<Dispatch>>,
    pub of_delivery: Vec<u32>,
}

impl<'a> Dispatches<'a> {
    pub fn of(deliveries: &'a [Delivery]) -> Dispatches<'a> {
        let mut place: HashMap<*const Dispatch, u32> = HashMap::new();
        let mut list = Vec::new();
        // A send's deliveries lie together: most look-ups are the last one's.
        let mut last: Option<(*const Dispatch, u32)> = None;
        let of_delivery = deliveries
            .iter()
            .map(|d| {
                let ptr = Arc::as_ptr(&d.dispatch);
                match last {
                    Some((p, at)) if p == ptr => at,
                    _ => {
                        let at = *place.entry(ptr).or_insert_with(|| {
                            list.push(&d.dispatch);
                            // Fewer sends than deliveries: a u32 holds the count.
                            (list.len() - 1) as u32
                        });
                        last = Some((ptr, at));
                        at
                    }
                }
            })
            .collect();
        Dispatches { list, of_delivery }
    }
}

/// A delivery as the file holds it.
#[derive(Serialize, Deserialize)]
pub struct DeliveryRow {
    delivery_id: i64,
    /// Its send's place in the site's list of sends.
    dispatch: u32,
    /// Its subscriber's position in the site's subscribers.
    subscriber: u32,
    status: Status,
    /// Microseconds after its send was queued.
    sent_at: Option<i64>,
    viewed_at: Option<i64>,
    clicked_at: Option<i64>,
}

impl DeliveryRow {
    pub fn of(d: &Delivery, dispatch: u32) -> DeliveryRow {
        let queued = d.dispatch.queued_at.timestamp_micros();
        let after = |t: Option<DateTime<Utc>>| t.map(|t| t.timestamp_micros() - queued);
        DeliveryRow {
            delivery_id: d.delivery_id,
            dispatch,
            subscriber: d.subscriber,
            status: d.status(),
            sent_at: after(d.sent_at()),
            viewed_at: after(d.viewed_at()),
            clicked_at: after(d.clicked_at()),
        }
    }

    /// The delivery, of one of `dispatches`, to one of `subscribers` subscribers.
    pub fn into_delivery(
        self,
        dispatches: &[Arc<Dispatch>],
        subscribers: usize,
    ) -> Result<Delivery, String> {
        let dispatch = dispatches
            .get(self.dispatch as usize)
            .ok_or_else(|| {
                format!(
                    "a delivery names send {} of {}",
                    self.dispatch,
                    dispatches.len()
                )
            })?
            .clone();
        if self.subscriber as usize >= subscribers {
            return Err(format!(
                "a delivery names subscriber {} of {subscribers}",
                self.subscriber
            ));
        }
        let queued = dispatch.queued_at.timestamp_micros();
        let at = |t: Option<i64>| -> Result<Option<DateTime<Utc>>, String> {
            t.map(|t| {
                queued
                    .checked_add(t)
                    .and_then(DateTime::from_timestamp_micros)
                    .ok_or_else(|| "a delivery's time is beyond any date".to_string())
            })
            .transpose()
        };
        Ok(Delivery::new(
            self.delivery_id,
            dispatch,
            self.subscriber,
            self.status,
            [at(self.sent_at)?, at(self.viewed_at)?, at(self.clicked_at)?],
        ))
    }
}

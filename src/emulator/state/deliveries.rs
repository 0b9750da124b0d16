//! What the engine keeps of a site: the schedule of sends still to come, the deliveries
//! made, the indexes over them that keep the caps and expiry linear, and product alerts.
//! Data only: the engine (`emulator::engine`) decides what goes in.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::time::{loose, ser_opt_time, ser_time};
use crate::model::Action;

/// What a notification shows.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct Content {
    pub title: String,
    pub message: String,
    pub url: String,
    pub image_url: Option<String>,
    pub big_image_url: Option<String>,
    #[serde(with = "loose")]
    pub actions: Vec<Action>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Broadcast,
    Drip,
    Trigger,
}

/// A send that is due at `due_at`. A broadcast's has no subscriber: its audience is chosen
/// when it goes out.
#[derive(Debug, Clone)]
pub struct Scheduled {
    pub due_at: DateTime<Utc>,
    pub subscriber_hash: Option<String>,
    pub source: Source,
    pub source_id: i64,
    pub notification_id: i64,
    /// Shared by every delivery of the send (a broadcast to a million holds one copy).
    pub content: Arc<Content>,
    pub expiry_seconds: i64,
    /// The triggered run it belongs to (a stop event cancels the run's pending sends).
    pub run: u64,
}

/// A notification handed to one subscriber's device.
#[derive(Debug, Clone, Serialize)]
pub struct Delivery {
    pub delivery_id: i64,
    pub subscriber_hash: String,
    #[serde(flatten)]
    pub content: Arc<Content>,
    pub source: Source,
    pub source_id: i64,
    pub notification_id: i64,
    /// `delivered`, `pending` (the device is offline) or `expired`.
    pub status: &'static str,
    #[serde(serialize_with = "ser_time")]
    pub queued_at: DateTime<Utc>,
    #[serde(serialize_with = "ser_opt_time")]
    pub sent_at: Option<DateTime<Utc>>,
    #[serde(serialize_with = "ser_time")]
    pub expires_at: DateTime<Utc>,
    #[serde(serialize_with = "ser_opt_time")]
    pub viewed_at: Option<DateTime<Utc>>,
    #[serde(serialize_with = "ser_opt_time")]
    pub clicked_at: Option<DateTime<Utc>>,
}

/// A subscriber's wish to hear of a product's price drop or return to stock.
#[derive(Debug, Clone, Serialize)]
pub struct Alert {
    pub subscriber_hash: String,
    pub product_id: String,
    pub variant_id: Option<String>,
    #[serde(serialize_with = "ser_time")]
    pub created_at: DateTime<Utc>,
    /// Campaigns that already notified this alert (each fires once per alert).
    pub fired_by: Vec<i64>,
    /// The price a drop is measured from, per variant: the price when the alert was set
    /// (the price before the first update after it), or the first price the product was
    /// given when it had none yet.
    #[serde(skip)]
    pub baselines: Vec<(Option<String>, f64)>,
}

/// The engine's share of a site's state.
#[derive(Debug, Clone, Default)]
pub struct EngineState {
    /// Kept sorted by `due_at`; the earliest leaves from the front (a `Vec` shifted every
    /// item left for each one that went out).
    pub scheduled: std::collections::VecDeque<Scheduled>,
    pub deliveries: Vec<Delivery>,
    pub drip_starts: std::collections::HashSet<(i64, String)>,
    pub alerts: Vec<Alert>,
    /// Triggered runs: (trigger_id, subscriber) -> run ids still pending.
    pub runs: BTreeMap<(i64, String), Vec<u64>>,
    /// How many of each pending run's sends are still scheduled. A run a stop event
    /// cancelled is gone from here: its sends are dropped as they come due, not looked for
    /// through the whole schedule.
    pub run_left: HashMap<u64, usize>,
    pub next_run: u64,
    /// Where in `deliveries` each triggered campaign's sends to each subscriber (by position
    /// in `Site::subscribers`) are: the daily and weekly caps count these, not every
    /// delivery.
    pub sends: HashMap<(i64, usize), Vec<usize>>,
    /// Where in `deliveries` the pending ones of each subscriber (by position) are: a device
    /// coming online, and expiry, settle only these.
    pub waiting: HashMap<usize, Vec<usize>>,
    /// How many deliveries wait for their device (`pending`), and no later than when the
    /// first of them expires: `tick` looks for expired ones only once one may have, instead
    /// of going through every delivery on every request.
    pub pending: usize,
    pub next_expiry: Option<DateTime<Utc>>,
}

impl EngineState {
    /// Adds `item` to the schedule, after those due at the same time.
    pub fn schedule(&mut self, item: Scheduled) {
        let at = self.scheduled.partition_point(|s| s.due_at <= item.due_at);
        self.scheduled.insert(at, item);
    }
}

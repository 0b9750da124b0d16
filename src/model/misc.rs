//! The smaller resources: segments (2.10), products (2.11), summary rows (2.12) and events
//! (4.14).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::macros::model;

model! {
    /// Spec 2.10. The service sends `segment_id` as a string.
    pub struct Segment {
        #[lenient] pub segment_id: String,
        #[lenient] pub segment_name: String,
        /// Fields the spec does not list, kept as sent.
        #[serde(flatten)] pub extra: super::common::Extra,
    }
}

model! {
    /// Spec 2.11.
    pub struct Product {
        pub product_id: String,
        pub price: f64,
        /// `inStock` (the default) or `outOfStock`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub availability: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub variant_id: Option<String>,
    }
}

model! {
    /// Spec 2.12.
    pub struct SummaryRow {
        #[lenient] pub date: String,
        #[lenient] pub subscriber_count: i64,
        #[lenient] pub desktop_subscriber_count: i64,
        #[lenient] pub mobile_subscriber_count: i64,
        #[lenient] pub unsubscribed_count: i64,
        #[lenient] pub desktop_unsubscribed_count: i64,
        #[lenient] pub mobile_unsubscribed_count: i64,
        #[lenient] pub notification_sent: i64,
        #[lenient] pub net_subscriber_sent: i64,
        #[lenient] pub view_count: i64,
        #[lenient] pub click_count: i64,
        #[lenient] pub ctr: f64,
    }
}

/// The body of 4.14.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Event {
    pub event_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_token_hash: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Map<String, Value>>,
}

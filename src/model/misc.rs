//! The smaller resources: segments (2.10), products (2.11), summary rows (2.12) and events
//! (4.14).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::lenient;

/// Spec 2.10. The service sends `segment_id` as a string.
#[cfg_attr(
    feature = "python",
    pyo3::pyclass(frozen, get_all, eq, from_py_object, module = "pushwire._core")
)]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Segment {
    #[serde(default, deserialize_with = "lenient::string")]
    pub segment_id: String,
    #[serde(default, deserialize_with = "lenient::string")]
    pub segment_name: String,
    /// Fields the spec does not list, kept as sent.
    #[serde(flatten)]
    pub extra: super::common::Extra,
}

/// Spec 2.11.
#[cfg_attr(
    feature = "python",
    pyo3::pyclass(frozen, get_all, eq, from_py_object, module = "pushwire._core")
)]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Product {
    pub product_id: String,
    pub price: f64,
    /// `inStock` (the default) or `outOfStock`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub availability: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant_id: Option<String>,
}

/// Spec 2.12.
#[cfg_attr(
    feature = "python",
    pyo3::pyclass(frozen, get_all, eq, from_py_object, module = "pushwire._core")
)]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct SummaryRow {
    #[serde(default, deserialize_with = "lenient::string")]
    pub date: String,
    #[serde(default, deserialize_with = "lenient::int")]
    pub subscriber_count: i64,
    #[serde(default, deserialize_with = "lenient::int")]
    pub desktop_subscriber_count: i64,
    #[serde(default, deserialize_with = "lenient::int")]
    pub mobile_subscriber_count: i64,
    #[serde(default, deserialize_with = "lenient::int")]
    pub unsubscribed_count: i64,
    #[serde(default, deserialize_with = "lenient::int")]
    pub desktop_unsubscribed_count: i64,
    #[serde(default, deserialize_with = "lenient::int")]
    pub mobile_unsubscribed_count: i64,
    #[serde(default, deserialize_with = "lenient::int")]
    pub notification_sent: i64,
    #[serde(default, deserialize_with = "lenient::int")]
    pub net_subscriber_sent: i64,
    #[serde(default, deserialize_with = "lenient::int")]
    pub view_count: i64,
    #[serde(default, deserialize_with = "lenient::int")]
    pub click_count: i64,
    #[serde(default, deserialize_with = "lenient::float")]
    pub ctr: f64,
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

//! Triggered campaigns (spec 2.1, 2.2, 2.4): read through the API, created by the emulator's
//! admin routes.

use serde::{Deserialize, Serialize};

use super::campaign::campaign_notification;
use super::common::{Analytics, Extra, UtmParams};
use super::lenient;

/// Spec 2.1.
#[cfg_attr(
    feature = "python",
    pyo3::pyclass(frozen, get_all, eq, from_py_object, module = "pushwire._core")
)]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct TriggeredCampaign {
    #[serde(default, deserialize_with = "lenient::int")]
    pub trigger_id: i64,
    #[serde(default, deserialize_with = "lenient::string")]
    pub campaign_name: String,
    #[serde(default, deserialize_with = "lenient::string")]
    pub campaign_type: String,
    #[serde(default, deserialize_with = "lenient::string")]
    pub status: String,
    #[serde(default, deserialize_with = "lenient::int")]
    pub site_id: i64,
    #[serde(default, deserialize_with = "lenient::string")]
    pub created_at_utc: String,
    #[serde(default, deserialize_with = "lenient::string")]
    pub updated_at_utc: String,
    #[serde(default, deserialize_with = "lenient::int")]
    pub daily_trigger_limit: i64,
    #[serde(default, deserialize_with = "lenient::int")]
    pub weekly_trigger_limit: i64,
    #[serde(default, deserialize_with = "lenient::or_default")]
    pub rules: Rules,
    #[serde(default, deserialize_with = "lenient::or_default")]
    pub analytics: Analytics,
    /// Present in the single-campaign response, absent in list items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notifications: Option<Vec<TriggeredNotification>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<TriggerOptions>,
    #[serde(
        default,
        deserialize_with = "super::common::read_utm",
        skip_serializing_if = "Option::is_none"
    )]
    pub utm_params: Option<UtmParams>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// `rules` of 2.1.
#[cfg_attr(
    feature = "python",
    pyo3::pyclass(frozen, get_all, eq, from_py_object, module = "pushwire._core")
)]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Rules {
    #[serde(default, deserialize_with = "lenient::string")]
    pub start_event_name: String,
    #[serde(default, deserialize_with = "lenient::string")]
    pub stop_event_name: String,
}

campaign_notification! {
    /// Spec 2.2.
    TriggeredNotification {
        id, order, title, message, url, image_url?, big_image_url?, expiry, require_interaction,
        actions, schedule_options, analytics, extra,
    }
}

/// Spec 2.4.
#[cfg_attr(
    feature = "python",
    pyo3::pyclass(frozen, get_all, eq, from_py_object, module = "pushwire._core")
)]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct TriggerOptions {
    #[serde(
        default,
        deserialize_with = "lenient::opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub result_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub campaign: Option<CampaignOptions>,
}

/// `options.campaign` of 2.4.
#[cfg_attr(
    feature = "python",
    pyo3::pyclass(frozen, get_all, eq, from_py_object, module = "pushwire._core")
)]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct CampaignOptions {
    /// Seconds, sent as a string by the service.
    #[serde(
        default,
        deserialize_with = "lenient::opt_string",
        skip_serializing_if = "Option::is_none"
    )]
    pub expiry: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price_drop_threshold: Option<PriceDropThreshold>,
}

/// `options.campaign.price_drop_threshold` of 2.4.
#[cfg_attr(
    feature = "python",
    pyo3::pyclass(frozen, get_all, eq, from_py_object, module = "pushwire._core")
)]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct PriceDropThreshold {
    /// `absolute` or `percentage`.
    #[serde(default, deserialize_with = "lenient::string")]
    pub r#type: String,
    /// A number; read also from the object the spec lists it as (see
    /// [`lenient::float_or_wrapped`]).
    #[serde(default, deserialize_with = "lenient::float_or_wrapped")]
    pub value: f64,
}

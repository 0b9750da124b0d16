//! Drip autoresponders (spec 2.7-2.9, 4.3-4.5).

use serde::{Deserialize, Serialize};

use super::common::{Action, Analytics, Extra, Json, ScheduleOptions, UtmParams};
use super::lenient;

/// Spec 2.7, the read shape.
#[cfg_attr(
    feature = "python",
    pyo3::pyclass(frozen, get_all, eq, from_py_object, module = "pushwire._core")
)]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Drip {
    #[serde(default, deserialize_with = "lenient::int")]
    pub drip_id: i64,
    #[serde(default, deserialize_with = "lenient::string")]
    pub campaign_name: String,
    #[serde(default, deserialize_with = "lenient::string")]
    pub drip_type: String,
    #[serde(default, deserialize_with = "lenient::string")]
    pub status: String,
    #[serde(default, deserialize_with = "lenient::int")]
    pub site_id: i64,
    #[serde(default, deserialize_with = "lenient::string")]
    pub created_at_utc: String,
    #[serde(default, deserialize_with = "lenient::string")]
    pub updated_at_utc: String,
    #[serde(default, deserialize_with = "lenient::or_default")]
    pub audience: Audience,
    #[serde(default, deserialize_with = "lenient::or_default")]
    pub options: DripOptions,
    #[serde(default, deserialize_with = "lenient::or_default")]
    pub analytics: Analytics,
    /// Present in the single-campaign response, absent in list items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notifications: Option<Vec<DripNotification>>,
    #[serde(
        default,
        deserialize_with = "super::common::read_utm",
        skip_serializing_if = "Option::is_none"
    )]
    pub utm_params: Option<UtmParams>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// `options` of 2.7.
#[cfg_attr(
    feature = "python",
    pyo3::pyclass(frozen, get_all, eq, from_py_object, module = "pushwire._core")
)]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct DripOptions {
    #[serde(default, deserialize_with = "lenient::string")]
    pub result_name: String,
}

/// Audience of 2.7: groups OR-ed, the rules of a group AND-ed.
#[cfg_attr(
    feature = "python",
    pyo3::pyclass(frozen, get_all, eq, from_py_object, module = "pushwire._core")
)]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Audience {
    #[serde(default, deserialize_with = "lenient::or_default")]
    pub filter: AudienceFilter,
}

#[cfg_attr(
    feature = "python",
    pyo3::pyclass(frozen, get_all, eq, from_py_object, module = "pushwire._core")
)]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct AudienceFilter {
    #[serde(default, deserialize_with = "lenient::or_default")]
    pub value: Vec<Vec<AudienceRule>>,
}

/// One audience rule: `field` in segments, country, states, city, device, device_type;
/// `op` in all, in, nin.
#[cfg_attr(
    feature = "python",
    pyo3::pyclass(frozen, get_all, eq, from_py_object, module = "pushwire._core")
)]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct AudienceRule {
    #[serde(default, deserialize_with = "lenient::string")]
    pub field: String,
    #[serde(default, deserialize_with = "lenient::string")]
    pub op: String,
    #[serde(default)]
    pub value: Json,
}

/// Spec 2.8, the read shape: the create shape's fields plus `id`, `order`, `analytics`.
#[cfg_attr(
    feature = "python",
    pyo3::pyclass(frozen, get_all, eq, from_py_object, module = "pushwire._core")
)]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct DripNotification {
    #[serde(default, deserialize_with = "lenient::int")]
    pub id: i64,
    #[serde(default, deserialize_with = "lenient::int")]
    pub order: i64,
    #[serde(default, deserialize_with = "lenient::string")]
    pub title: String,
    #[serde(default, deserialize_with = "lenient::string")]
    pub message: String,
    #[serde(default, deserialize_with = "lenient::string")]
    pub url: String,
    #[serde(default, deserialize_with = "lenient::string")]
    pub image_url: String,
    #[serde(default, deserialize_with = "lenient::string")]
    pub big_image_url: String,
    #[serde(default, deserialize_with = "lenient::int")]
    pub require_interaction: i64,
    #[serde(default, deserialize_with = "lenient::int")]
    pub expiry: i64,
    #[serde(default, deserialize_with = "lenient::or_default")]
    pub schedule_options: ScheduleOptions,
    #[serde(default, deserialize_with = "lenient::or_default")]
    pub actions: Vec<Action>,
    #[serde(default, deserialize_with = "lenient::or_default")]
    pub analytics: Analytics,
    /// Fields the spec does not list, kept as sent.
    #[serde(flatten)]
    pub extra: Extra,
}

impl DripNotification {
    /// The read shape of a created notification.
    pub fn from_new(id: i64, order: i64, n: NewDripNotification) -> Self {
        DripNotification {
            id,
            order,
            title: n.title,
            message: n.message,
            url: n.url,
            image_url: n.image_url,
            big_image_url: n.big_image_url,
            require_interaction: n.require_interaction.unwrap_or_default(),
            expiry: n.expiry.unwrap_or_default(),
            schedule_options: n.schedule_options,
            actions: n.actions,
            analytics: Analytics::default(),
            extra: Extra::default(),
        }
    }
}

/// Spec 2.8, the create shape.
#[cfg_attr(
    feature = "python",
    pyo3::pyclass(frozen, get_all, eq, from_py_object, module = "pushwire._core")
)]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct NewDripNotification {
    #[serde(default, deserialize_with = "lenient::string")]
    pub title: String,
    #[serde(default, deserialize_with = "lenient::string")]
    pub message: String,
    #[serde(default, deserialize_with = "lenient::string")]
    pub url: String,
    #[serde(default, deserialize_with = "lenient::string")]
    pub image_url: String,
    #[serde(default, deserialize_with = "lenient::string")]
    pub big_image_url: String,
    /// Required (2.8): 0 or 1, with no default to fall back on (a forgotten one must not
    /// quietly become a notification that closes itself).
    #[serde(
        default,
        deserialize_with = "lenient::opt_int",
        skip_serializing_if = "Option::is_none"
    )]
    pub require_interaction: Option<i64>,
    /// Required (2.8), in seconds: missing is told apart from an out-of-range value.
    #[serde(
        default,
        deserialize_with = "lenient::opt_int",
        skip_serializing_if = "Option::is_none"
    )]
    pub expiry: Option<i64>,
    #[serde(default)]
    pub schedule_options: ScheduleOptions,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<Action>,
}

/// Spec 2.9.
#[cfg_attr(
    feature = "python",
    pyo3::pyclass(frozen, get_all, eq, from_py_object, module = "pushwire._core")
)]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct SendTo {
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "super::lenient::ids"
    )]
    pub include_segments: Vec<String>,
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "super::lenient::ids"
    )]
    pub exclude_segments: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub include_countries: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude_countries: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub include_states: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude_states: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub include_cities: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude_cities: Vec<String>,
}

/// The body of 4.3.
#[cfg_attr(
    feature = "python",
    pyo3::pyclass(frozen, get_all, eq, from_py_object, module = "pushwire._core")
)]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct NewDrip {
    #[serde(default)]
    pub campaign_name: String,
    #[serde(default)]
    pub notifications: Vec<NewDripNotification>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_to: Option<SendTo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub utm_params: Option<UtmParams>,
}

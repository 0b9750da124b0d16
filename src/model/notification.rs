//! Broadcast notifications (spec 4.13): the create request, in typed form, and its
//! form-encoded wire shape in both directions.

use serde::{Deserialize, Serialize};

use super::common::{Action, Json};
use crate::form::FormWriter;

/// `notification_type`: when omitted the notification is sent immediately.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum NotificationType {
    #[default]
    Now,
    Later,
    Draft,
}

impl NotificationType {
    pub fn as_str(self) -> &'static str {
        match self {
            NotificationType::Now => "now",
            NotificationType::Later => "later",
            NotificationType::Draft => "draft",
        }
    }

    pub fn parse(s: &str) -> Option<NotificationType> {
        match s {
            "now" => Some(NotificationType::Now),
            "later" => Some(NotificationType::Later),
            "draft" => Some(NotificationType::Draft),
            _ => None,
        }
    }
}

/// One rule of the attribute filter (2.14): groups are OR-ed, rules in a group AND-ed.
#[cfg_attr(
    feature = "python",
    pyo3::pyclass(frozen, get_all, eq, from_py_object, module = "pushwire._core")
)]
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct AttributeRule {
    pub key: String,
    pub op: String,
    #[serde(default)]
    pub value: Json,
}

#[cfg(feature = "python")]
impl super::annotation::Fields for AttributeRule {
    fn fields() -> Vec<(&'static str, String)> {
        vec![
            ("key", "str".into()),
            ("op", "str".into()),
            ("value", "Any".into()),
        ]
    }
}

/// The parameters of 4.13, named as the spec names them. A targeting list is `None` when
/// not given (no filter); given empty (`Some(vec![])`) it is refused by
/// [`crate::validate::broadcast`], never sent as "no filter", which would reach everyone.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(default)]
pub struct NewNotification {
    pub notification_title: Option<String>,
    pub notification_message: Option<String>,
    pub notification_url: Option<String>,
    pub image_url: Option<String>,
    pub big_image_url: Option<String>,
    pub notification_type: NotificationType,
    pub valid_from_utc: Option<String>,
    pub profile_id: Option<Vec<String>>,
    pub include_segments: Option<Vec<String>>,
    pub exclude_segments: Option<Vec<String>>,
    pub include_countries: Option<Vec<String>>,
    pub exclude_countries: Option<Vec<String>>,
    pub include_states: Option<Vec<String>>,
    pub include_cities: Option<Vec<String>>,
    pub include_device_types: Option<Vec<String>>,
    pub include_browsers: Option<Vec<String>>,
    pub from_date: Option<String>,
    pub to_date: Option<String>,
    pub require_interaction: Option<i64>,
    /// Minutes.
    pub notification_expiry: Option<i64>,
    pub subscriber_hash: Option<Vec<String>>,
    pub attributes: Option<Vec<Vec<AttributeRule>>>,
    /// Sent as `multi_element_title1`... ; at most two.
    pub actions: Vec<Action>,
}

/// The array parameters, in the order they are written.
pub(crate) const LISTS: [&str; 10] = [
    "profile_id",
    "include_segments",
    "exclude_segments",
    "include_countries",
    "exclude_countries",
    "include_states",
    "include_cities",
    "include_device_types",
    "include_browsers",
    "subscriber_hash",
];

impl NewNotification {
    pub(crate) fn list_mut(&mut self, name: &str) -> &mut Option<Vec<String>> {
        match name {
            "profile_id" => &mut self.profile_id,
            "include_segments" => &mut self.include_segments,
            "exclude_segments" => &mut self.exclude_segments,
            "include_countries" => &mut self.include_countries,
            "exclude_countries" => &mut self.exclude_countries,
            "include_states" => &mut self.include_states,
            "include_cities" => &mut self.include_cities,
            "include_device_types" => &mut self.include_device_types,
            "include_browsers" => &mut self.include_browsers,
            _ => &mut self.subscriber_hash,
        }
    }

    /// The array parameters with their values, in the order of [`LISTS`].
    pub(crate) fn lists(&self) -> [(&'static str, Option<&[String]>); 10] {
        [
            ("profile_id", self.profile_id.as_deref()),
            ("include_segments", self.include_segments.as_deref()),
            ("exclude_segments", self.exclude_segments.as_deref()),
            ("include_countries", self.include_countries.as_deref()),
            ("exclude_countries", self.exclude_countries.as_deref()),
            ("include_states", self.include_states.as_deref()),
            ("include_cities", self.include_cities.as_deref()),
            ("include_device_types", self.include_device_types.as_deref()),
            ("include_browsers", self.include_browsers.as_deref()),
            ("subscriber_hash", self.subscriber_hash.as_deref()),
        ]
    }

    /// The form body of 4.13.
    pub fn to_form(&self) -> String {
        let mut w = FormWriter::new();
        w.opt("notification_title", self.notification_title.as_deref())
            .opt("notification_message", self.notification_message.as_deref())
            .opt("notification_url", self.notification_url.as_deref())
            .opt("image_url", self.image_url.as_deref())
            .opt("big_image_url", self.big_image_url.as_deref())
            .field("notification_type", self.notification_type.as_str())
            .opt("valid_from_utc", self.valid_from_utc.as_deref())
            .opt("from_date", self.from_date.as_deref())
            .opt("to_date", self.to_date.as_deref());
        for (name, list) in self.lists() {
            w.list(name, list.unwrap_or_default());
        }
        if let Some(ri) = self.require_interaction {
            w.field("require_interaction", &ri.to_string());
        }
        if let Some(e) = self.notification_expiry {
            w.field("notification_expiry", &e.to_string());
        }
        if let Some(attrs) = &self.attributes {
            let json = serde_json::to_string(attrs).unwrap_or_default();
            w.field("attributes", &json);
        }
        for (i, a) in self.actions.iter().enumerate() {
            let n = i + 1;
            w.field(&format!("multi_element_title{n}"), &a.label)
                .field(&format!("multi_element_url{n}"), &a.url)
                .opt(&format!("multi_element_image{n}"), a.image_url.as_deref());
        }
        w.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lists_come_in_the_order_of_lists() {
        let names = NewNotification::default().lists().map(|(name, _)| name);
        assert_eq!(names, LISTS);
    }
}

//! Broadcast notifications (spec 4.13): the create request, in typed form, and its
//! form-encoded wire shape in both directions.

use serde::{Deserialize, Serialize};

use super::common::{Action, Json};
use crate::form::{Form, FormWriter};
use crate::validate::Violation;

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

/// The parameters of 4.13, named as the spec names them.
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
    pub profile_id: Vec<String>,
    pub include_segments: Vec<String>,
    pub exclude_segments: Vec<String>,
    pub include_countries: Vec<String>,
    pub exclude_countries: Vec<String>,
    pub include_states: Vec<String>,
    pub include_cities: Vec<String>,
    pub include_device_types: Vec<String>,
    pub include_browsers: Vec<String>,
    pub from_date: Option<String>,
    pub to_date: Option<String>,
    pub require_interaction: Option<i64>,
    /// Minutes.
    pub notification_expiry: Option<i64>,
    pub subscriber_hash: Vec<String>,
    pub attributes: Option<Vec<Vec<AttributeRule>>>,
    /// Sent as `multi_element_title1`... ; at most two.
    pub actions: Vec<Action>,
}

/// The array parameters, in the order they are written.
const LISTS: [&str; 10] = [
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
    fn list_mut(&mut self, name: &str) -> &mut Vec<String> {
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

    fn list(&self, name: &str) -> &[String] {
        match name {
            "profile_id" => &self.profile_id,
            "include_segments" => &self.include_segments,
            "exclude_segments" => &self.exclude_segments,
            "include_countries" => &self.include_countries,
            "exclude_countries" => &self.exclude_countries,
            "include_states" => &self.include_states,
            "include_cities" => &self.include_cities,
            "include_device_types" => &self.include_device_types,
            "include_browsers" => &self.include_browsers,
            _ => &self.subscriber_hash,
        }
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
        for name in LISTS {
            w.list(name, self.list(name));
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

    /// Reads a form body of 4.13. Only decoding errors are reported here (a number that is
    /// not one, malformed attributes); the spec's limits are `validate::broadcast`'s.
    pub fn from_form(form: &Form) -> Result<NewNotification, Violation> {
        // A filter sent blank would be read as no filter (everyone): refused.
        for key in ["attributes", "Attributes", "from_date", "to_date"] {
            if form.get(key).is_some() && form.text(key).is_none() {
                return Err(Violation::new(
                    key.to_ascii_lowercase(),
                    format!("The {key} field must not be empty."),
                ));
            }
        }
        let mut n = NewNotification {
            notification_title: form.get("notification_title").map(str::to_string),
            notification_message: form.get("notification_message").map(str::to_string),
            notification_url: form.get("notification_url").map(str::to_string),
            image_url: form.text("image_url"),
            big_image_url: form.text("big_image_url"),
            valid_from_utc: form.text("valid_from_utc"),
            from_date: form.text("from_date"),
            to_date: form.text("to_date"),
            ..Default::default()
        };
        if let Some(t) = form.text("notification_type") {
            n.notification_type = NotificationType::parse(&t).ok_or_else(|| {
                Violation::new(
                    "notification_type",
                    "The selected notification type is invalid.",
                )
            })?;
        }
        for name in LISTS {
            *n.list_mut(name) = form.list(name);
        }
        n.require_interaction = int_field(form, "require_interaction")?;
        n.notification_expiry = int_field(form, "notification_expiry")?;
        // The parameter table spells it `Attributes`, the samples `attributes`: one of them,
        // as reading one would lose the other's filter (a wider audience).
        if form.get("attributes").is_some() && form.get("Attributes").is_some() {
            return Err(Violation::new(
                "attributes",
                "Send either attributes or Attributes, not both.",
            ));
        }
        if let Some(raw) = form.text("attributes").or_else(|| form.text("Attributes")) {
            let groups: Vec<Vec<AttributeRule>> = serde_json::from_str(&raw).map_err(|_| {
                Violation::new(
                    "attributes",
                    "The attributes must be a JSON array of rule groups.",
                )
            })?;
            n.attributes = Some(groups);
        }
        // The spec has two button slots; a third (or a slot 0) is refused, never taken as a
        // button it was not sent as.
        for key in form.keys() {
            let slot = [
                "multi_element_title",
                "multi_element_url",
                "multi_element_image",
            ]
            .iter()
            .find_map(|p| key.strip_prefix(p));
            if slot.is_some_and(|slot| slot != "1" && slot != "2") {
                return Err(Violation::new(
                    key,
                    format!(
                        "The {key} parameter is not allowed: at most 2 buttons are allowed, as multi_element_*1 and multi_element_*2."
                    ),
                ));
            }
        }
        let mut slots = Vec::new();
        for i in 1..=2 {
            let label = form.text(&format!("multi_element_title{i}"));
            let url = form.text(&format!("multi_element_url{i}"));
            let image_url = form.text(&format!("multi_element_image{i}"));
            if label.is_some() || url.is_some() || image_url.is_some() {
                slots.push(i);
                n.actions.push(Action {
                    label: label.unwrap_or_default(),
                    url: url.unwrap_or_default(),
                    image_url,
                });
            }
        }
        // The second slot alone is one button; its errors name the slot it came in, which
        // the checks of `validate::broadcast` (by position) would not.
        if slots == [2] {
            crate::validate::broadcast_button(2, &n.actions[0])?;
        }
        Ok(n)
    }
}

fn int_field(form: &Form, key: &str) -> Result<Option<i64>, Violation> {
    match form.text(key) {
        None => Ok(None),
        Some(s) => s
            .parse::<i64>()
            .map(Some)
            .map_err(|_| Violation::new(key, format!("The {key} must be an integer."))),
    }
}

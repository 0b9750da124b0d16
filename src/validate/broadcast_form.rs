//! Reading a broadcast's form body (4.13) into its typed shape, refusing what the reading
//! alone would get wrong: a number that is not one, malformed attributes, a blank filter or
//! a third button (each would be lost, or widen the audience). The spec's limits are then
//! checked by `broadcast`.

use super::violation::FIELD;
use crate::form::Form;
use crate::message;
use crate::model::notification::LISTS;
use crate::model::{Action, AttributeRule, NewNotification, NotificationType};

use super::notifications::broadcast_button;
use super::violation::Violation;

impl NewNotification {
    /// Reads a form body of 4.13. Only decoding errors are reported here (a number that is
    /// not one, malformed attributes); the spec's limits are `validate::broadcast`'s.
    pub fn from_form(form: &Form) -> Result<NewNotification, Violation> {
        // A filter sent blank would be read as no filter (everyone): refused.
        for key in ["attributes", "Attributes", "from_date", "to_date"] {
            if form.get(key).is_some() && form.text(key).is_none() {
                // `Attributes` is named as sent, under the field `attributes`.
                let message = if key == "Attributes" {
                    "The Attributes field must not be empty.".into()
                } else {
                    message!["The ", FIELD, " field must not be empty."]
                };
                return Err(Violation::new(key.to_ascii_lowercase(), message));
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
            *n.list_mut(name) = form.contains(name).then(|| form.list(name));
        }
        n.require_interaction = int_field(form, "require_interaction")?;
        n.notification_expiry = int_field(form, "notification_expiry")?;
        // The parameter table spells it `Attributes`, the samples `attributes`: one of them,
        // as reading one would lose the other's filter (a wider audience).
        if form.get("attributes").is_some() && form.get("Attributes").is_some() {
            return Err(Violation::new(
                "attributes",
                message!["Send either ", FIELD, " or Attributes, not both."],
            ));
        }
        if let Some(raw) = form.text("attributes").or_else(|| form.text("Attributes")) {
            let groups: Vec<Vec<AttributeRule>> = serde_json::from_str(&raw).map_err(|_| {
                Violation::new(
                    "attributes",
                    message!["The ", FIELD, " must be a JSON array of rule groups."],
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
                    message!["The ", FIELD, " parameter is not allowed: at most 2 buttons are allowed, as multi_element_*1 and multi_element_*2."],
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
            broadcast_button(2, &n.actions[0])?;
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
            .map_err(|_| Violation::new(key, message!["The ", FIELD, " must be an integer."])),
    }
}

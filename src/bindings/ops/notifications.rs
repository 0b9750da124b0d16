//! `notifications.create`: the broadcast read from its model or dict, then sent by
//! `crate::client::notifications`.

use pyo3::prelude::*;
use pyo3::types::PyTuple;

use super::args::arg;
use super::output::Output;
use crate::bindings::model_input::model;
use crate::client::{notifications, Error, Transport};
use crate::model::NewNotification;

/// `notifications.create(notification)`.
pub struct Call(Box<NewNotification>);

/// Reads the arguments, in the order the Python wrapper passes them.
pub fn parse(args: &Bound<'_, PyTuple>) -> Result<Call, Error> {
    let n: NewNotification = model(&arg(args, 0), "")?;
    Ok(Call(Box::new(n)))
}

impl Call {
    pub async fn run(self, t: &Transport) -> Result<Output, Error> {
        Ok(Output::Id(notifications::create(t, &self.0).await?))
    }
}

/// How a violation's field is named to the Python caller: the shared checks name fields as
/// the spec's form does (`notification_title`, `multi_element_url2`), the error the model's
/// attribute (`title`, `actions[1].url`).
pub fn rename(f: &str) -> String {
    match f {
        "notification_title"
        | "notification_message"
        | "notification_url"
        | "notification_type"
        | "notification_expiry" => f["notification_".len()..].to_string(),
        _ => button_field(f).unwrap_or_else(|| f.to_string()),
    }
}

/// A broadcast button's form field (`multi_element_url2`) as the Python argument that
/// carries it (`actions[1].url`).
fn button_field(f: &str) -> Option<String> {
    let rest = f.strip_prefix("multi_element_")?;
    let (part, slot) = rest.split_at(rest.find(|c: char| c.is_ascii_digit())?);
    let slot: usize = slot.parse().ok().filter(|k| *k >= 1)?;
    let attr = match part {
        "title" => "label",
        "url" => "url",
        "image" => "image_url",
        _ => return None,
    };
    Some(format!("actions[{}].{attr}", slot - 1))
}

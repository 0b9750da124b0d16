//! `notifications.create`: the broadcast read from its model or dict, then sent by
//! `crate::client::notifications`.

use pyo3::prelude::*;

use super::operation::{keyed, prepare_keyed, PreparedCall, Ready, Run, Running};
use super::output::Output;
use crate::bindings::model_input::model;
use crate::client::{notifications, Error, Transport};
use crate::model::NewNotification;

pub struct Args(Box<NewNotification>);

/// `client.notifications.create`'s call: the broadcast as a `NewNotification` or a dict of
/// the spec's fields, which the shared checks name as the spec does (`notification_title`)
/// and the error as the method's arguments (`title`).
#[pyfunction]
#[pyo3(signature = (notification, *, idempotency_key))]
fn notifications_create(
    notification: Bound<'_, PyAny>,
    idempotency_key: Option<String>,
) -> PyResult<PreparedCall> {
    let py = notification.py();
    let (key, [notification]) = keyed(py, idempotency_key, [("notification", notification)])?;
    prepare_keyed(py, "notifications.create", rename, key, || {
        let n: NewNotification = model(&notification, "")?;
        Ok(Ready::Op(Box::new(Args(Box::new(n)))))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(notifications_create, m)?)
}

impl Args {
    async fn send(self, t: &Transport) -> Result<Output, Error> {
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

impl Run for Args {
    fn run(self: Box<Self>, t: &Transport) -> Running<'_> {
        Box::pin(self.send(t))
    }
}

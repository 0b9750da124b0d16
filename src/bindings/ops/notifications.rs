//! `notifications.create`: the broadcast read from its model or dict, then sent by
//! `crate::client::notifications`.

use crate::operations::NOTIFICATIONS_CREATE;
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
    prepare_keyed(py, &NOTIFICATIONS_CREATE, key, || {
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

impl Run for Args {
    fn run(self: Box<Self>, t: &Transport) -> Running<'_> {
        Box::pin(self.send(t))
    }
}

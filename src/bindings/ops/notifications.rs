//! `notifications.create`: the broadcast read from its model or dict, then sent by
//! `crate::client::notifications`.

use pyo3::prelude::*;

use super::operation::{keyed, prepare_keyed, request, sends, PreparedCall};
use crate::bindings::model_input::model;
use crate::client::notifications;
use crate::model::NewNotification;
use crate::operations::{Declared, NotificationsCreate};

sends! {
    NotificationsCreate: notifications::create;
}

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
    prepare_keyed(py, NotificationsCreate::OPERATION, key, || {
        let n: NewNotification = model(&notification, "")?;
        Ok(request::<NotificationsCreate>(n))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(notifications_create, m)?)
}

//! `notifications.create`: the broadcast read from its model or dict, then sent by
//! `crate::client::notifications`.

use pyo3::prelude::*;

use super::operation::{keyed_call, sends};
use crate::bindings::model_input::model;
use crate::client::notifications;
use crate::model::NewNotification;
use crate::operations::NotificationsCreate;

sends! {
    NotificationsCreate: notifications::create;
}

keyed_call! {
    /// `client.notifications.create`'s call: the broadcast as a `NewNotification` or a dict
    /// of the spec's fields, which the shared checks name as the spec does
    /// (`notification_title`) and the error as the method's arguments (`title`).
    fn notifications_create(notification) -> NotificationsCreate {
        model::<NewNotification>(&notification, "")?
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(notifications_create, m)?)
}

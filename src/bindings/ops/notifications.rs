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
    /// (`notification_title`) and the error as the method's arguments (`title`). Unless
    /// `send_late`, a `later` time that has passed everywhere, or is over a year ahead, is
    /// refused (`validate::broadcast_schedule`).
    fn notifications_create(notification; send_late) -> NotificationsCreate {
        let n = model::<NewNotification>(&notification, "")?;
        if !super::args::flag(&send_late, "send_late")? {
            crate::validate::broadcast_schedule(&n, chrono::Utc::now())?;
        }
        n
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(notifications_create, m)?)
}

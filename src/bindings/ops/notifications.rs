//! `notifications.create`: the broadcast read from its model or dict, then sent by
//! `crate::client::notifications`.

use pyo3::prelude::*;

use super::operation::{checked, keyed_call, sends};
use crate::bindings::model_input::model;
use crate::client::known_segments::named_ids;
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
    /// refused (`validate::broadcast_schedule`); unless `check_segments` is false, a segment
    /// id the site does not have is refused when the call runs (`client::known_segments`).
    fn notifications_create(notification; send_late, check_segments) -> NotificationsCreate {
        let n = model::<NewNotification>(&notification, "")?;
        if !super::args::flag(&send_late, "send_late")? {
            crate::validate::broadcast_schedule(&n, python_now(send_late.py()))?;
        }
        let segments = if super::args::flag(&check_segments, "check_segments")? {
            // Its shape first (a segment's name where an id goes is named as that), which
            // the call checks again as it sends.
            crate::validate::broadcast(&n)?;
            named_ids([
                ("include_segments", n.include_segments.as_deref()),
                ("exclude_segments", n.exclude_segments.as_deref()),
            ])
        } else {
            Vec::new()
        };
        checked::<NotificationsCreate>(n, segments)
    }
}

/// Now, by this process's Python clock (`time.time()`), which time-machine and freezegun move
/// with the code that computes a schedule from it (and an emulator following it); the
/// system's where it cannot be read.
fn python_now(py: Python<'_>) -> chrono::DateTime<chrono::Utc> {
    let secs = py
        .import(pyo3::intern!(py, "time"))
        .and_then(|time| time.getattr(pyo3::intern!(py, "time"))?.call0())
        .and_then(|secs| secs.extract::<f64>());
    secs.ok()
        .and_then(|secs| chrono::DateTime::from_timestamp_micros((secs * 1e6).round() as i64))
        .unwrap_or_else(chrono::Utc::now)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(notifications_create, m)?)
}

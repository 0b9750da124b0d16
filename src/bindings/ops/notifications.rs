//! `notifications.create`: the broadcast read from its model or dict, then sent by
//! `crate::client::notifications`.

use pyo3::prelude::*;

use super::operation::{
    checked, keyed_call, prepare, sends, Known, PreparedCall, Ready, Run, Running,
};
use super::output::Output;
use crate::bindings::model_input::model;
use crate::client::known_segments::{canonical, named_ids};
use crate::client::notifications;
use crate::client::Transport;
use crate::model::NewNotification;
use crate::operations::Declared;
use crate::operations::NotificationsCreate;

sends! {
    NotificationsCreate: notifications::create;
}

keyed_call! {
    /// `client.notifications.create`'s call: the broadcast as a `NewNotification` or a dict
    /// of the spec's fields, which the shared checks name as the spec does
    /// (`notification_title`) and the error as the method's arguments (`title`). Unless
    /// `send_late`, a `later` time that has passed everywhere, or is over ten years ahead, is
    /// refused (`validate::broadcast_schedule`); unless `check_segments` is false, a segment
    /// id the site does not have is refused when the call runs (`client::known_segments`).
    fn notifications_create(notification; send_late, check_segments) -> NotificationsCreate {
        let mut n = model::<NewNotification>(&notification, "")?;
        if !super::args::flag(&send_late, "send_late")? {
            crate::validate::broadcast_schedule(&n, python_now(send_late.py()))?;
        }
        for ids in [&mut n.include_segments, &mut n.exclude_segments].into_iter().flatten() {
            canonical(ids);
        }
        // The segments are checked only when the shapes are sound: the call refuses a bad
        // one as it runs (within its span), before any read, and names it as that (a
        // segment's name where an id goes), not as an unknown segment.
        let check = super::args::flag(&check_segments, "check_segments")?;
        let segments = if check && crate::validate::broadcast(&n).is_ok() {
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

/// `client.notifications.validate`'s call: the broadcast checked as `notifications_create`
/// checks it (its shapes; its schedule unless `send_late`), then, when it runs, its segment
/// ids against the site's; nothing is sent but the read of the site's segments.
#[pyfunction]
#[pyo3(signature = (notification, *, send_late))]
fn notifications_validate(
    py: Python<'_>,
    notification: &Bound<'_, PyAny>,
    send_late: &Bound<'_, PyAny>,
) -> PyResult<PreparedCall> {
    let known = Known::as_(
        "notifications.validate",
        NotificationsCreate::OPERATION.python_names,
    );
    prepare(py, known, || {
        let n = model::<NewNotification>(notification, "")?;
        if !super::args::flag(send_late, "send_late")? {
            crate::validate::broadcast_schedule(&n, python_now(py))?;
        }
        crate::validate::broadcast(&n)?;
        let segments = named_ids([
            ("include_segments", n.include_segments.as_deref()),
            ("exclude_segments", n.exclude_segments.as_deref()),
        ]);
        Ok(Ready::Op(Box::new(SegmentsKnown(segments))))
    })
}

/// The segment ids of a broadcast checked against the site's, nothing sent.
struct SegmentsKnown(Vec<(String, i64)>);

impl Run for SegmentsKnown {
    fn run(self: Box<Self>, t: &Transport) -> Running<'_> {
        Box::pin(async move {
            crate::client::known_segments::check(t, &self.0).await?;
            Ok(Output::Nothing)
        })
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
    m.add_function(wrap_pyfunction!(notifications_create, m)?)?;
    m.add_function(wrap_pyfunction!(notifications_validate, m)?)
}

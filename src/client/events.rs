//! Track event (4.14), on the event-tracking interface.

use serde::Deserialize;
use serde_json::{Map, Value};

use super::error::{Error, Result};
use super::transport::{Body, Call, Envelope, Transport};
use crate::message;
use crate::operations::{Declared, EventsTrack, Request, Response};
use crate::validate::{self, field, FIELD};

/// `{error_code: 0, data: {}}`; an `error` object means failure whatever the status.
#[derive(Deserialize, Debug, Default)]
struct Tracked {
    #[serde(default, deserialize_with = "crate::model::lenient::opt_int")]
    error_code: Option<i64>,
    #[serde(default)]
    error: Option<Value>,
}

impl Envelope for Tracked {
    fn success(&self) -> Option<bool> {
        if self.error.as_ref().is_some_and(|e| !e.is_null()) {
            return Some(false);
        }
        self.error_code.map(|c| c == 0)
    }
}

/// Checks an event body (4.14) as the events interface would, all fields at once.
pub fn check(body: &Map<String, Value>) -> Result<()> {
    let violations = validate::event(body);
    match violations.into_iter().next() {
        None => Ok(()),
        // The service's wording names no argument the caller has.
        Some(first) if first.message().starts_with("\"value\" must contain") => {
            Err(Error::validation(
                first.field,
                message![
                    FIELD,
                    " or ",
                    field("device_token_hash"),
                    " is required: the event must name its subscriber"
                ],
            ))
        }
        Some(first) => Err(Error::Validation(first)),
    }
}

/// The encoded call of one event; `check` it first.
pub fn call(body: &Map<String, Value>) -> Call {
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    Call::to(EventsTrack::OPERATION, Body::Json(bytes.into()))
}

/// Records an event. Not retried once sent: it may start a triggered campaign.
pub async fn track(t: &Transport, body: &Request<EventsTrack>) -> Result<Response<EventsTrack>> {
    check(body)?;
    track_checked(t, body).await
}

/// [`track`] for a body already [`check`]ed (the batch checks every event up front).
pub async fn track_checked(t: &Transport, body: &Map<String, Value>) -> Result<()> {
    let _: Tracked = t.send(&call(body)).await?;
    Ok(())
}

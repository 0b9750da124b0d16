//! Segments: list (4.9), delete (4.7), add by hash (4.6), add/remove by profile id (4.8).
//! Membership writes are idempotent (adding a member twice leaves one membership), so they
//! are retried like reads.

use serde_json::Value;

use super::error::Result;
use super::transport::{Ack, Body, Call, Idempotency, Transport};
use crate::envelope;
use crate::form::FormWriter;
use crate::model::Segment;
use crate::validate;

envelope!(List { segments: Vec<Segment>; count: Option<Value> });

pub async fn list(
    t: &Transport,
    segment_id: Option<&str>,
    limit: Option<i64>,
    offset: Option<i64>,
    segment_type: Option<&str>,
) -> Result<Vec<Segment>> {
    if let Some(id) = segment_id {
        validate::segment_id(id)?;
    }
    validate::segments_window(limit, offset)?;
    let call = Call::get("/segments")
        .query("segment_id", segment_id)
        .query("limit", limit)
        .query("offset", offset)
        .query("segment_type", segment_type);
    let list: List = t.send(&call).await?;
    Ok(list.segments)
}

/// Posts a form; the service's message.
async fn post_form(t: &Transport, path: &str, form: String, idem: Idempotency) -> Result<String> {
    let call = Call::post(path, Body::Form(form.into()), idem);
    let ack: Ack = t.send(&call).await?;
    Ok(match ack.message {
        Some(Value::String(s)) => s,
        Some(other) => other.to_string(),
        None => String::new(),
    })
}

pub async fn delete(t: &Transport, segment_id: &str) -> Result<String> {
    let id = validate::segment_id(segment_id)?;
    let form = FormWriter::new()
        .field("segment_id", &id.to_string())
        .finish();
    // Not retried once sent: a delete that went through answers a retry with "does not
    // exist", which would report a success as a failure.
    post_form(t, "/segments/delete", form, Idempotency::Unsafe).await
}

/// Adds subscribers by hash (at most 500 per call); the service's message.
pub async fn add_subscribers(t: &Transport, segment_id: &str, hashes: &[String]) -> Result<String> {
    let id = validate::segment_id(segment_id)?;
    validate::segment_hashes(hashes)?;
    let form = FormWriter::new()
        .field("segment_id", &id.to_string())
        .list("subscriber_hash", hashes)
        .finish();
    post_form(t, "/segments/addSegmentWithHash", form, Idempotency::Safe).await
}

/// Adds (`add`) or removes (`delete`) the subscribers of `profile_ids` to/from a segment.
pub async fn profiles(
    t: &Transport,
    segment_name: &str,
    profile_ids: &[String],
    operation: &str,
) -> Result<()> {
    validate::profile_membership(segment_name, profile_ids, operation)?;
    let form = FormWriter::new()
        .field("segment_name", segment_name)
        .list("profile_id", profile_ids)
        .field("operation", operation)
        .finish();
    post_form(t, "/profile", form, Idempotency::Safe).await?;
    Ok(())
}

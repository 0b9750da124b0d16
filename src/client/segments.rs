//! Segments: list (4.9), delete (4.7), add by hash (4.6), add/remove by profile id (4.8).
//! Membership writes are idempotent (adding a member twice leaves one membership), so they
//! are retried like reads.

use serde_json::Value;

use super::error::Result;
use super::transport::{Ack, Body, Call, Transport};
use crate::envelope;
use crate::form::FormWriter;
use crate::model::Segment;
use crate::operations::{
    Operation, SEGMENTS_ADD_SUBSCRIBERS, SEGMENTS_DELETE, SEGMENTS_LIST, SEGMENTS_PROFILES,
};
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
    let call = Call::to(&SEGMENTS_LIST, Body::Empty)
        .query("segment_id", segment_id)
        .query("limit", limit)
        .query("offset", offset)
        .query("segment_type", segment_type);
    let list: List = t.send(&call).await?;
    Ok(list.segments)
}

/// Posts a form to `op`; the service's message.
async fn post_form(t: &Transport, op: &Operation, form: String) -> Result<String> {
    let call = Call::to(op, Body::Form(form.into()));
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
    // Not retried once sent (`SEGMENTS_DELETE.idempotent`): a delete that went through
    // answers a retry with "does not exist", which would report a success as a failure.
    post_form(t, &SEGMENTS_DELETE, form).await
}

/// Adds subscribers by hash (at most 500 per call); the service's message.
pub async fn add_subscribers(t: &Transport, segment_id: &str, hashes: &[String]) -> Result<String> {
    let id = validate::segment_id(segment_id)?;
    validate::segment_hashes(hashes)?;
    let form = FormWriter::new()
        .field("segment_id", &id.to_string())
        .list("subscriber_hash", hashes)
        .finish();
    post_form(t, &SEGMENTS_ADD_SUBSCRIBERS, form).await
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
    post_form(t, &SEGMENTS_PROFILES, form).await?;
    Ok(())
}

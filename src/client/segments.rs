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
    Declared, Operation, Request, Response, SegmentsAddSubscribers, SegmentsDelete, SegmentsList,
    SegmentsProfiles,
};
use crate::validate;

envelope!(List { segments: Vec<Segment>; count: Option<Value> });

pub async fn list(t: &Transport, query: &Request<SegmentsList>) -> Result<Response<SegmentsList>> {
    if let Some(id) = &query.segment_id {
        validate::segment_id(id)?;
    }
    validate::segments_window(query.limit, query.offset)?;
    let call = Call::to(SegmentsList::OPERATION, Body::Empty)
        .query("segment_id", query.segment_id.as_deref())
        .query("limit", query.limit)
        .query("offset", query.offset)
        .query("segment_type", query.segment_type.as_deref());
    let list: List = t.send(&call).await?;
    Ok(list.segments)
}

/// A form naming the segment `segment_id`, checked.
fn segment_form(segment_id: &str) -> Result<FormWriter> {
    let id = validate::segment_id(segment_id)?;
    let mut form = FormWriter::new();
    form.field("segment_id", &id.to_string());
    Ok(form)
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

pub async fn delete(
    t: &Transport,
    segment: &Request<SegmentsDelete>,
) -> Result<Response<SegmentsDelete>> {
    let id = validate::segment_id(&segment.segment_id)?;
    let form = segment_form(&segment.segment_id)?.finish();
    // Not retried once sent (`SEGMENTS_DELETE.idempotent`): a delete that went through
    // answers a retry with "does not exist", which would report a success as a failure.
    let message = post_form(t, SegmentsDelete::OPERATION, form).await?;
    // Gone for this client's next broadcast at once, not after its read of the site's
    // segments grows stale (`known_segments`).
    if let Some((_, ids)) = t.memo().segment_ids.lock().await.as_mut() {
        ids.remove(&id);
    }
    Ok(message)
}

/// Adds subscribers by hash (at most 500 per call); the service's message.
pub async fn add_subscribers(
    t: &Transport,
    add: &Request<SegmentsAddSubscribers>,
) -> Result<Response<SegmentsAddSubscribers>> {
    let form = {
        let mut form = segment_form(&add.segment_id)?;
        validate::segment_hashes(&add.subscriber_hash)?;
        form.list("subscriber_hash", &add.subscriber_hash).finish()
    };
    post_form(t, SegmentsAddSubscribers::OPERATION, form).await
}

/// Adds or removes the subscribers of `change.profile_id` to/from a segment.
pub async fn profiles(
    t: &Transport,
    change: &Request<SegmentsProfiles>,
) -> Result<Response<SegmentsProfiles>> {
    let operation = change.operation.as_str();
    validate::profile_membership(&change.segment_name, &change.profile_id, operation)?;
    let form = FormWriter::new()
        .field("segment_name", &change.segment_name)
        .list("profile_id", &change.profile_id)
        .field("operation", operation)
        .finish();
    post_form(t, SegmentsProfiles::OPERATION, form).await?;
    Ok(())
}

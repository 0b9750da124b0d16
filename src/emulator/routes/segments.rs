//! Segments (4.6-4.9): membership by subscriber hash and by profile id.

use serde_json::json;

use super::extract::{FormBody, QueryForm, SiteContext};

use crate::emulator::api_error::{ok, ApiError, ApiResult};
use crate::emulator::engine;
use crate::emulator::request::int_param;
use crate::form::Form;
use crate::model::Segment;
use crate::validate::{self, Violation, UNKNOWN_SEGMENT_ID};

fn bad(v: Violation) -> ApiError {
    ApiError::bad(v.message())
}

/// The form of a body, and its `segment_id`: present, a positive integer, and one of the
/// site's segments.
fn segment_of(ctx: &SiteContext, form: Result<Form, String>) -> Result<(Form, i64), ApiError> {
    let form = form.map_err(ApiError::bad)?;
    let raw = form.text("segment_id").unwrap_or_default();
    let id = validate::segment_id(&raw).map_err(bad)?;
    let exists = ctx.in_site(|s, _, _| s.segment(id).is_some())?;
    if exists {
        Ok((form, id))
    } else {
        Err(ApiError::bad(UNKNOWN_SEGMENT_ID))
    }
}

pub async fn list(ctx: SiteContext, QueryForm(q): QueryForm) -> ApiResult {
    let q = q.map_err(ApiError::bad)?;
    let limit = int_param(&q, "limit").map_err(bad)?;
    let offset = int_param(&q, "offset").map_err(bad)?;
    validate::segments_window(limit, offset).map_err(bad)?;
    let only = q
        .text("segment_id")
        .map(|raw| validate::segment_id(&raw).map_err(bad))
        .transpose()?;
    let all_types = q.text("segment_type").as_deref() == Some("all");
    let segments: Vec<Segment> = ctx.in_site(|s, _, _| {
        s.segments
            .iter()
            .rev()
            .filter(|seg| all_types || seg.segment_type == "custom")
            .filter(|seg| only.is_none_or(|id| seg.segment_id == id))
            .skip(offset.unwrap_or(0) as usize)
            .take(limit.map_or(usize::MAX, |l| l as usize))
            .map(|seg| Segment {
                segment_id: seg.segment_id.to_string(),
                segment_name: seg.segment_name.clone(),
                extra: Default::default(),
            })
            .collect()
    })?;
    ok(json!({"success": true, "segments": segments, "count": segments.len()}))
}

pub async fn add_with_hash(ctx: SiteContext, FormBody(form): FormBody) -> ApiResult {
    let (form, id) = segment_of(&ctx, form)?;
    let hashes = form.list("subscriber_hash");
    validate::segment_hashes(&hashes).map_err(bad)?;
    ctx.in_site(|s, ids, now| {
        // The named subscribers by their index, taken in the order they subscribed (the
        // order their drips start in), not by a scan of every subscriber per request.
        let mut found: Vec<usize> = hashes
            .iter()
            .filter_map(|h| s.subscriber_position(h))
            .collect();
        found.sort_unstable();
        found.dedup();
        let mut added = Vec::new();
        for i in found {
            if s.join_segment(i, id) {
                added.push(s.subscribers[i].subscriber_hash.to_string());
            }
        }
        engine::on_audience_change(s, ids, now, &added);
    })?;
    ok(json!({"success": true, "message": "Subscribers added to the segment successfully"}))
}

pub async fn delete(ctx: SiteContext, FormBody(form): FormBody) -> ApiResult {
    let (_, id) = segment_of(&ctx, form)?;
    ctx.in_site(|s, _, _| s.delete_segment(id))?;
    ok(json!({"success": true, "message": "Segment deleted successfully"}))
}

pub async fn profile(ctx: SiteContext, FormBody(form): FormBody) -> ApiResult {
    let form = form.map_err(ApiError::bad)?;
    let name = form.text("segment_name").unwrap_or_default();
    let profile_ids = form.list("profile_id");
    let operation = form.text("operation").unwrap_or_default();
    validate::profile_membership(&name, &profile_ids, &operation).map_err(bad)?;
    let done = ctx.in_site(|s, ids, now| {
        let id = s
            .segments
            .iter()
            .rev()
            .find(|seg| seg.segment_name == name)?
            .segment_id;
        // The profiles' subscribers through the profile index, in the order they
        // subscribed (the order their drips start in).
        let mut found: Vec<usize> = profile_ids
            .iter()
            .flat_map(|p| s.profile_positions(p).iter().copied())
            .collect();
        found.sort_unstable();
        found.dedup();
        let mut added = Vec::new();
        for i in found {
            if operation != "add" {
                s.leave_segment(i, id);
            } else if s.join_segment(i, id) {
                added.push(s.subscribers[i].subscriber_hash.to_string());
            }
        }
        engine::on_audience_change(s, ids, now, &added);
        Some(())
    })?;
    match done {
        Some(()) => ok(json!({"success": true})),
        None => Err(ApiError::bad(format!("Segment {name} does not exist"))),
    }
}

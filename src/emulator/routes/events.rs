//! Track event (4.14), on the event-tracking interface.

use serde_json::{json, Value};

use super::extract::{JsonBody, SiteContext};

use crate::emulator::api_error::{ok, ApiError, ApiResult};
use crate::emulator::engine;
use crate::emulator::state::EventRec;
use crate::validate::{self, Violation};

pub async fn track(ctx: SiteContext, JsonBody(obj): JsonBody) -> ApiResult {
    let obj = obj.map_err(|m| ApiError::invalid_event(vec![Violation::new("body", m)]))?;
    let violations = validate::event(&obj);
    if !violations.is_empty() {
        return Err(ApiError::invalid_event(violations));
    }
    let text = |k: &str| obj.get(k).and_then(Value::as_str).map(str::to_string);
    let rec = EventRec {
        event_name: text("event_name").unwrap_or_default(),
        profile_id: text("profile_id"),
        device_token_hash: text("device_token_hash"),
        data: obj
            .get("data")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default(),
        received_at: chrono::Utc::now(),
    };
    let keep = ctx.emu.retention();
    ctx.in_site(|s, ids, now| {
        engine::on_event(
            s,
            ids,
            now,
            &rec.event_name,
            rec.profile_id.as_deref(),
            rec.device_token_hash.as_deref(),
            &rec.data,
        );
        s.events.push_back(EventRec {
            received_at: now,
            ..rec
        });
        s.events_pruned += crate::emulator::state::prune(&mut s.events, keep) as u64;
    })?;
    ok(json!({"error_code": 0, "data": {}}))
}

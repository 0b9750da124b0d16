//! Track event (4.14), on the event-tracking interface.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::Extension;
use serde_json::{json, Value};

use crate::emulator::api_error::{ok, ApiError, ApiResult};
use crate::emulator::emu::{Admitted, Emu};
use crate::emulator::engine;
use crate::emulator::request::json_object;
use crate::emulator::state::EventRec;
use crate::validate::{self, Violation};

pub async fn track(
    State(emu): State<Arc<Emu>>,
    Extension(site): Extension<Admitted>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult {
    let obj = json_object(&headers, &body)
        .map_err(|m| ApiError::invalid_event(vec![Violation::new("body", m)]))?;
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
    let keep = emu.retention();
    emu.in_site(site, |s, ids, now| {
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

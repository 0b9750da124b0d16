//! Create push broadcast (4.13): now, later (scheduled) or draft.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::Extension;
use serde_json::json;

use crate::emulator::api_error::{ok, ApiError, ApiResult};
use crate::emulator::emu::{Admitted, Emu};
use crate::emulator::engine;
use crate::emulator::request::form_body;
use crate::emulator::state::{Counters, NotificationRec};
use crate::model::{NewNotification, NotificationType};
use crate::validate::{self, NO_PROFILE_SUBSCRIBERS};

pub async fn create(
    State(emu): State<Arc<Emu>>,
    Extension(site): Extension<Admitted>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult {
    let form = form_body(&headers, &body).await.map_err(ApiError::bad)?;
    let new = NewNotification::from_form(&form).map_err(|v| ApiError::bad(v.message))?;
    validate::broadcast(&new).map_err(|v| ApiError::bad(v.message))?;
    let id = emu.in_site(site, |s, ids, now| {
        if !new.profile_id.is_empty()
            && !s.subscribers.iter().any(|sub| {
                sub.unsubscribed_at.is_none()
                    && sub
                        .profile_id
                        .as_ref()
                        .is_some_and(|p| new.profile_id.contains(p))
            })
        {
            return Err(ApiError::bad(NO_PROFILE_SUBSCRIBERS));
        }
        let notification_id = Counters::next(&mut ids.notification);
        let status = match new.notification_type {
            NotificationType::Now => "sent",
            NotificationType::Later => "scheduled",
            NotificationType::Draft => "draft",
        };
        s.notifications.push(NotificationRec {
            notification_id,
            status: status.into(),
            created_at: now,
            request: new,
        });
        engine::on_broadcast(s, ids, now);
        Ok(notification_id)
    })??;
    ok(json!({"success": true, "notification_id": id}))
}

//! Create push broadcast (4.13): now, later (scheduled) or draft.

use serde_json::json;

use super::extract::{FormBody, SiteContext};

use crate::emulator::api_error::{ok, ApiError, ApiResult};
use crate::emulator::engine;
use crate::emulator::state::{Counters, NotificationRec};
use crate::model::{NewNotification, NotificationType};
use crate::validate::{self, NO_PROFILE_SUBSCRIBERS};

pub async fn create(ctx: SiteContext, FormBody(form): FormBody) -> ApiResult {
    let form = form.map_err(ApiError::bad)?;
    let new = NewNotification::from_form(&form).map_err(|v| ApiError::bad(v.message()))?;
    validate::broadcast(&new).map_err(|v| ApiError::bad(v.message()))?;
    let id = ctx.in_site(|s, ids, now| {
        let profile_ids = new.profile_id.as_deref().unwrap_or_default();
        if !profile_ids.is_empty()
            && !profile_ids.iter().any(|p| {
                // Through the profile index, not a read of every subscriber.
                s.with_profile(p).any(|sub| sub.unsubscribed_at.is_none())
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

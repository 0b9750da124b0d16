//! Create push broadcast (4.13).

use serde_json::Value;

use super::error::Result;
use super::transport::{Body, Call, Envelope, Transport};
use crate::operations::{Declared, NotificationsCreate, Request, Response};
use crate::validate;

/// The table names the id `Notification_id`, the samples `notification_id`.
#[derive(serde::Deserialize, Debug, Default)]
struct Created {
    #[serde(default)]
    success: Option<bool>,
    #[serde(default, alias = "Notification_id")]
    notification_id: Option<Value>,
}

impl Envelope for Created {
    fn success(&self) -> Option<bool> {
        self.success
    }
}

/// An id the service sent, read as the models read theirs (`lenient`: a number, a numeric
/// string, a whole float).
///
/// 0 when it sent none or nothing usable: the create itself succeeded, and raising would
/// invite the caller to retry it, which would create (and send) it twice. A warning on the
/// `pushwire` logger says so instead.
pub fn id_of(field: &str, v: Option<&Value>) -> i64 {
    // A fraction is no id: a truncated one would name another notification.
    let id = v
        .filter(|v| v.as_f64().is_none_or(|f| f.fract() == 0.0))
        .and_then(|v| crate::model::lenient::opt_int(v).ok().flatten())
        .filter(|id| *id > 0);
    id.unwrap_or_else(|| {
        crate::client::transport::emit_log(log::Level::Warn, || {
            format!(
                "the create succeeded but its answer carried no usable {field} ({}); returning 0",
                v.map_or_else(|| "none".to_string(), Value::to_string)
            )
        });
        0
    })
}

/// Creates (and, for `now`, sends) a broadcast; its id. Never retried once it may have been
/// received: a retried create could send the broadcast twice.
pub async fn create(
    t: &Transport,
    n: &Request<NotificationsCreate>,
) -> Result<Response<NotificationsCreate>> {
    validate::broadcast(n)?;
    let call = Call::to(
        NotificationsCreate::OPERATION,
        Body::Form(n.to_form().into()),
    );
    let created: Created = t.send(&call).await?;
    Ok(id_of("notification_id", created.notification_id.as_ref()))
}

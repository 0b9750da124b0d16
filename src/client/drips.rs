//! Drip autoresponders: create (4.3), list (4.4), read (4.5).

use super::campaigns::{self, AnalyticsRange, ListQuery, Page};
use super::error::Result;
use super::transport::{Body, Call, Transport};
use crate::envelope;
use crate::model::{Drip, NewDrip};
use crate::operations::{DRIPS_CREATE, DRIPS_GET, DRIPS_LIST};
use crate::validate;

envelope!(Created { drip_id: Option<serde_json::Value> });

/// Creates a drip; its id. Not retried once sent: a second create is a second drip.
pub async fn create(t: &Transport, drip: &NewDrip) -> Result<i64> {
    validate::drip(drip)?;
    let body = serde_json::to_vec(drip).unwrap_or_default();
    let call = Call::to(&DRIPS_CREATE, Body::Json(body.into()));
    let created: Created = t.send(&call).await?;
    Ok(super::notifications::id_of(
        "drip_id",
        created.drip_id.as_ref(),
    ))
}

pub async fn get(t: &Transport, drip_id: i64, range: &AnalyticsRange) -> Result<Drip> {
    campaigns::get(t, &DRIPS_GET, "drip_id", drip_id, range).await
}

pub async fn list(t: &Transport, query: &ListQuery) -> Result<Page<Drip>> {
    campaigns::list(t, &DRIPS_LIST, query).await
}

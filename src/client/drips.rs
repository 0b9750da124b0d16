//! Drip autoresponders: create (4.3), list (4.4), read (4.5).

use super::transport::{Body, Call, Data, Idempotency, Transport};
use super::{list_call, path_id, AnalyticsRange, Page, Result};
use crate::envelope;
use crate::model::{Drip, Meta, NewDrip};
use crate::validate;

envelope!(Created { drip_id: Option<serde_json::Value> });
envelope!(List { data: Vec<Drip>; meta: Meta });

/// Creates a drip; its id. Not retried once sent: a second create is a second drip.
pub async fn create(t: &Transport, drip: &NewDrip) -> Result<i64> {
    validate::drip(drip)?;
    let body = serde_json::to_vec(drip).unwrap_or_default();
    let call = Call::post("/drips", Body::Json(body.into()), Idempotency::Unsafe);
    let created: Created = t.send(&call).await?;
    Ok(super::notifications::id_of(
        "drip_id",
        created.drip_id.as_ref(),
    ))
}

pub async fn get(t: &Transport, drip_id: i64, range: &AnalyticsRange) -> Result<Drip> {
    let id = path_id("drip_id", drip_id)?;
    range.check()?;
    let one: Data<Drip> = t
        .send(&range.apply(Call::get(format!("/drips/{id}"))))
        .await?;
    Ok(one.data)
}

pub async fn list(
    t: &Transport,
    page: Option<i64>,
    limit: Option<i64>,
    range: &AnalyticsRange,
) -> Result<Page<Drip>> {
    let list: List = t.send(&list_call("/drips", page, limit, range)?).await?;
    Ok(Page {
        data: list.data,
        meta: list.meta,
    })
}

//! Drip autoresponders: create (4.3), list (4.4), read (4.5).

use super::campaigns;
use super::error::Result;
use super::transport::{Body, Call, Transport};
use crate::envelope;
use crate::operations::{Declared, DripsCreate, DripsGet, DripsList, Request, Response};
use crate::validate;

envelope!(Created { drip_id: Option<serde_json::Value> });

/// Creates a drip; its id. Not retried once sent: a second create is a second drip.
pub async fn create(t: &Transport, drip: &Request<DripsCreate>) -> Result<Response<DripsCreate>> {
    validate::drip(drip)?;
    let body = serde_json::to_vec(drip).unwrap_or_default();
    let call = Call::to(DripsCreate::OPERATION, Body::Json(body.into()));
    let created: Created = t.send(&call).await?;
    Ok(super::notifications::id_of(
        "drip_id",
        created.drip_id.as_ref(),
    ))
}

pub async fn get(t: &Transport, query: &Request<DripsGet>) -> Result<Response<DripsGet>> {
    campaigns::get::<DripsGet>(t, "drip_id", query).await
}

pub async fn list(t: &Transport, query: &Request<DripsList>) -> Result<Response<DripsList>> {
    campaigns::list::<DripsList, _>(t, query).await
}

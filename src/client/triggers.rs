//! Triggered campaigns: `GET /triggers/{id}` (4.1) and `GET /triggers` (4.2).

use super::campaigns;
use super::error::Result;
use super::transport::Transport;
use crate::operations::{Request, Response, TriggersGet, TriggersList};

pub async fn get(t: &Transport, query: &Request<TriggersGet>) -> Result<Response<TriggersGet>> {
    campaigns::get::<TriggersGet>(t, "trigger_id", query).await
}

pub async fn list(t: &Transport, query: &Request<TriggersList>) -> Result<Response<TriggersList>> {
    campaigns::list::<TriggersList, _>(t, query).await
}

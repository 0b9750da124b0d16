//! Triggered campaigns: `GET /triggers/{id}` (4.1) and `GET /triggers` (4.2).

use super::campaigns::{self, AnalyticsRange, ListQuery, Page};
use super::error::Result;
use super::transport::Transport;
use crate::model::TriggeredCampaign;
use crate::operations::{TRIGGERS_GET, TRIGGERS_LIST};

pub async fn get(
    t: &Transport,
    trigger_id: i64,
    range: &AnalyticsRange,
) -> Result<TriggeredCampaign> {
    campaigns::get(t, &TRIGGERS_GET, "trigger_id", trigger_id, range).await
}

pub async fn list(t: &Transport, query: &ListQuery) -> Result<Page<TriggeredCampaign>> {
    campaigns::list(t, &TRIGGERS_LIST, query).await
}

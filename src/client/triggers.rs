//! Triggered campaigns: `GET /triggers/{id}` (4.1) and `GET /triggers` (4.2).

use super::transport::{Call, Data, Transport};
use super::{list_call, path_id, AnalyticsRange, Page, Result};
use crate::envelope;
use crate::model::{Meta, TriggeredCampaign};

envelope!(List { data: Vec<TriggeredCampaign>; meta: Meta });

pub async fn get(
    t: &Transport,
    trigger_id: i64,
    range: &AnalyticsRange,
) -> Result<TriggeredCampaign> {
    let id = path_id("trigger_id", trigger_id)?;
    range.check()?;
    let call = range.apply(Call::get(format!("/triggers/{id}")));
    let one: Data<TriggeredCampaign> = t.send(&call).await?;
    Ok(one.data)
}

pub async fn list(
    t: &Transport,
    page: Option<i64>,
    limit: Option<i64>,
    range: &AnalyticsRange,
) -> Result<Page<TriggeredCampaign>> {
    let list: List = t.send(&list_call("/triggers", page, limit, range)?).await?;
    Ok(Page {
        data: list.data,
        meta: list.meta,
    })
}

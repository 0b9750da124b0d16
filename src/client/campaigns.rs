//! What the two campaign resources, triggered campaigns (4.1, 4.2) and drips (4.4, 4.5),
//! read the same way: one campaign by its id, and a page of the list, each with the
//! optional analytics range.

use crate::message;
use crate::validate::FIELD;
use serde::de::DeserializeOwned;
use serde::Deserialize;

use super::error::{Error, Result};
use super::transport::{Body, Call, Data, Envelope, Transport};
use crate::model::{AnalyticsRange, CampaignQuery, ListQuery, Meta, Page};
use crate::operations::Declared;

/// The analytics range checked, and added to a call's query.
fn with_range(range: &AnalyticsRange, call: Call) -> Result<Call> {
    crate::validate::analytics_range(range.start.as_deref(), range.end.as_deref())?;
    Ok(call
        .query("analytics_start_at", range.start.as_ref())
        .query("analytics_end_at", range.end.as_ref()))
}

/// A positive id for a path.
fn path_id(field: &str, id: i64) -> Result<i64> {
    if id > 0 {
        Ok(id)
    } else {
        Err(Error::validation(
            field,
            message![FIELD, " must be a positive integer"],
        ))
    }
}

/// The answer of a campaign list: its `data` required, its `meta` defaulted.
#[derive(Deserialize, Debug)]
struct List<T> {
    #[serde(default)]
    success: Option<bool>,
    data: Vec<T>,
    #[serde(default)]
    meta: Meta,
}

impl<T> Envelope for List<T> {
    fn success(&self) -> Option<bool> {
        self.success
    }
}

/// The campaign `O` reads, by its id (named `field` in errors).
pub(super) async fn get<O>(t: &Transport, field: &str, query: &CampaignQuery) -> Result<O::Response>
where
    O: Declared<Request = CampaignQuery>,
    O::Response: DeserializeOwned,
{
    let id = path_id(field, query.id)?;
    let op = O::OPERATION;
    let call = with_range(
        &query.range,
        Call::to_path(op, op.on_root_with(id), Body::Empty),
    )?;
    let one: Data<O::Response> = t.send(&call).await?;
    Ok(one.data)
}

/// A page of the campaign list `O` reads: `page`, `limit` and the analytics range checked.
pub(super) async fn list<O, T>(t: &Transport, query: &ListQuery) -> Result<Page<T>>
where
    O: Declared<Request = ListQuery, Response = Page<T>>,
    T: DeserializeOwned,
{
    let page = crate::validate::page(query.page)?;
    let limit = crate::validate::limit(query.limit)?;
    let call = Call::to(O::OPERATION, Body::Empty)
        .query("page", Some(page))
        .query("limit", Some(limit));
    let list: List<T> = t.send(&with_range(&query.range, call)?).await?;
    Ok(Page {
        data: list.data,
        meta: list.meta,
    })
}

//! What the two campaign resources, triggered campaigns (4.1, 4.2) and drips (4.4, 4.5),
//! read the same way: one campaign by its id, and a page of the list, each with the
//! optional analytics range.

use crate::message;
use crate::validate::FIELD;
use serde::de::DeserializeOwned;
use serde::Deserialize;

use super::error::{Error, Result};
use super::transport::{Body, Call, Data, Envelope, Transport};
use crate::model::Meta;
use crate::operations::Operation;

/// One page of a campaign list (4.2, 4.4).
#[derive(Debug, Clone, PartialEq)]
pub struct Page<T> {
    pub data: Vec<T>,
    pub meta: Meta,
}

/// `analytics_start_at` / `analytics_end_at` of the campaign reads, `YYYY-MM-DD`.
#[derive(Debug, Clone, Default)]
pub struct AnalyticsRange {
    pub start: Option<String>,
    pub end: Option<String>,
}

/// What a campaign list is asked for: a page (from 1), its size (1 to 500; the service's
/// defaults when `None`) and the analytics range.
#[derive(Debug, Clone, Default)]
pub struct ListQuery {
    pub page: Option<i64>,
    pub limit: Option<i64>,
    pub range: AnalyticsRange,
}

impl AnalyticsRange {
    fn check(&self) -> Result<()> {
        crate::validate::analytics_range(self.start.as_deref(), self.end.as_deref())?;
        Ok(())
    }

    fn apply(&self, call: Call) -> Call {
        call.query("analytics_start_at", self.start.as_ref())
            .query("analytics_end_at", self.end.as_ref())
    }
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

/// The campaign `id` (named `field` in errors) that `op` reads.
pub(super) async fn get<T: DeserializeOwned>(
    t: &Transport,
    op: &Operation,
    field: &str,
    id: i64,
    range: &AnalyticsRange,
) -> Result<T> {
    let id = path_id(field, id)?;
    range.check()?;
    let call = range.apply(Call::to_path(op, op.on_root_with(id), Body::Empty));
    let one: Data<T> = t.send(&call).await?;
    Ok(one.data)
}

/// A page of the campaign list `op` reads: `page`, `limit` and the analytics range checked.
pub(super) async fn list<T: DeserializeOwned>(
    t: &Transport,
    op: &Operation,
    query: &ListQuery,
) -> Result<Page<T>> {
    let page = crate::validate::page(query.page)?;
    let limit = crate::validate::limit(query.limit)?;
    query.range.check()?;
    let call = query.range.apply(
        Call::to(op, Body::Empty)
            .query("page", Some(page))
            .query("limit", Some(limit)),
    );
    let list: List<T> = t.send(&call).await?;
    Ok(Page {
        data: list.data,
        meta: list.meta,
    })
}

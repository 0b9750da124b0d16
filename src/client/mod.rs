//! The async client of the spec's API: [`transport`] knows HTTP, one module per resource
//! knows that resource's paths and shapes, and every input is checked by `crate::validate`
//! before anything is sent. No pyo3 here: `cargo test` covers it on its own.

pub mod analytics;
pub mod bulk;
pub mod drips;
pub mod error;
pub mod events;
pub mod notifications;
pub mod products;
pub mod segments;
pub mod transport;
pub mod triggers;

pub use error::{ApiFailure, Error, Result};
pub use transport::{Config, Limits, Transport};

use crate::model::Meta;

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

impl AnalyticsRange {
    fn check(&self) -> Result<()> {
        crate::validate::analytics_range(self.start.as_deref(), self.end.as_deref())?;
        Ok(())
    }

    fn apply(&self, call: transport::Call) -> transport::Call {
        call.query("analytics_start_at", self.start.as_ref())
            .query("analytics_end_at", self.end.as_ref())
    }
}

/// The checked call of a campaign list (4.2, 4.4): `page`, `limit` and the analytics range.
fn list_call(
    path: &str,
    page: Option<i64>,
    limit: Option<i64>,
    range: &AnalyticsRange,
) -> Result<transport::Call> {
    let page = crate::validate::page(page)?;
    let limit = crate::validate::limit(limit)?;
    range.check()?;
    Ok(range.apply(
        transport::Call::get(path)
            .query("page", Some(page))
            .query("limit", Some(limit)),
    ))
}

/// A positive id for a path.
fn path_id(field: &str, id: i64) -> Result<i64> {
    if id > 0 {
        Ok(id)
    } else {
        Err(Error::validation(
            field,
            format!("{field} must be a positive integer"),
        ))
    }
}

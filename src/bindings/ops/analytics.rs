//! `analytics.summary` and `analytics.subscribers`: their arguments read, then sent by
//! `crate::client::analytics`.

use crate::message;
use crate::validate::FIELD;
use pyo3::prelude::*;

use super::args::{str_list, text};
use super::operation::{prepare_request, sends, PreparedCall};
use crate::bindings::convert::date_text;
use crate::client::{analytics, Error};
use crate::model::{DistributionQuery, SummaryQuery};
use crate::operations::{AnalyticsSubscribers, AnalyticsSummary};

sends! {
    AnalyticsSummary: analytics::summary;
    AnalyticsSubscribers: analytics::subscribers;
}

/// `client.analytics.summary`'s call: the shared checks name the spec's `from` and `to`,
/// the error the arguments `start` and `end`.
#[pyfunction]
#[pyo3(signature = (start, end, *, group_by))]
fn analytics_summary(
    py: Python<'_>,
    start: &Bound<'_, PyAny>,
    end: &Bound<'_, PyAny>,
    group_by: &Bound<'_, PyAny>,
) -> PyResult<PreparedCall> {
    prepare_request::<AnalyticsSummary>(py, || {
        Ok(SummaryQuery {
            from: date_text(start, "start")?,
            to: date_text(end, "end")?,
            group_by: text(group_by, "group_by")?,
        })
    })
}

/// `client.analytics.subscribers`'s call: the shared checks name the spec's `type`, the
/// error the argument `types`.
#[pyfunction]
#[pyo3(signature = (*, types))]
fn analytics_subscribers(types: &Bound<'_, PyAny>) -> PyResult<PreparedCall> {
    prepare_request::<AnalyticsSubscribers>(types.py(), || {
        if types.is_none() {
            return Ok(DistributionQuery { types: None });
        }
        let types = str_list(types, "types")?;
        // Sent as `type=`, which the service reads as no filter: every dimension.
        if types.is_empty() {
            return Err(Error::validation(
                "types",
                message![FIELD, " is empty: leave it out (None) for every dimension"],
            ));
        }
        Ok(DistributionQuery { types: Some(types) })
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(analytics_summary, m)?)?;
    m.add_function(wrap_pyfunction!(analytics_subscribers, m)?)
}

//! `analytics.summary` and `analytics.subscribers`: their arguments read, then sent by
//! `crate::client::analytics`.

use crate::message;
use crate::validate::FIELD;
use pyo3::prelude::*;

use super::args::{str_list, text};
use super::operation::{prepare, PreparedCall, Ready, Run, Running};
use super::output::Output;
use crate::bindings::convert::date_text;
use crate::client::{analytics, Error, Transport};
use crate::operations::{ANALYTICS_SUBSCRIBERS, ANALYTICS_SUMMARY};

pub enum Args {
    /// From, to (`YYYY-MM-DD`), and the grouping.
    Summary(String, String, String),
    /// The dimensions asked for; `None` for every one.
    Subscribers(Option<Vec<String>>),
}

/// `client.analytics.summary`'s call: the shared checks name the spec's `from` and `to`,
/// the error the arguments `start` and `end`.
#[pyfunction]
#[pyo3(signature = (start, end, *, group_by))]
fn analytics_summary(
    start: &Bound<'_, PyAny>,
    end: &Bound<'_, PyAny>,
    group_by: &Bound<'_, PyAny>,
) -> PyResult<PreparedCall> {
    prepare(start.py(), &ANALYTICS_SUMMARY, || {
        Ok(Ready::Op(Box::new(Args::Summary(
            date_text(start, "start")?,
            date_text(end, "end")?,
            text(group_by, "group_by")?,
        ))))
    })
}

/// `client.analytics.subscribers`'s call: the shared checks name the spec's `type`, the
/// error the argument `types`.
#[pyfunction]
#[pyo3(signature = (*, types))]
fn analytics_subscribers(types: &Bound<'_, PyAny>) -> PyResult<PreparedCall> {
    prepare(types.py(), &ANALYTICS_SUBSCRIBERS, || {
        let types = if types.is_none() {
            None
        } else {
            let types = str_list(types, "types")?;
            // Sent as `type=`, which the service reads as no filter: every dimension.
            if types.is_empty() {
                return Err(Error::validation(
                    "types",
                    message![FIELD, " is empty: leave it out (None) for every dimension"],
                ));
            }
            Some(types)
        };
        Ok(Ready::Op(Box::new(Args::Subscribers(types))))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(analytics_summary, m)?)?;
    m.add_function(wrap_pyfunction!(analytics_subscribers, m)?)
}

impl Args {
    async fn send(self, t: &Transport) -> Result<Output, Error> {
        Ok(match self {
            Args::Summary(from, to, g) => {
                Output::Rows(analytics::summary(t, &from, &to, &g).await?)
            }
            Args::Subscribers(types) => {
                Output::Distribution(analytics::subscribers(t, types.as_deref()).await?)
            }
        })
    }
}

impl Run for Args {
    fn run(self: Box<Self>, t: &Transport) -> Running<'_> {
        Box::pin(self.send(t))
    }
}

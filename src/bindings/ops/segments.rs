//! `segments.list`, `delete`, `add_subscribers`, `add_profiles` and `remove_profiles`: their
//! arguments read, then sent by `crate::client::segments` (the `_bulk` ones are in `bulk`).

use crate::message;
use crate::validate::FIELD;
use pyo3::prelude::*;

use super::args::{id_text, opt_int, opt_text, str_list, text};
use super::operation::{prepare, Known, PreparedCall, Ready, Run, Running};
use super::output::Output;
use crate::client::{segments, Error, Transport};
use crate::operations::{
    SEGMENTS_ADD_SUBSCRIBERS, SEGMENTS_DELETE, SEGMENTS_LIST, SEGMENTS_PROFILES,
};

pub enum Args {
    List {
        segment_id: Option<String>,
        limit: Option<i64>,
        offset: Option<i64>,
        segment_type: Option<String>,
    },
    Delete(String),
    AddSubscribers(String, Vec<String>),
    /// A segment's name, the profile ids, and the operation: `add` or `delete`.
    Profiles(String, Vec<String>, &'static str),
}

fn ready(call: Args) -> Result<Ready, Error> {
    Ok(Ready::Op(Box::new(call)))
}

/// `client.segments.list`'s call.
#[pyfunction]
#[pyo3(signature = (*, segment_id, limit, offset, segment_type))]
fn segments_list(
    segment_id: &Bound<'_, PyAny>,
    limit: &Bound<'_, PyAny>,
    offset: &Bound<'_, PyAny>,
    segment_type: &Bound<'_, PyAny>,
) -> PyResult<PreparedCall> {
    prepare(limit.py(), &SEGMENTS_LIST, || {
        ready(Args::List {
            segment_id: if segment_id.is_none() {
                None
            } else {
                Some(id_text(segment_id, "segment_id")?)
            },
            limit: opt_int(limit, "limit")?,
            offset: opt_int(offset, "offset")?,
            segment_type: match opt_text(segment_type, "segment_type")? {
                // The spec names one value; anything else would be read as the default
                // (custom segments only) without a word, so a typo ("All") is refused.
                Some(t) if t != "all" => {
                    return Err(Error::validation(
                        "segment_type",
                        message![FIELD, format!(" must be \"all\" (every segment) or None (custom segments only), not {t:?}")],
                    ))
                }
                t => t,
            },
        })
    })
}

/// `client.segments.delete`'s call.
#[pyfunction]
fn segments_delete(segment_id: &Bound<'_, PyAny>) -> PyResult<PreparedCall> {
    prepare(segment_id.py(), &SEGMENTS_DELETE, || {
        ready(Args::Delete(id_text(segment_id, "segment_id")?))
    })
}

/// `client.segments.add_subscribers`'s call: the shared checks name the spec's
/// `subscriber_hash`, the error the argument.
#[pyfunction]
fn segments_add_subscribers(
    segment_id: &Bound<'_, PyAny>,
    subscriber_hashes: &Bound<'_, PyAny>,
) -> PyResult<PreparedCall> {
    prepare(segment_id.py(), &SEGMENTS_ADD_SUBSCRIBERS, || {
        ready(Args::AddSubscribers(
            id_text(segment_id, "segment_id")?,
            str_list(subscriber_hashes, "subscriber_hashes")?,
        ))
    })
}

/// `client.segments.add_profiles`'s call.
#[pyfunction]
fn segments_add_profiles(
    segment_name: &Bound<'_, PyAny>,
    profile_ids: &Bound<'_, PyAny>,
) -> PyResult<PreparedCall> {
    profiles(&SEGMENTS_PROFILES, segment_name, profile_ids, "add")
}

/// `client.segments.remove_profiles`'s call.
#[pyfunction]
fn segments_remove_profiles(
    segment_name: &Bound<'_, PyAny>,
    profile_ids: &Bound<'_, PyAny>,
) -> PyResult<PreparedCall> {
    profiles(
        // the same request as `add_profiles`, its `operation` the other
        Known::as_("segments.remove_profiles", SEGMENTS_PROFILES.python_names),
        segment_name,
        profile_ids,
        "delete",
    )
}

/// A change of a segment's members by profile id (`operation`: `add` or `delete`); the
/// shared checks name the spec's `profile_id`, the error the argument.
fn profiles(
    known: impl Into<Known>,
    segment_name: &Bound<'_, PyAny>,
    profile_ids: &Bound<'_, PyAny>,
    operation: &'static str,
) -> PyResult<PreparedCall> {
    prepare(segment_name.py(), known, || {
        ready(Args::Profiles(
            text(segment_name, "segment_name")?,
            str_list(profile_ids, "profile_ids")?,
            operation,
        ))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(segments_list, m)?)?;
    m.add_function(wrap_pyfunction!(segments_delete, m)?)?;
    m.add_function(wrap_pyfunction!(segments_add_subscribers, m)?)?;
    m.add_function(wrap_pyfunction!(segments_add_profiles, m)?)?;
    m.add_function(wrap_pyfunction!(segments_remove_profiles, m)?)
}

impl Args {
    async fn send(self, t: &Transport) -> Result<Output, Error> {
        Ok(match self {
            Args::List {
                segment_id,
                limit,
                offset,
                segment_type,
            } => Output::Segments(
                segments::list(
                    t,
                    segment_id.as_deref(),
                    limit,
                    offset,
                    segment_type.as_deref(),
                )
                .await?,
            ),
            Args::Delete(id) => Output::Text(segments::delete(t, &id).await?),
            Args::AddSubscribers(id, hashes) => {
                Output::Text(segments::add_subscribers(t, &id, &hashes).await?)
            }
            Args::Profiles(name, ids, operation) => {
                segments::profiles(t, &name, &ids, operation).await?;
                Output::Nothing
            }
        })
    }
}

impl Run for Args {
    fn run(self: Box<Self>, t: &Transport) -> Running<'_> {
        Box::pin(self.send(t))
    }
}

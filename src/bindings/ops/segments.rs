//! `segments.list`, `delete`, `add_subscribers`, `add_profiles` and `remove_profiles`: their
//! arguments read, then sent by `crate::client::segments` (the `_bulk` ones are in `bulk`).

use crate::message;
use crate::validate::FIELD;
use pyo3::prelude::*;

use super::args::{id_text, opt_int, opt_text, str_list, text};
use super::operation::{prepare, prepare_request, request, sends, Known, PreparedCall};
use crate::client::{segments, Error};
use crate::model::{
    MembershipChange, ProfileMembership, SegmentDeletion, SegmentHashes, SegmentsQuery,
};
use crate::operations::{
    Declared, SegmentsAddSubscribers, SegmentsDelete, SegmentsList, SegmentsProfiles,
};

sends! {
    SegmentsList: segments::list;
    SegmentsDelete: segments::delete;
    SegmentsAddSubscribers: segments::add_subscribers;
    SegmentsProfiles: segments::profiles;
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
    prepare_request::<SegmentsList>(limit.py(), || {
        Ok(SegmentsQuery {
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
    prepare_request::<SegmentsDelete>(segment_id.py(), || {
        let segment_id = id_text(segment_id, "segment_id")?;
        Ok(SegmentDeletion { segment_id })
    })
}

/// `client.segments.add_subscribers`'s call: the shared checks name the spec's
/// `subscriber_hash`, the error the argument.
#[pyfunction]
fn segments_add_subscribers(
    segment_id: &Bound<'_, PyAny>,
    subscriber_hashes: &Bound<'_, PyAny>,
) -> PyResult<PreparedCall> {
    prepare_request::<SegmentsAddSubscribers>(segment_id.py(), || {
        let segment_id = id_text(segment_id, "segment_id")?;
        let subscriber_hash = str_list(subscriber_hashes, "subscriber_hashes")?;
        Ok(SegmentHashes {
            segment_id,
            subscriber_hash,
        })
    })
}

/// `client.segments.add_profiles`'s call.
#[pyfunction]
fn segments_add_profiles(
    segment_name: &Bound<'_, PyAny>,
    profile_ids: &Bound<'_, PyAny>,
) -> PyResult<PreparedCall> {
    let known = SegmentsProfiles::OPERATION;
    profiles(known, segment_name, profile_ids, MembershipChange::Add)
}

/// `client.segments.remove_profiles`'s call: the request of `add_profiles`, its `operation`
/// the other.
#[pyfunction]
fn segments_remove_profiles(
    segment_name: &Bound<'_, PyAny>,
    profile_ids: &Bound<'_, PyAny>,
) -> PyResult<PreparedCall> {
    let names = SegmentsProfiles::OPERATION.python_names;
    let known = Known::as_("segments.remove_profiles", names);
    profiles(known, segment_name, profile_ids, MembershipChange::Delete)
}

/// A change of a segment's members by profile id; the shared checks name the spec's
/// `profile_id`, the error the argument.
fn profiles(
    known: impl Into<Known>,
    segment_name: &Bound<'_, PyAny>,
    profile_ids: &Bound<'_, PyAny>,
    operation: MembershipChange,
) -> PyResult<PreparedCall> {
    prepare(segment_name.py(), known, || {
        Ok(request::<SegmentsProfiles>(ProfileMembership {
            segment_name: text(segment_name, "segment_name")?,
            profile_id: str_list(profile_ids, "profile_ids")?,
            operation,
        }))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(segments_list, m)?)?;
    m.add_function(wrap_pyfunction!(segments_delete, m)?)?;
    m.add_function(wrap_pyfunction!(segments_add_subscribers, m)?)?;
    m.add_function(wrap_pyfunction!(segments_add_profiles, m)?)?;
    m.add_function(wrap_pyfunction!(segments_remove_profiles, m)?)
}

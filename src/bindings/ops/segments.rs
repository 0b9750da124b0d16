//! `segments.list`, `delete`, `add_subscribers`, `add_profiles` and `remove_profiles`: their
//! arguments read, then sent by `crate::client::segments` (the `_bulk` ones are in `bulk`).

use pyo3::prelude::*;
use pyo3::types::PyTuple;

use super::args::{arg, id_text, opt_int, opt_text, rename_head, str_list, text};
use super::output::Output;
use crate::client::{segments, Error, Transport};

/// The calls of this resource, as the Python wrapper names them after `segments.`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Name {
    List,
    Delete,
    AddSubscribers,
    AddProfiles,
    RemoveProfiles,
}

pub enum Call {
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

/// How a violation's field is named to the Python caller of `name`: the shared checks name
/// fields as the spec does (`subscriber_hash`), the error the argument (`subscriber_hashes`).
pub fn renamer(name: Name) -> fn(&str) -> String {
    match name {
        Name::AddSubscribers => |f| rename_head(f, "subscriber_hash", "subscriber_hashes"),
        Name::AddProfiles | Name::RemoveProfiles => |f| rename_head(f, "profile_id", "profile_ids"),
        Name::List | Name::Delete => super::args::same_name,
    }
}

/// Reads the arguments of `name`, in the order the Python wrapper passes them.
pub fn parse(name: Name, args: &Bound<'_, PyTuple>) -> Result<Call, Error> {
    let a = |i| arg(args, i);
    Ok(match name {
        Name::List => Call::List {
            segment_id: if a(0).is_none() {
                None
            } else {
                Some(id_text(&a(0), "segment_id")?)
            },
            limit: opt_int(&a(1), "limit")?,
            offset: opt_int(&a(2), "offset")?,
            segment_type: match opt_text(&a(3), "segment_type")? {
                // The spec names one value; anything else would be read as the default
                // (custom segments only) without a word, so a typo ("All") is refused.
                Some(t) if t != "all" => {
                    return Err(Error::validation(
                        "segment_type",
                        format!("segment_type must be \"all\" (every segment) or None (custom segments only), not {t:?}"),
                    ))
                }
                t => t,
            },
        },
        Name::Delete => Call::Delete(id_text(&a(0), "segment_id")?),
        Name::AddSubscribers => Call::AddSubscribers(
            id_text(&a(0), "segment_id")?,
            str_list(&a(1), "subscriber_hashes")?,
        ),
        Name::AddProfiles | Name::RemoveProfiles => Call::Profiles(
            text(&a(0), "segment_name")?,
            str_list(&a(1), "profile_ids")?,
            if name == Name::AddProfiles {
                "add"
            } else {
                "delete"
            },
        ),
    })
}

impl Call {
    pub async fn run(self, t: &Transport) -> Result<Output, Error> {
        Ok(match self {
            Call::List {
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
            Call::Delete(id) => Output::Text(segments::delete(t, &id).await?),
            Call::AddSubscribers(id, hashes) => {
                Output::Text(segments::add_subscribers(t, &id, &hashes).await?)
            }
            Call::Profiles(name, ids, operation) => {
                segments::profiles(t, &name, &ids, operation).await?;
                Output::Nothing
            }
        })
    }
}

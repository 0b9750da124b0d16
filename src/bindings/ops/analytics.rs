//! `analytics.summary` and `analytics.subscribers`: their arguments read, then sent by
//! `crate::client::analytics`.

use pyo3::prelude::*;
use pyo3::types::PyTuple;

use super::args::{arg, rename_head, str_list, text};
use super::output::Output;
use crate::bindings::convert::date_text;
use crate::client::{analytics, Error, Transport};

/// The calls of this resource, as the Python wrapper names them after `analytics.`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Name {
    Summary,
    Subscribers,
}

pub enum Call {
    /// From, to (`YYYY-MM-DD`), and the grouping.
    Summary(String, String, String),
    /// The dimensions asked for; `None` for every one.
    Subscribers(Option<Vec<String>>),
}

/// How a violation's field is named to the Python caller of `name`: the shared checks name
/// fields as the spec does (`from`, `type`), the error the argument (`start`, `types`).
pub fn renamer(name: Name) -> fn(&str) -> String {
    match name {
        Name::Summary => |f| match f {
            "from" => "start".to_string(),
            "to" => "end".to_string(),
            other => other.to_string(),
        },
        Name::Subscribers => |f| rename_head(f, "type", "types"),
    }
}

/// Reads the arguments of `name`, in the order the Python wrapper passes them.
pub fn parse(name: Name, args: &Bound<'_, PyTuple>) -> Result<Call, Error> {
    let a = |i| arg(args, i);
    Ok(match name {
        Name::Summary => Call::Summary(
            date_text(&a(0), "start")?,
            date_text(&a(1), "end")?,
            text(&a(2), "group_by")?,
        ),
        Name::Subscribers => Call::Subscribers(if a(0).is_none() {
            None
        } else {
            let types = str_list(&a(0), "types")?;
            // Sent as `type=`, which the service reads as no filter: every dimension.
            if types.is_empty() {
                return Err(Error::validation(
                    "types",
                    "types is empty: leave it out (None) for every dimension",
                ));
            }
            Some(types)
        }),
    })
}

impl Call {
    pub async fn run(self, t: &Transport) -> Result<Output, Error> {
        Ok(match self {
            Call::Summary(from, to, g) => {
                Output::Rows(analytics::summary(t, &from, &to, &g).await?)
            }
            Call::Subscribers(types) => {
                Output::Distribution(analytics::subscribers(t, types.as_deref()).await?)
            }
        })
    }
}

//! `triggers.get` and `triggers.list`: their arguments read, then sent by
//! `crate::client::triggers`.

use pyo3::prelude::*;
use pyo3::types::PyTuple;

use super::args::{arg, id_int, opt_int, range};
use super::output::Output;
use crate::client::{triggers, AnalyticsRange, Error, Transport};

/// The calls of this resource, as the Python wrapper names them after `triggers.`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Name {
    Get,
    List,
}

pub enum Call {
    Get(i64, AnalyticsRange),
    List(Option<i64>, Option<i64>, AnalyticsRange),
}

/// Reads the arguments of `name`, in the order the Python wrapper passes them.
pub fn parse(name: Name, args: &Bound<'_, PyTuple>) -> Result<Call, Error> {
    let a = |i| arg(args, i);
    Ok(match name {
        Name::Get => Call::Get(id_int(&a(0), "trigger_id")?, range(args, 1)?),
        Name::List => Call::List(
            opt_int(&a(0), "page")?,
            opt_int(&a(1), "limit")?,
            range(args, 2)?,
        ),
    })
}

impl Call {
    pub async fn run(self, t: &Transport) -> Result<Output, Error> {
        Ok(match self {
            Call::Get(id, r) => Output::Trigger(Box::new(triggers::get(t, id, &r).await?)),
            Call::List(p, l, r) => Output::Triggers(triggers::list(t, p, l, &r).await?),
        })
    }
}

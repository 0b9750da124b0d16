//! `triggers.get` and `triggers.list`: their arguments read, then sent by
//! `crate::client::triggers`.

use pyo3::prelude::*;
use pyo3::types::PyTuple;

use super::args::CampaignRead;
use super::output::Output;
use crate::client::{triggers, Error, Transport};

/// The calls of this resource, as the Python wrapper names them after `triggers.`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Name {
    Get,
    List,
}

pub struct Call(CampaignRead);

/// Reads the arguments of `name`, in the order the Python wrapper passes them.
pub fn parse(name: Name, args: &Bound<'_, PyTuple>) -> Result<Call, Error> {
    Ok(Call(match name {
        Name::Get => CampaignRead::get(args, "trigger_id")?,
        Name::List => CampaignRead::list(args)?,
    }))
}

impl Call {
    pub async fn run(self, t: &Transport) -> Result<Output, Error> {
        Ok(match self.0 {
            CampaignRead::Get(id, r) => Output::Trigger(Box::new(triggers::get(t, id, &r).await?)),
            CampaignRead::List(q) => Output::Triggers(triggers::list(t, &q).await?),
        })
    }
}

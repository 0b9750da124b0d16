//! `triggers.get` and `triggers.list`: their arguments read, then sent by
//! `crate::client::triggers`.

use pyo3::prelude::*;

use super::args::{campaign_reads, range, CampaignRead};
use super::operation::{prepare, PreparedCall, Ready, Run, Running};
use super::output::Output;
use crate::client::{triggers, Error, Transport};
use crate::operations::{TRIGGERS_GET, TRIGGERS_LIST};

pub struct Args(CampaignRead);

campaign_reads!(triggers_get TRIGGERS_GET, triggers_list TRIGGERS_LIST, trigger_id, Args);

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(triggers_get, m)?)?;
    m.add_function(wrap_pyfunction!(triggers_list, m)?)
}

impl Args {
    async fn send(self, t: &Transport) -> Result<Output, Error> {
        Ok(match self.0 {
            CampaignRead::Get(id, r) => Output::Trigger(Box::new(triggers::get(t, id, &r).await?)),
            CampaignRead::List(q) => Output::Triggers(triggers::list(t, &q).await?),
        })
    }
}

impl Run for Args {
    fn run(self: Box<Self>, t: &Transport) -> Running<'_> {
        Box::pin(self.send(t))
    }
}

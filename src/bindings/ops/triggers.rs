//! `triggers.get` and `triggers.list`: their requests read, then sent by
//! `crate::client::triggers`.

use pyo3::prelude::*;

use super::args::{campaign_query, campaign_reads, list_query, range};
use super::operation::{prepare_request, sends, PreparedCall};
use crate::client::triggers;
use crate::operations::{TriggersGet, TriggersList};

sends! {
    TriggersGet: triggers::get;
    TriggersList: triggers::list;
}

campaign_reads!(triggers_get TriggersGet, triggers_list TriggersList, trigger_id);

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(triggers_get, m)?)?;
    m.add_function(wrap_pyfunction!(triggers_list, m)?)
}

//! Every API call the Python face can make, one file per resource as in `crate::client`:
//! each defines its operations' functions of `pushwire._core` (`drips_get`), which read the
//! Python arguments (with the GIL, before anything is sent) into a typed call, and runs
//! that call on the runtime (without it); `output` turns the results back into Python
//! objects (with it again). `operation` holds what a prepared call is and how it runs;
//! `args` the argument readers they share.

mod analytics;
mod args;
mod bulk;
mod drips;
mod events;
mod notifications;
mod operation;
mod output;
mod products;
mod request;
mod segments;
mod triggers;

pub use args::{headers, pairs};
pub use events::{event, read_events};
pub use operation::{Op, PreparedCall, Ready, Renamer};
pub use output::Output;

use pyo3::prelude::*;

/// Every operation's function, added to `pushwire._core`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PreparedCall>()?;
    triggers::register(m)?;
    drips::register(m)?;
    segments::register(m)?;
    bulk::register(m)?;
    analytics::register(m)?;
    products::register(m)?;
    notifications::register(m)?;
    events::register(m)?;
    request::register(m)
}

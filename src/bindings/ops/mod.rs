//! Every API call the Python face can make, one file per resource as in `crate::client`:
//! each reads its calls' Python arguments (with the GIL, before anything is sent) into a
//! typed call and runs it on the runtime (without it); `output` turns the results back into
//! Python objects (with it again). `operation` names the calls and dispatches them by type;
//! `args` holds the argument readers they share.

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
pub use events::{event, track_many_args};
pub use operation::{parse, renamer, Op, Operation, Renamer};
pub use output::Output;

//! The spec's limits (section 8) and required fields, written once and used by both the
//! client (before anything is sent) and the emulator (to answer as the service does).
//!
//! Each check returns a [`Violation`] naming the field by the spec's parameter name, with the
//! message the service gives (Laravel-style sentences on the broadcast endpoint, Joi-style on
//! the events interface, plain sentences on the campaign endpoints).
//!
//! One file per resource beside the shared pieces: `limits` holds every number of the
//! spec's section 8, `violation` what a failed check returns, `formats` the text formats
//! and `campaigns` what drips and alerts share. Every item is re-exported here, so callers
//! write `crate::validate::broadcast` whatever file it lives in.

mod analytics;
mod broadcast_form;
mod campaigns;
mod drips;
mod events;
mod formats;
mod limits;
mod notifications;
mod products;
mod segments;
mod violation;

pub use analytics::*;
pub use campaigns::*;
pub use drips::*;
pub use events::*;
pub use formats::*;
pub use limits::*;
pub use notifications::*;
pub use products::*;
pub use segments::*;
pub use violation::*;

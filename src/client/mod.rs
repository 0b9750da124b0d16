//! The async client of the spec's API: [`transport`] knows HTTP, one module per resource
//! knows that resource's paths and shapes, and every input is checked by `crate::validate`
//! before anything is sent. No pyo3 here: `cargo test` covers it on its own.

pub mod analytics;
pub mod bulk;
pub mod campaigns;
pub mod checkpoint;
pub mod drips;
pub mod error;
pub mod events;
pub mod known_segments;
pub mod notifications;
pub mod products;
pub mod request;
pub mod segments;
pub mod transport;
pub mod triggers;

pub use crate::model::{AnalyticsRange, ListQuery, Page};
pub use error::{ApiFailure, Error, Result};
pub use transport::{Config, Limits, Transport};

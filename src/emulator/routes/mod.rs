//! The API routes of both interfaces, one module per resource: each knows its paths,
//! shapes and state changes; the gate (`http::gate`) has already authenticated the key.

pub mod analytics;
pub mod campaigns;
pub mod events;
pub mod extract;
pub mod notifications;
pub mod products;
pub mod segments;

//! The OpenAPI 3.1 documents of the service (both interfaces) and of the emulator's admin
//! API, built from the code that enforces them: the request and answer shapes are the model
//! types' JSON Schemas (derived by schemars from their serde attributes), every limit is a
//! constant of `validate::limits` (each marked `x-pushwire-limit` with the constant's name,
//! so a test finds every limit in the document), and the routes are those `router` serves.

mod admin;
mod service;
mod shapes;

pub use admin::admin_document;
pub use service::document;

//! pushwire: a client for the push notification service REST API, and an emulator of it.
//!
//! - [`model`]: the spec's resources as serde types, shared by both halves.
//! - [`validate`]: the spec's limits, once, for the client and the emulator.
//! - [`form`]: form-encoded bodies with arrays as indexed keys.
//! - [`operations`]: the service's operations, each with its interface, method and path.
//! - [`per_process`]: a value kept per process, made again in a forked child.
//! - [`emulator`] (feature `emulator`): the axum server of both interfaces.
//! - `bindings` (feature `python`): the pyo3 glue of `pushwire._core`, nothing else.

// Every unsafe block says why it is sound, in a `// SAFETY:` comment above it.
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod file_hold;
pub mod form;
pub mod model;
pub mod operations;
pub mod per_process;
pub mod validate;

pub mod client;

#[cfg(feature = "emulator")]
pub mod emulator;

#[cfg(feature = "python")]
mod bindings;

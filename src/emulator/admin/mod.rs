//! The emulator's own controls, apart from the API: seeding subscribers, segments and
//! triggered campaigns, reading what the service received and holds, faults, the clock,
//! reset. Each operation is a function of JSON to JSON, served as `/_emulator/{op}` and
//! called in-process by `pushwire.testing.Emulator`, so both ways run the same code.
//!
//! [`ops`] lists the operations; one file per area runs them (`sites`, `subscribers` with
//! [`seed`], `campaigns`, `deliveries`, `requests`, `faults`, `clock`); [`args`] reads
//! their arguments and [`route`] serves them over HTTP.

pub mod args;
mod campaigns;
mod clock;
mod deliveries;
mod dist;
mod faults;
mod mix;
pub mod ops;
mod population;
mod requests;
pub mod route;
pub mod seed;
mod sites;
mod subscribers;

pub use self::deliveries::DeliveryRow;
pub use self::ops::{dispatch, operations, rows, Rows};
pub use self::route::route;
pub use self::seed::DRAWN as PROFILE_FIELDS;

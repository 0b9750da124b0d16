//! The emulator: the whole API of the spec served locally from in-memory state.
//!
//! Where each thing is done:
//! - [`state`]: the data, one `State` (sites and all they hold, request log, faults,
//!   clock); [`emu`]: that state behind its lock, resets, and the way a request or an
//!   admin operation reaches its site.
//! - [`engine`]: the service's behaviour on that data (who receives what, and when).
//! - [`server`] and [`router`]: the two ports and their routes; [`gate`]: what every API
//!   request passes first (body cap, log, faults, auth), with [`admission`] (its log entry)
//!   and [`keys`]; [`request`]: reading forms, JSON and queries; [`api_error`]: the spec's
//!   error shapes.
//! - [`routes`]: one module per resource of the API.
//! - [`admin`]: `/_emulator/` controls, also called in-process from Python, one file per
//!   area; [`faults`]: injected failures; [`inspector`]: the page at
//!   `/_emulator/ui`, told of changes through [`changes`].

pub mod admin;
pub mod admission;
pub mod api_error;
pub mod changes;
pub mod emu;
pub mod engine;
pub mod faults;
pub mod gate;
pub mod guard;
pub mod inspector;
pub mod keys;
pub mod openapi;
pub mod parallel;
pub mod persist;
pub mod request;
pub mod router;
pub mod routes;
pub mod server;
pub mod state;

pub use self::emu::Emu;
pub use self::router::{events_router, main_router, Documents};
pub use self::server::{serve, Config, Server};

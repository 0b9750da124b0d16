//! The service's behaviour, not only its answers: who receives what, and when.
//!
//! Everything runs on the emulator's clock and lazily: before any request or admin call
//! touches a site, [`tick`] delivers whatever has come due since the last one, each at the
//! time it was due. So results never depend on when a test happened to look.
//!
//! One file per kind of send, all of them acting on a site's data in
//! the state (`emulator::state`; the engine holds no state of its own):
//! - `broadcasts`: 4.13, `now`, `later` in the site's time zone, or `draft`;
//! - `drips`: 2.7-2.9, 6.3, a series started when a subscriber comes to match a drip;
//! - `triggers`: 2.1, 6.2, a series started by an event, cancelled by its stop event;
//! - `products`: 2.4, 2.11, price-drop and back-in-stock alerts;
//! - `delivery`: [`tick`], what is due handed to devices, the caps, expiry;
//! - `content`: `{{tags}}` and UTM parameters; `schedule`: due times and time zones;
//!   `targeting`: who a broadcast or drip selects; `analytics`: the counts of 2.6.

pub mod analytics;
mod broadcasts;
mod content;
mod delivery;
mod drips;
mod products;
pub mod schedule;
pub mod targeting;
mod triggers;

pub use self::broadcasts::on_broadcast;
pub use self::content::{personalize, with_utm};
pub use self::delivery::{set_online, targets, tick};
pub use self::drips::on_audience_change;
pub use self::products::{on_products, PriceChange};
pub use self::schedule::parse_offset;
pub use self::triggers::on_event;

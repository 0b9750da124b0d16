//! The emulator's state, explicit and in one place so a test can reset it: sites (one per
//! API key) and everything each site holds, the request log, armed faults and the clock.
//! Plain data: the engine acts on it, `Emu` (in `emu`) guards it.

mod attributes;
mod by_hash;
mod deliveries;
mod hash;
mod index;
mod interned;
mod rows;
mod site;
mod store;
mod time;

pub use self::attributes::{Attributes, Scalar};
pub use self::deliveries::{
    Alert, Content, Counts, Delivery, Dispatch, EngineState, Scheduled, Source, Status, Tally,
};
pub use self::hash::SubscriberHash;
pub use self::index::{Field, Index};
pub use self::interned::Sym;
pub use self::rows::{
    DripRec, EventRec, NotificationRec, ProductRec, SegmentRec, SegmentSet, Subscriber,
};
pub use self::site::{Site, SiteId};
pub use self::store::{
    prune, trace_id_of, Counters, LogEntry, State, WallClock, DEFAULT_RETENTION,
};
pub use self::time::iso;
pub(crate) use self::time::{loose, opt_stamp, stamp};
pub use crate::emulator::keys::key_problem;

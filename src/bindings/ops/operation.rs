//! The operations the Python wrappers call the core with (`"segments.list"`), each named
//! once here and dispatched by type to the file of its resource, which reads its arguments
//! and runs it.
//!
//! A call looks its name up once ([`Operation::named`]); its error names, its parsing and
//! its running then go by the typed [`Operation`] and [`Op`].

use pyo3::prelude::*;
use pyo3::types::PyTuple;

use super::args::same_name;
use super::output::Output;
use super::{analytics, bulk, drips, events, notifications, products, request, segments, triggers};
use crate::client::{Error, Transport};

/// Maps a core field name to the Python argument's.
pub type Renamer = fn(&str) -> String;

/// An operation the Python face can call, by resource.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Triggers(triggers::Name),
    Drips(drips::Name),
    Segments(segments::Name),
    SegmentsBulk(bulk::Kind),
    Analytics(analytics::Name),
    ProductsUpdate,
    NotificationsCreate,
    Events(events::Name),
    Request,
}

impl Operation {
    /// The operation the Python wrapper names, if there is one.
    pub fn named(name: &str) -> Option<Operation> {
        use Operation as O;
        Some(match name {
            "triggers.get" => O::Triggers(triggers::Name::Get),
            "triggers.list" => O::Triggers(triggers::Name::List),
            "drips.create" => O::Drips(drips::Name::Create),
            "drips.get" => O::Drips(drips::Name::Get),
            "drips.list" => O::Drips(drips::Name::List),
            "segments.list" => O::Segments(segments::Name::List),
            "segments.delete" => O::Segments(segments::Name::Delete),
            "segments.add_subscribers" => O::Segments(segments::Name::AddSubscribers),
            "segments.add_profiles" => O::Segments(segments::Name::AddProfiles),
            "segments.remove_profiles" => O::Segments(segments::Name::RemoveProfiles),
            "segments.add_subscribers_bulk" => O::SegmentsBulk(bulk::Kind::AddHashes),
            "segments.add_profiles_bulk" => O::SegmentsBulk(bulk::Kind::AddProfiles),
            "segments.remove_profiles_bulk" => O::SegmentsBulk(bulk::Kind::RemoveProfiles),
            "analytics.summary" => O::Analytics(analytics::Name::Summary),
            "analytics.subscribers" => O::Analytics(analytics::Name::Subscribers),
            "products.update" => O::ProductsUpdate,
            "notifications.create" => O::NotificationsCreate,
            "events.track" => O::Events(events::Name::Track),
            "events.track_many" => O::Events(events::Name::TrackMany),
            "request" => O::Request,
            _ => return None,
        })
    }

    /// Whether this is `events.track_many`, which a blocking call may share with the I/O
    /// threads.
    pub fn is_track_many(self) -> bool {
        self == Operation::Events(events::Name::TrackMany)
    }

    /// How a violation's field is named to the Python caller: the shared checks name fields
    /// as the spec does (`notification_title`, `subscriber_hash`, `from`), the error names
    /// the Python argument that carries them (`title`, `subscriber_hashes`, `start`).
    pub fn renamer(self) -> Renamer {
        match self {
            Operation::NotificationsCreate => notifications::rename,
            Operation::Segments(name) => segments::renamer(name),
            Operation::Analytics(name) => analytics::renamer(name),
            _ => same_name,
        }
    }

    /// Reads the call's arguments, in the order the Python wrappers pass them.
    pub fn parse(self, args: &Bound<'_, PyTuple>) -> Result<Op, Error> {
        Ok(match self {
            Operation::Triggers(name) => Op::Triggers(triggers::parse(name, args)?),
            Operation::Drips(name) => Op::Drips(drips::parse(name, args)?),
            Operation::Segments(name) => Op::Segments(segments::parse(name, args)?),
            Operation::SegmentsBulk(kind) => Op::SegmentsBulk(bulk::parse(kind, args)?),
            Operation::Analytics(name) => Op::Analytics(analytics::parse(name, args)?),
            Operation::ProductsUpdate => Op::Products(products::parse(args)?),
            Operation::NotificationsCreate => Op::Notifications(notifications::parse(args)?),
            Operation::Events(name) => Op::Events(events::parse(name, args)?),
            Operation::Request => Op::Request(request::parse(args)?),
        })
    }
}

/// The renamer of `operation`, or none for a name that is no operation.
pub fn renamer(operation: Option<Operation>) -> Renamer {
    operation.map_or(same_name, Operation::renamer)
}

/// Reads the arguments of the operation named `name` (looked up as `operation`).
pub fn parse(
    operation: Option<Operation>,
    name: &str,
    args: &Bound<'_, PyTuple>,
) -> Result<Op, Error> {
    match operation {
        Some(operation) => operation.parse(args),
        None => Err(Error::Internal(format!("unknown operation {name}"))),
    }
}

/// A call with its arguments read, ready to run without the GIL.
pub enum Op {
    Triggers(triggers::Call),
    Drips(drips::Call),
    Segments(segments::Call),
    SegmentsBulk(bulk::Call),
    Analytics(analytics::Call),
    Products(products::Call),
    Notifications(notifications::Call),
    Events(events::Call),
    Request(request::Call),
}

impl Op {
    /// Whether the op sends one request (with its retries), rather than a batch of them.
    pub fn is_single_request(&self) -> bool {
        match self {
            Op::SegmentsBulk(_) => false,
            Op::Events(call) => !call.is_batch(),
            _ => true,
        }
    }

    /// Marks the op as running on one of the client's I/O threads (see
    /// [`bulk::Call::on_io_thread`]).
    pub fn on_io_thread(mut self) -> Op {
        if let Op::SegmentsBulk(call) = &mut self {
            call.on_io_thread();
        }
        self
    }

    pub async fn run(self, t: &Transport) -> Result<Output, Error> {
        match self {
            Op::Triggers(call) => call.run(t).await,
            Op::Drips(call) => call.run(t).await,
            Op::Segments(call) => call.run(t).await,
            Op::SegmentsBulk(call) => call.run(t).await,
            Op::Analytics(call) => call.run(t).await,
            Op::Products(call) => call.run(t).await,
            Op::Notifications(call) => call.run(t).await,
            Op::Events(call) => call.run(t).await,
            Op::Request(call) => call.run(t).await,
        }
    }
}

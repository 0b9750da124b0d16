//! What a client remembers of its site between calls, shared by every pool made from its
//! configuration (each thread's), so that one read serves them all.

use std::collections::HashSet;
use std::time::Instant;

#[derive(Debug, Default)]
pub struct SiteMemo {
    /// The site's segment ids and when they were read (`crate::client::known_segments` reads
    /// and checks them). An async lock: calls that find the read stale wait for the one read
    /// in flight, rather than each listing the segments.
    pub segment_ids: tokio::sync::Mutex<Option<(Instant, HashSet<i64>)>>,
}

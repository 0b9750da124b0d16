//! The state as the file holds it ([`Image`]): every site with all it holds, the id counters,
//! the clock and the request log, taken from a [`State`] without copying its bulk (the
//! fields borrow, as `Cow::Borrowed`) and read back into one ([`Image::into_state`]), the
//! indexes rebuilt.
//!
//! What is not kept: armed faults (they belong to the test that armed them), and the
//! settings the emulator is started with (request log on or off, retention). The default key
//! is kept, for an emulator started without one.
//! A notification's content, shared by all its deliveries in memory, is written once and
//! shared again when read.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::Arc;

use chrono::{DateTime, Duration, FixedOffset, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::chunked::Chunked;
use super::rows::{DeliveryRow, DispatchRow, Dispatches, SubscriberRow, Texts};
use crate::emulator::state::{loose, opt_stamp, stamp};
use crate::emulator::state::{
    Alert, Content, Counters, Dispatch, DripRec, EngineState, EventRec, LogEntry, NotificationRec,
    ProductRec, Scheduled, SegmentRec, Site, Source, State, Sym,
};
use crate::model::TriggeredCampaign;

/// The whole state. Its fields, and those of the state's types it holds, are in the file's
/// order, without names: adding, removing or reordering one is a new format version
/// (`file::FORMAT`; the layout test in `tests.rs` says when).
#[derive(Serialize, Deserialize)]
pub struct Image<'a> {
    /// The key of the default site of the emulator that saved it.
    pub default_key: Cow<'a, str>,
    ids: Cow<'a, Counters>,
    /// What `advance` added to wall time: seconds, and nanoseconds of the same sign.
    clock_offset: (i64, i32),
    #[serde(with = "opt_stamp")]
    frozen_at: Option<DateTime<Utc>>,
    log_dropped: u64,
    log_pruned: u64,
    log: Vec<LogImage<'a>>,
    #[serde(borrow)]
    sites: Vec<SiteImage<'a>>,
}

#[derive(Serialize, Deserialize)]
struct LogImage<'a> {
    request_id: Cow<'a, str>,
    interface: Cow<'a, str>,
    method: Cow<'a, str>,
    path: Cow<'a, str>,
    query: Cow<'a, str>,
    #[serde(with = "loose")]
    headers: Cow<'a, Map<String, Value>>,
    body: Cow<'a, str>,
    status: Option<u16>,
    #[serde(with = "stamp")]
    received_at: DateTime<Utc>,
    duration_ms: Option<f64>,
    fault: Option<Cow<'a, str>>,
}

#[derive(Serialize, Deserialize)]
struct SiteImage<'a> {
    site_id: i64,
    api_key: Cow<'a, str>,
    /// East of UTC, in seconds.
    timezone: i32,
    /// The texts its subscribers' rows name by number.
    #[serde(borrow)]
    texts: Vec<Cow<'a, str>>,
    #[serde(borrow)]
    subscribers: Chunked<'a, SubscriberRow<'a>>,
    segments: Cow<'a, [SegmentRec]>,
    #[serde(with = "loose")]
    triggers: Cow<'a, [TriggeredCampaign]>,
    drips: Cow<'a, [DripRec]>,
    notifications: Cow<'a, [NotificationRec]>,
    products: Cow<'a, BTreeMap<(String, Option<String>), ProductRec>>,
    events: Cow<'a, VecDeque<EventRec>>,
    events_pruned: u64,
    #[serde(borrow)]
    engine: EngineImage<'a>,
}

#[derive(Serialize, Deserialize)]
struct EngineImage<'a> {
    /// Every distinct content of the schedule and the deliveries, each once.
    contents: Vec<Cow<'a, Content>>,
    #[serde(borrow)]
    scheduled: Chunked<'a, ScheduledImage<'a>>,
    /// The sends the deliveries name by number.
    dispatches: Vec<DispatchRow>,
    #[serde(borrow)]
    deliveries: Chunked<'a, DeliveryRow>,
    drip_starts: Cow<'a, HashSet<(i64, String)>>,
    alerts: Vec<AlertImage<'a>>,
    runs: Cow<'a, BTreeMap<(i64, String), Vec<u64>>>,
    run_left: Cow<'a, HashMap<u64, usize>>,
    next_run: u64,
    sends: Cow<'a, HashMap<(i64, usize), Vec<usize>>>,
    waiting: Cow<'a, HashMap<usize, Vec<usize>>>,
    pending: usize,
    #[serde(with = "opt_stamp")]
    next_expiry: Option<DateTime<Utc>>,
}

#[derive(Serialize, Deserialize)]
struct ScheduledImage<'a> {
    #[serde(with = "stamp")]
    due_at: DateTime<Utc>,
    subscriber_hash: Option<Cow<'a, str>>,
    source: Source,
    source_id: i64,
    notification_id: i64,
    /// Its place in `EngineImage::contents`.
    content: u32,
    expiry_seconds: i64,
    run: u64,
}

#[derive(Serialize, Deserialize)]
struct AlertImage<'a> {
    subscriber_hash: Cow<'a, str>,
    product_id: Cow<'a, str>,
    variant_id: Option<Cow<'a, str>>,
    #[serde(with = "stamp")]
    created_at: DateTime<Utc>,
    fired_by: Cow<'a, [i64]>,
    baselines: Cow<'a, [(Option<String>, f64)]>,
}

/// What a file that passed its checksum may still hold wrong (one written by hand, or by a
/// faulty writer): said rather than acted on, since the engine indexes by these.
pub type Inconsistent = String;

impl<'a> Image<'a> {
    /// The state as it stands, borrowed.
    pub fn of(state: &'a State, default_key: &'a str) -> Image<'a> {
        Image {
            default_key: Cow::Borrowed(default_key),
            ids: Cow::Borrowed(&state.ids),
            clock_offset: (
                state.clock_offset.num_seconds(),
                state.clock_offset.subsec_nanos(),
            ),
            frozen_at: state.frozen_at,
            log_dropped: state.log_dropped as u64,
            log_pruned: state.log_pruned,
            log: state.log.iter().map(LogImage::of).collect(),
            sites: state.sites.values().map(SiteImage::of).collect(),
        }
    }

    /// The state it holds, its indexes rebuilt.
    pub fn into_state(self) -> Result<State, Inconsistent> {
        let mut state = State::empty();
        state.ids = self.ids.into_owned();
        let (secs, nanos) = self.clock_offset;
        state.clock_offset = Duration::try_seconds(secs)
            .and_then(|d| d.checked_add(&Duration::nanoseconds(nanos.into())))
            .filter(|d| Utc::now().checked_add_signed(*d).is_some())
            .ok_or_else(|| format!("a clock {secs} s ahead of the wall, beyond any date"))?;
        state.frozen_at = self.frozen_at;
        state.log_dropped = usize::try_from(self.log_dropped).map_err(|e| e.to_string())?;
        state.log_pruned = self.log_pruned;
        state.log = self
            .log
            .into_iter()
            .map(LogImage::into_entry)
            .collect::<Result<_, _>>()?;
        for site in self.sites {
            let site = site.into_site()?;
            let id = site.site_id;
            // The message names the site, never its key.
            if !state.restore_site(site) {
                return Err(format!("site {id} shares its id or its key with another"));
            }
        }
        check_counters(&state)?;
        Ok(state)
    }
}

impl<'a> LogImage<'a> {
    fn of(e: &'a LogEntry) -> Self {
        LogImage {
            request_id: Cow::Borrowed(&e.request_id),
            interface: Cow::Borrowed(e.interface),
            method: Cow::Borrowed(&e.method),
            path: Cow::Borrowed(&e.path),
            query: Cow::Borrowed(&e.query),
            headers: Cow::Borrowed(&e.headers),
            body: Cow::Borrowed(&e.body),
            status: e.status,
            received_at: e.received_at,
            duration_ms: e.duration_ms,
            fault: e.fault.as_deref().map(Cow::Borrowed),
        }
    }

    fn into_entry(self) -> Result<LogEntry, Inconsistent> {
        let interface = match &*self.interface {
            "main" => "main",
            "events" => "events",
            other => return Err(format!("a logged request names no interface: {other:?}")),
        };
        let headers = self.headers.into_owned();
        Ok(LogEntry {
            trace_id: crate::emulator::state::trace_id_of(&headers),
            request_id: self.request_id.into_owned(),
            interface,
            method: self.method.into_owned(),
            path: self.path.into_owned(),
            query: self.query.into_owned(),
            headers,
            body: self.body.into_owned(),
            status: self.status,
            received_at: self.received_at,
            duration_ms: self.duration_ms,
            // Only a request still in flight reads it, and none is after a restart.
            started: std::time::Instant::now(),
            fault: self.fault.map(Cow::into_owned),
        })
    }
}

impl<'a> SiteImage<'a> {
    fn of(site: &'a Site) -> Self {
        let texts = Texts::of(&site.subscribers);
        SiteImage {
            site_id: site.site_id,
            api_key: Cow::Borrowed(&site.api_key),
            timezone: site.timezone.local_minus_utc(),
            texts: texts
                .list
                .iter()
                .map(|s| Cow::Borrowed(s.as_str()))
                .collect(),
            subscribers: Chunked::Rows(
                site.subscribers.len(),
                Box::new(move |i| SubscriberRow::of(&site.subscribers[i], &texts)),
            ),
            segments: Cow::Borrowed(&site.segments),
            triggers: Cow::Borrowed(&site.triggers),
            drips: Cow::Borrowed(&site.drips),
            notifications: Cow::Borrowed(&site.notifications),
            products: Cow::Borrowed(&site.products),
            events: Cow::Borrowed(&site.events),
            events_pruned: site.events_pruned,
            engine: EngineImage::of(&site.engine),
        }
    }

    fn into_site(self) -> Result<Site, Inconsistent> {
        let mut site = Site::new(self.site_id, self.api_key.into_owned());
        site.timezone = FixedOffset::east_opt(self.timezone)
            .ok_or_else(|| format!("a time zone {} s east of UTC", self.timezone))?;
        let texts: Vec<Sym> = self.texts.iter().map(|t| Sym::of(t)).collect();
        let subscribers = self.subscribers.decode(|row| row.into_subscriber(&texts))?;
        if !site.adopt_subscribers(subscribers) {
            return Err(format!("site {} holds a subscriber twice", site.site_id));
        }
        site.segments = self.segments.into_owned();
        site.triggers = self.triggers.into_owned();
        site.drips = self.drips.into_owned();
        site.notifications = self.notifications.into_owned();
        site.products = self.products.into_owned();
        site.events = self.events.into_owned();
        site.events_pruned = self.events_pruned;
        let engine = self.engine.into_engine(&site)?;
        site.engine = engine;
        Ok(site)
    }
}

impl<'a> EngineImage<'a> {
    fn of(engine: &'a EngineState) -> Self {
        // Contents by address: every delivery of a send shares its send's one.
        let mut place: HashMap<*const Content, u32> = HashMap::new();
        let mut contents: Vec<Cow<'a, Content>> = Vec::new();
        // The deliveries of one send lie together: most look-ups are the last one's.
        let mut last: Option<(*const Content, u32)> = None;
        let mut content_of = |c: &'a Arc<Content>| -> u32 {
            let ptr = Arc::as_ptr(c);
            if let Some((p, at)) = last {
                if p == ptr {
                    return at;
                }
            }
            let at = *place.entry(ptr).or_insert_with(|| {
                contents.push(Cow::Borrowed(&**c));
                // A u32 holds every content: each one is at least one send.
                (contents.len() - 1) as u32
            });
            last = Some((ptr, at));
            at
        };
        let scheduled = engine
            .scheduled
            .iter()
            .map(|s| ScheduledImage {
                due_at: s.due_at,
                subscriber_hash: s.subscriber_hash.as_deref().map(Cow::Borrowed),
                source: s.source,
                source_id: s.source_id,
                notification_id: s.notification_id,
                content: content_of(&s.content),
                expiry_seconds: s.expiry_seconds,
                run: s.run,
            })
            .collect();
        let sends = Dispatches::of(&engine.deliveries);
        let dispatches = sends
            .list
            .iter()
            .map(|d| DispatchRow::of(d, content_of(&d.content)))
            .collect();
        let of_delivery = sends.of_delivery;
        let deliveries = Chunked::Rows(
            engine.deliveries.len(),
            Box::new(move |i| DeliveryRow::of(&engine.deliveries[i], of_delivery[i])),
        );
        EngineImage {
            contents,
            scheduled: Chunked::Made(scheduled),
            dispatches,
            deliveries,
            drip_starts: Cow::Borrowed(&engine.drip_starts),
            alerts: engine.alerts.iter().map(AlertImage::of).collect(),
            runs: Cow::Borrowed(&engine.runs),
            run_left: Cow::Borrowed(&engine.run_left),
            next_run: engine.next_run,
            sends: Cow::Borrowed(&engine.sends),
            waiting: Cow::Borrowed(&engine.waiting),
            pending: engine.pending,
            next_expiry: engine.next_expiry,
        }
    }

    /// The engine's state, for `site` (its subscribers already read).
    fn into_engine(self, site: &Site) -> Result<EngineState, Inconsistent> {
        let subscribers = site.subscribers.len();
        let contents: Vec<Arc<Content>> = self
            .contents
            .into_iter()
            .map(|c| Arc::new(c.into_owned()))
            .collect();
        let content = |at: u32| {
            contents
                .get(at as usize)
                .cloned()
                .ok_or_else(|| format!("a send names content {at} of {}", contents.len()))
        };
        let scheduled = self.scheduled.decode(|s| {
            Ok(Scheduled {
                due_at: s.due_at,
                subscriber_hash: s.subscriber_hash.map(Cow::into_owned),
                source: s.source,
                source_id: s.source_id,
                notification_id: s.notification_id,
                content: content(s.content)?,
                expiry_seconds: s.expiry_seconds,
                run: s.run,
            })
        })?;
        let dispatches: Vec<Arc<Dispatch>> = self
            .dispatches
            .into_iter()
            .map(|d| {
                let c = content(d.content)?;
                Ok(Arc::new(d.into_dispatch(c)))
            })
            .collect::<Result<_, Inconsistent>>()?;
        let deliveries = self
            .deliveries
            .decode(|row| row.into_delivery(&dispatches, subscribers))?;
        // Counted once all are decoded: on one thread, each send's tally its own cache line
        // for the whole of its run of deliveries.
        deliveries.iter().for_each(|d| d.dispatch.tally.count(d));
        let sends = self.sends.into_owned();
        let waiting = self.waiting.into_owned();
        // The engine indexes `deliveries` and the subscribers by these positions.
        let out_of_range = sends
            .iter()
            .map(|((_, sub), at)| (*sub, at))
            .chain(waiting.iter().map(|(sub, at)| (*sub, at)))
            .any(|(sub, at)| sub >= subscribers || at.iter().any(|&i| i >= deliveries.len()));
        if out_of_range {
            return Err("an index names a delivery or a subscriber the site does not hold".into());
        }
        // The count the engine takes one from as deliveries stop waiting.
        let waiting_total: usize = waiting.values().map(Vec::len).sum();
        if self.pending != waiting_total {
            return Err(format!(
                "{} deliveries counted as waiting, {waiting_total} listed",
                self.pending
            ));
        }
        let mut broadcast_sends: HashMap<i64, Vec<Arc<Dispatch>>> = HashMap::new();
        for d in dispatches.iter().filter(|d| d.source == Source::Broadcast) {
            broadcast_sends
                .entry(d.source_id)
                .or_default()
                .push(d.clone());
        }
        Ok(EngineState {
            scheduled: scheduled.into(),
            by_source: EngineState::index_sources(&deliveries),
            out_of_order: !deliveries.is_sorted_by_key(|d| d.order_key()),
            sent_order: None,
            deliveries,
            drip_starts: self.drip_starts.into_owned(),
            alerts: self
                .alerts
                .into_iter()
                .map(AlertImage::into_alert)
                .collect(),
            runs: self.runs.into_owned(),
            run_left: self.run_left.into_owned(),
            next_run: self.next_run,
            sends,
            waiting,
            pending: self.pending,
            next_expiry: self.next_expiry,
            broadcast_sends,
        })
    }
}

/// Ids come from the counters: each must be at least the largest id it gave, or the next one
/// would be given twice (a site added after the load would replace one read).
fn check_counters(state: &State) -> Result<(), Inconsistent> {
    let ids = &state.ids;
    let mut over: Vec<(&str, i64, i64)> = Vec::new();
    let mut check = |what: &'static str, counter: i64, id: i64| {
        if id > counter {
            over.push((what, id, counter));
        }
    };
    for site in state.sites.values() {
        check("site", ids.site, site.site_id);
        site.segments
            .iter()
            .for_each(|s| check("segment", ids.segment, s.segment_id));
        site.triggers
            .iter()
            .for_each(|t| check("trigger", ids.trigger, t.trigger_id));
        site.drips
            .iter()
            .for_each(|d| check("drip", ids.drip, d.drip.drip_id));
        let notifications = site.notifications.iter().map(|n| n.notification_id);
        notifications.for_each(|id| check("notification", ids.notification, id));
        let deliveries = site.engine.deliveries.iter().map(|d| d.delivery_id);
        deliveries.for_each(|id| check("delivery", ids.delivery, id));
    }
    match over.first() {
        Some((what, id, counter)) => Err(format!(
            "a {what} id {id} above the {what} counter, {counter}"
        )),
        None => Ok(()),
    }
}

impl<'a> AlertImage<'a> {
    fn of(a: &'a Alert) -> Self {
        AlertImage {
            subscriber_hash: Cow::Borrowed(&a.subscriber_hash),
            product_id: Cow::Borrowed(&a.product_id),
            variant_id: a.variant_id.as_deref().map(Cow::Borrowed),
            created_at: a.created_at,
            fired_by: Cow::Borrowed(&a.fired_by),
            baselines: Cow::Borrowed(&a.baselines),
        }
    }

    fn into_alert(self) -> Alert {
        Alert {
            subscriber_hash: self.subscriber_hash.into_owned(),
            product_id: self.product_id.into_owned(),
            variant_id: self.variant_id.map(Cow::into_owned),
            created_at: self.created_at,
            fired_by: self.fired_by.into_owned(),
            baselines: self.baselines.into_owned(),
        }
    }
}

//! Analytics computed from what the engine delivered and what subscribers did with it
//! (2.3, 2.12): views and clicks are recorded through the admin routes. What each field
//! counts is written out in docs/analytics.md.

use std::collections::HashSet;
use std::sync::LazyLock;

use chrono::{DateTime, NaiveDate, Utc};

use crate::emulator::state::{Delivery, Site, Source, Subscriber, Sym};
use crate::model::common::ctr;
use crate::model::{Analytics, Drip, TriggeredCampaign};

/// The device type analytics count a subscriber under: the recorded one, or `desktop` when
/// there is none (every subscriber of the service has one, the emulator's may not), the same
/// in the summary (2.12) and in the distribution (2.13), so that each adds up to its total.
pub fn device_type(sub: &Subscriber) -> &str {
    sub.device_type.as_deref().unwrap_or("desktop")
}

/// Whether the summary counts a subscriber as mobile: a phone or a tablet. Any other device
/// type, or none, is desktop.
pub fn is_mobile(sub: &Subscriber) -> bool {
    // Compared as interned numbers: the summary asks it of every subscriber.
    static MOBILE: LazyLock<[Sym; 2]> = LazyLock::new(|| [Sym::of("mobile"), Sym::of("tablet")]);
    sub.device_type.is_some_and(|t| MOBILE.contains(&t))
}

/// An inclusive range of UTC dates; an open end is unbounded.
#[derive(Debug, Clone, Copy, Default)]
pub struct Range {
    pub start: Option<NaiveDate>,
    pub end: Option<NaiveDate>,
}

impl Range {
    pub fn contains(&self, t: Option<DateTime<Utc>>) -> bool {
        let Some(t) = t else { return false };
        let d = t.date_naive();
        self.start.is_none_or(|s| d >= s) && self.end.is_none_or(|e| d <= e)
    }
}

/// Counts over the deliveries `pick` selects: sent (delivered, not expired), views, clicks,
/// and the subscribers who unsubscribed after receiving one.
fn count<'a>(
    site: &Site,
    range: Range,
    deliveries: impl Iterator<Item = &'a Delivery>,
) -> Analytics {
    let (mut sent, mut views, mut clicks) = (0, 0, 0);
    let mut unsubscribed = HashSet::new();
    for d in deliveries {
        if d.status() != "delivered" {
            continue;
        }
        if range.contains(d.sent_at()) {
            sent += 1;
        }
        if range.contains(d.viewed_at()) {
            views += 1;
        }
        if range.contains(d.clicked_at()) {
            clicks += 1;
        }
        let left = site
            .subscribers
            .get(d.subscriber_at())
            .and_then(|s| s.unsubscribed_at);
        if let (Some(left), Some(sent_at)) = (left, d.sent_at()) {
            if left >= sent_at && range.contains(Some(left)) {
                unsubscribed.insert(d.subscriber);
            }
        }
    }
    Analytics {
        views,
        clicks,
        sentcount: sent,
        unsubscribed: unsubscribed.len() as i64,
        ctr: ctr(clicks, views),
        result: Vec::new(),
    }
}

fn of(site: &Site, source: Source, id: i64, notification: Option<i64>, range: Range) -> Analytics {
    count(
        site,
        range,
        site.engine
            .of_source(source, id)
            .filter(|d| notification.is_none_or(|n| d.dispatch.notification_id == n)),
    )
}

/// Fills a triggered campaign's analytics and its notifications'.
pub fn fill_trigger(site: &Site, t: &mut TriggeredCampaign, range: Range) {
    t.analytics = of(site, Source::Trigger, t.trigger_id, None, range);
    for n in t.notifications.iter_mut().flatten() {
        n.analytics = of(site, Source::Trigger, t.trigger_id, Some(n.id), range);
    }
}

/// Fills a drip's analytics and its notifications'.
pub fn fill_drip(site: &Site, d: &mut Drip, range: Range) {
    d.analytics = of(site, Source::Drip, d.drip_id, None, range);
    for n in d.notifications.iter_mut().flatten() {
        n.analytics = of(site, Source::Drip, d.drip_id, Some(n.id), range);
    }
}

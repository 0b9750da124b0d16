//! Drips (2.7-2.9, 6.3): a subscriber who subscribes, or is added to a segment, and then
//! matches a drip's audience starts its series once; each notification is due relative to
//! the previous one, and `send_to` is checked again when it is due.

use chrono::{DateTime, Utc};

use super::content::tagged;
use super::delivery::tick;
use super::schedule::{schedule_series, Step};
use super::targeting::audience_match;
use crate::emulator::state::{Content, Counters, Site, Source};

/// Drip criteria are evaluated when subscribers subscribe or join a segment (6.3).
pub fn on_audience_change(
    site: &mut Site,
    ids: &mut Counters,
    now: DateTime<Utc>,
    hashes: &[String],
) {
    let mut starts = Vec::new();
    for rec in site.drips.iter().filter(|d| d.drip.status == "active") {
        for hash in hashes {
            let key = (rec.drip.drip_id, hash.clone());
            if site.engine.drip_starts.contains(&key) {
                continue;
            }
            let matches = site
                .subscriber(hash)
                .is_some_and(|s| audience_match(&rec.drip.audience.filter.value, s));
            if matches {
                starts.push((key, rec.drip.clone()));
            }
        }
    }
    for ((drip_id, hash), drip) in starts {
        site.engine.drip_starts.insert((drip_id, hash.clone()));
        let notifications = drip.notifications.as_deref().unwrap_or_default();
        let steps = notifications.iter().map(|n| Step {
            notification_id: n.id,
            wait: &n.schedule_options,
            expiry_seconds: n.expiry,
            content: tagged(
                Content {
                    title: n.title.clone(),
                    message: n.message.clone(),
                    url: n.url.clone(),
                    image_url: Some(n.image_url.clone()),
                    big_image_url: Some(n.big_image_url.clone()),
                    actions: n.actions.clone(),
                },
                drip.utm_params.as_ref(),
            ),
        });
        schedule_series(site, (Source::Drip, drip_id, 0), &hash, now, steps);
    }
    tick(site, ids, now);
}

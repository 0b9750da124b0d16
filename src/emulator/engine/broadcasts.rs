//! Broadcasts (4.13): `now` at once, `later` at `valid_from_utc` read in the site's time
//! zone, `draft` never; the audience is chosen when the broadcast goes out (in `delivery`).

use std::sync::Arc;

use chrono::{DateTime, NaiveDateTime, Utc};

use super::delivery::tick;
use super::schedule::local_to_utc;
use crate::emulator::state::{Content, Counters, Scheduled, Site, Source};
use crate::model::NotificationType;
use crate::validate::{BROADCAST_EXPIRY_MAX_MINUTES, VALID_FROM_FORMAT};

/// Schedules a broadcast just created (the last of `site.notifications`).
pub fn on_broadcast(site: &mut Site, ids: &mut Counters, now: DateTime<Utc>) {
    let Some(rec) = site.notifications.last() else {
        return;
    };
    let n = &rec.request;
    let due = match n.notification_type {
        NotificationType::Draft => return,
        NotificationType::Now => now,
        NotificationType::Later => {
            let Some(local) = n
                .valid_from_utc
                .as_deref()
                .and_then(|v| NaiveDateTime::parse_from_str(v.trim(), VALID_FROM_FORMAT).ok())
            else {
                return;
            };
            // A time already past goes out at once, not back-dated to before it existed.
            local_to_utc(site.timezone, local).max(now)
        }
    };
    let item = Scheduled {
        due_at: due,
        subscriber_hash: None,
        source: Source::Broadcast,
        source_id: rec.notification_id,
        notification_id: rec.notification_id,
        content: Arc::new(Content {
            title: n.notification_title.clone().unwrap_or_default(),
            message: n.notification_message.clone().unwrap_or_default(),
            url: n.notification_url.clone().unwrap_or_default(),
            image_url: n.image_url.clone(),
            big_image_url: n.big_image_url.clone(),
            actions: n.actions.clone(),
        }),
        expiry_seconds: n
            .notification_expiry
            .unwrap_or(BROADCAST_EXPIRY_MAX_MINUTES)
            * 60,
        run: 0,
    };
    site.engine.schedule(item);
    tick(site, ids, now);
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, TimeZone};

    use super::*;
    use crate::emulator::engine::set_online;
    use crate::emulator::state::{NotificationRec, Subscriber};
    use crate::model::NewNotification;

    /// An empty site and its id counters.
    fn site() -> (Site, Counters) {
        (Site::new(1, "k".into()), Counters::default())
    }

    fn subscriber(hash: &str, at: DateTime<Utc>, online: bool) -> Subscriber {
        Subscriber {
            subscriber_hash: hash.into(),
            profile_id: None,
            country: None,
            state: None,
            city: None,
            device: None,
            device_type: None,
            browser: None,
            platform: None,
            attributes: Default::default(),
            subscribed_at: at,
            unsubscribed_at: None,
            segments: Default::default(),
            online,
        }
    }

    fn broadcast(site: &mut Site, kind: NotificationType, valid_from: Option<&str>) {
        site.notifications.push(NotificationRec {
            notification_id: site.notifications.len() as i64 + 1,
            status: String::new(),
            created_at: Utc::now(),
            request: NewNotification {
                notification_type: kind,
                valid_from_utc: valid_from.map(String::from),
                ..Default::default()
            },
        });
    }

    #[test]
    fn a_later_broadcast_already_due_goes_out_when_created() {
        let now = Utc.with_ymd_and_hms(2030, 5, 1, 12, 0, 0).unwrap();
        let (mut s, mut ids) = site();
        s.add_subscriber(subscriber("a", now - Duration::days(1), true));
        broadcast(&mut s, NotificationType::Later, Some("2020-01-01 00:00:00"));
        on_broadcast(&mut s, &mut ids, now);
        assert_eq!(s.engine.deliveries.len(), 1);
        assert_eq!(s.engine.deliveries[0].sent_at(), Some(now));
    }

    #[test]
    fn a_broadcast_skips_subscribers_dated_after_it_went_out() {
        let now = Utc.with_ymd_and_hms(2030, 5, 1, 12, 0, 0).unwrap();
        let (mut s, mut ids) = site();
        s.add_subscriber(subscriber("before", now - Duration::days(1), true));
        s.add_subscriber(subscriber("after", now + Duration::days(1), true));
        broadcast(&mut s, NotificationType::Later, Some("2030-05-01 13:00:00"));
        on_broadcast(&mut s, &mut ids, now);
        tick(&mut s, &mut ids, now + Duration::days(2));
        let got: Vec<String> = s
            .engine
            .deliveries
            .iter()
            .map(|d| s.subscribers[d.subscriber_at()].subscriber_hash.to_string())
            .collect();
        assert_eq!(got, ["before"]);
    }

    #[test]
    fn what_waits_for_an_unsubscribed_device_is_never_delivered() {
        let now = Utc.with_ymd_and_hms(2030, 5, 1, 12, 0, 0).unwrap();
        let (mut s, mut ids) = site();
        s.add_subscriber(subscriber("a", now - Duration::days(1), false));
        broadcast(&mut s, NotificationType::Now, None);
        on_broadcast(&mut s, &mut ids, now);
        assert_eq!(s.engine.deliveries[0].status(), "pending");
        s.subscribers[0].unsubscribed_at = Some(now + Duration::minutes(1));
        set_online(&mut s, "a", true, now + Duration::minutes(2));
        assert_eq!(s.engine.deliveries[0].status(), "pending");
        assert_eq!(s.engine.deliveries[0].sent_at(), None);
    }
}

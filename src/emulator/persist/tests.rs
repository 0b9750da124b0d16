//! Round trips through the state file's encoding, without a server.

use super::*;
use crate::emulator::admin::dispatch;
use serde_json::json;

fn seeded() -> Emu {
    let emu = Emu::new("default-key-1234");
    dispatch(
        &emu,
        "add_site",
        json!({"api_key": "other-key-1234", "timezone": "+05:30"}),
    )
    .unwrap();
    dispatch(
        &emu,
        "generate_subscribers",
        json!({"count": 50, "seed": 3, "attributes": {"plan": {"free": 0.5, "pro": 0.5}}}),
    )
    .unwrap();
    emu
}

#[test]
fn a_saved_state_reads_back_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.bin");
    let emu = seeded();
    save(&emu, &path).unwrap();
    let loaded = load(&path).unwrap();
    assert_eq!(loaded.default_key, "default-key-1234");
    let back = Emu::with_state("default-key-1234", loaded.state, None);
    for op in ["sites", "subscribers"] {
        assert_eq!(
            dispatch(&emu, op, json!({})).unwrap(),
            dispatch(&back, op, json!({})).unwrap(),
            "{op}"
        );
    }
}

#[test]
fn a_broadcasts_deliveries_share_one_content_when_read_back_and_the_clock_keeps_its_nanoseconds() {
    use crate::emulator::engine::on_broadcast;
    use crate::emulator::state::NotificationRec;
    use crate::model::{NewNotification, NotificationType};
    use std::sync::Arc;

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.bin");
    let emu = seeded();
    {
        let mut st = emu.lock();
        st.clock_offset = chrono::Duration::nanoseconds(86_400_000_000_123);
        let now = st.now();
        let crate::emulator::state::State { sites, ids, .. } = &mut *st;
        let site = sites.values_mut().next().unwrap();
        site.notifications.push(NotificationRec {
            notification_id: crate::emulator::state::Counters::next(&mut ids.notification),
            status: String::new(),
            created_at: now,
            request: NewNotification {
                notification_type: NotificationType::Now,
                notification_title: Some("Sale".into()),
                ..Default::default()
            },
        });
        on_broadcast(site, ids, now);
        assert_eq!(site.engine.deliveries.len(), 50);
    }
    save(&emu, &path).unwrap();
    let loaded = load(&path).unwrap().state;
    let site = loaded.sites.values().next().unwrap();
    let deliveries = &site.engine.deliveries;
    assert_eq!(deliveries.len(), 50);
    // One content for the fifty, as in memory before: a broadcast to a million is not a
    // million copies of its title and message once read back.
    // One dispatch too: each delivery holds 48 bytes of its own, the send's part shared.
    assert!(deliveries
        .iter()
        .all(|d| Arc::ptr_eq(&d.dispatch, &deliveries[0].dispatch)));
    assert_eq!(deliveries[0].dispatch.content.title, "Sale");
    assert_eq!(
        loaded.clock_offset,
        chrono::Duration::nanoseconds(86_400_000_000_123)
    );
}

/// Saves `emu` after `spoil` changed its state as no operation would, then reads it back:
/// what the load says.
fn spoiled(spoil: impl FnOnce(&mut crate::emulator::state::State)) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.bin");
    let emu = seeded();
    spoil(&mut emu.lock());
    save(&emu, &path).unwrap();
    match load(&path) {
        Ok(_) => "loaded".into(),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_file_that_passes_its_checksum_but_would_break_the_engine_is_refused() {
    // Ids given twice: a site added after the load would replace one read.
    let low = spoiled(|st| st.ids.site = 1);
    assert!(
        low.contains("a site id 2 above the site counter, 1"),
        "{low}"
    );
    // One hash twice: the index would find one of them only.
    let twice = spoiled(|st| {
        let site = st.sites.values_mut().next().unwrap();
        let copy = site.subscribers[0].clone();
        site.subscribers.push(copy);
    });
    assert!(twice.contains("holds a subscriber twice"), "{twice}");
    // A count the engine would take below zero.
    let pending = spoiled(|st| st.sites.values_mut().next().unwrap().engine.pending = 3);
    assert!(
        pending.contains("3 deliveries counted as waiting, 0 listed"),
        "{pending}"
    );
    // A clock no date can be read from.
    let clock = spoiled(|st| st.clock_offset = chrono::Duration::days(365 * 400_000));
    assert!(clock.contains("beyond any date"), "{clock}");
    for refused in [low, twice, pending, clock] {
        assert!(refused.contains("is damaged") && !refused.contains("default-key"));
    }
    assert_eq!(spoiled(|_| {}), "loaded");
}

/// The file holds the state's types field after field, without their names: a field added,
/// removed or moved in any of them reads an older file wrong. This test encodes one of
/// everything the file holds and checks what it takes; when it fails, the layout changed:
/// raise `FORMAT` (persist/file.rs), so that older files are refused rather than misread,
/// and write the new fingerprint here.
#[test]
fn the_layout_the_file_holds_is_the_one_its_format_names() {
    use crate::emulator::state::{
        Alert, Content, Delivery, Dispatch, EventRec, NotificationRec, ProductRec, Scheduled,
        SegmentRec, Site, Source, State, Status, Subscriber,
    };
    use chrono::TimeZone;
    use std::sync::Arc;

    let at = chrono::Utc.with_ymd_and_hms(2026, 1, 2, 3, 4, 5).unwrap();
    let subscriber: Subscriber = serde_json::from_value(json!({
        "subscriber_hash": "h1", "profile_id": "p1", "country": "US", "state": "CA",
        "city": "SF", "device": "d", "device_type": "mobile", "browser": "chrome",
        "platform": "android", "attributes": {"plan": "pro", "n": 1.5},
        "subscribed_at": "2026-01-02T03:04:05.000Z", "unsubscribed_at": null,
        "segments": [3], "online": false
    }))
    .unwrap();
    let mut site = Site::new(1, "key-one-1234".into());
    site.add_subscriber(subscriber);
    site.segments.push(
        serde_json::from_value::<SegmentRec>(json!({"segment_id": 3, "segment_name": "vip",
            "segment_type": "custom", "created_at": "2026-01-02T03:04:05.000Z"}))
        .unwrap(),
    );
    site.notifications.push(
        serde_json::from_value::<NotificationRec>(json!({"notification_id": 4,
            "status": "sent", "created_at": "2026-01-02T03:04:05.000Z",
            "request": {"notification_title": "t"}}))
        .unwrap(),
    );
    site.drips
        .push(serde_json::from_value(json!({"drip": {"drip_id": 5}, "send_to": {}})).unwrap());
    site.triggers
        .push(serde_json::from_value(json!({"trigger_id": 6})).unwrap());
    site.products.insert(
        ("P".into(), None),
        serde_json::from_value::<ProductRec>(json!({"product": {"product_id": "P", "price": 2.5},
            "updated_at": "2026-01-02T03:04:05.000Z"}))
        .unwrap(),
    );
    site.events.push_back(
        serde_json::from_value::<EventRec>(json!({"event_name": "visit", "profile_id": "p1",
            "device_token_hash": null, "data": {"a": 1},
            "received_at": "2026-01-02T03:04:05.000Z"}))
        .unwrap(),
    );
    let content = Arc::new(Content {
        title: "t".into(),
        ..Default::default()
    });
    site.engine.schedule(Scheduled {
        due_at: at,
        subscriber_hash: Some("h1".into()),
        source: Source::Trigger,
        source_id: 6,
        notification_id: 7,
        content: content.clone(),
        expiry_seconds: 60,
        run: 1,
    });
    let dispatch = Arc::new(Dispatch {
        content,
        source: Source::Broadcast,
        source_id: 4,
        notification_id: 4,
        queued_at: at,
        expires_at: at,
        tally: Default::default(),
    });
    site.engine.push_delivery(Delivery::new(
        8,
        dispatch,
        0,
        Status::Pending,
        [None, Some(at), None],
    ));
    site.engine.waiting.insert(0, vec![0]);
    site.engine.pending = 1;
    site.engine.sends.insert((6, 0), vec![0]);
    site.engine.runs.insert((6, "h1".into()), vec![1]);
    site.engine.run_left.insert(1, 1);
    site.engine.drip_starts.insert((5, "h1".into()));
    site.engine.alerts.push(Alert {
        subscriber_hash: "h1".into(),
        product_id: "P".into(),
        variant_id: None,
        created_at: at,
        fired_by: vec![6],
        baselines: vec![(None, 2.5)],
    });
    let mut state = State::empty();
    assert!(state.restore_site(site));
    state.ids = serde_json::from_value(json!({"site": 1, "segment": 3, "trigger": 6,
        "drip": 5, "campaign_notification": 7, "notification": 4, "delivery": 8}))
    .unwrap();
    state.frozen_at = Some(at);
    let bytes = postcard::to_stdvec(&image::Image::of(&state, "key-one-1234")).unwrap();
    // What was encoded reads back (the sample is sound), and its layout is the format's.
    assert!(image::Image::into_state(postcard::from_bytes(&bytes).unwrap()).is_ok());
    // The sample's drip and trigger have no timestamps, written `null` (a `Timestamp`
    // without text); a file that holds `""` there, as earlier writers of format 2 wrote it,
    // reads back as the same timestamp, and `null` reads back as `""` did in them.
    assert_eq!(
        (FORMAT, bytes.len(), crc32fast::hash(&bytes)),
        (3, 1429, 3817812709),
        "the state file's layout changed: raise FORMAT in persist/file.rs and write the \
         new length and fingerprint here"
    );
}

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
            notification_id: 1,
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
    assert!(deliveries
        .iter()
        .all(|d| Arc::ptr_eq(&d.content, &deliveries[0].content)));
    assert_eq!(deliveries[0].content.title, "Sale");
    assert_eq!(
        loaded.clock_offset,
        chrono::Duration::nanoseconds(86_400_000_000_123)
    );
}

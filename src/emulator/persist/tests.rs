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

//! The request log: read it (filtered, paged), clear it, switch it off, and the retention
//! that bounds it and each site's events.

use serde_json::{json, Value};

use super::args::{flag, int_arg, str_arg, Args, Page, Window};
use crate::emulator::emu::{Emu, Pinned};
use crate::emulator::state::LogEntry;

/// With `meta`, the entries come with what the retention pruned: one read of the
/// lock, so the count is the entries' own.
pub(super) fn requests(emu: &Emu, _site: Pinned, args: Args) -> Result<Value, String> {
    let path = str_arg(&args, "path")?;
    let method = str_arg(&args, "method")?.map(|m| m.to_ascii_uppercase());
    let status = int_arg(&args, "status")?;
    let window = Window::of(&args)?;
    let page = Page::of_args(&args)?;
    let meta = flag(&args, "meta")?;
    let st = emu.lock();
    // A path ending in `*` is a prefix, as in `inject_fault`.
    let path_matches = |p: &str| match path.as_deref() {
        None => true,
        Some(want) => match want.strip_suffix('*') {
            Some(prefix) => p.starts_with(prefix),
            None => p == want,
        },
    };
    let entries: Vec<&LogEntry> = st
        .log
        .iter()
        .filter(|e| path_matches(&e.path))
        .filter(|e| method.as_ref().is_none_or(|m| &e.method == m))
        .filter(|e| status.is_none_or(|s| e.status.map(i64::from) == Some(s)))
        .filter(|e| window.holds(e.received_at))
        .collect();
    let mut out = page.of(entries, meta);
    if let Value::Object(m) = &mut out {
        m.insert("pruned".into(), json!(st.log_pruned));
        m.insert("retention".into(), json!(emu.retention()));
    }
    Ok(out)
}

pub(super) fn set_retention(emu: &Emu, _site: Pinned, args: Args) -> Result<Value, String> {
    let keep = args
        .get("retention")
        .and_then(Value::as_u64)
        .ok_or("retention must be a whole number of entries (0: keep all)")?;
    emu.set_retention(keep as usize);
    Ok(json!({"retention": keep}))
}

pub(super) fn retention(emu: &Emu, site: Pinned, _args: Args) -> Result<Value, String> {
    let (log, pruned) = {
        let st = emu.lock();
        (st.log.len(), st.log_pruned)
    };
    let (events, events_pruned) =
        emu.with_site(site, |s, _, _| (s.events.len(), s.events_pruned))?;
    Ok(json!({
        "retention": emu.retention(),
        "requests": {"kept": log, "pruned": pruned},
        "events": {"kept": events, "pruned": events_pruned},
    }))
}

pub(super) fn set_request_log(emu: &Emu, _site: Pinned, args: Args) -> Result<Value, String> {
    let on = args
        .get("enabled")
        .and_then(Value::as_bool)
        .ok_or("enabled must be true or false")?;
    emu.record_requests
        .store(on, std::sync::atomic::Ordering::Relaxed);
    Ok(json!({"enabled": on}))
}

pub(super) fn clear_requests(emu: &Emu, _site: Pinned, _args: Args) -> Result<Value, String> {
    emu.clear_log();
    Ok(json!({}))
}

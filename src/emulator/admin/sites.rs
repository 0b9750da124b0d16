//! Sites: add one (a key, a time zone), set a site's time zone, list them, reset all; and
//! which site an operation acts on.

use serde_json::{json, Value};

use super::args::{int_arg, str_arg, Args};
use crate::emulator::emu::{Emu, Pinned};
use crate::emulator::engine::parse_offset;
use crate::emulator::inspector;
use crate::emulator::keys::key_problem;
use crate::emulator::persist;

pub(super) fn add_site(emu: &Emu, _site: Pinned, args: Args) -> Result<Value, String> {
    let key = str_arg(&args, "api_key")?.ok_or("api_key is required")?;
    if let Some(problem) = key_problem(&key) {
        return Err(problem.into());
    }
    let tz = str_arg(&args, "timezone")?
        .map(|raw| {
            parse_offset(&raw).ok_or("timezone must be a UTC offset like +05:30, -08:00 or UTC")
        })
        .transpose()?;
    let mut st = emu.lock();
    let id = st.add_site(&key);
    if let (Some(tz), Some(site)) = (tz, st.sites.get_mut(&id)) {
        site.timezone = tz;
    }
    Ok(json!({"site_id": id, "api_key_set": true}))
}

pub(super) fn set_timezone(emu: &Emu, site: Pinned, args: Args) -> Result<Value, String> {
    let raw = str_arg(&args, "timezone")?.ok_or("timezone is required")?;
    let tz =
        parse_offset(&raw).ok_or("timezone must be a UTC offset like +05:30, -08:00 or UTC")?;
    emu.with_site(site, |s, _, _| s.timezone = tz)?;
    Ok(json!({"timezone": tz.to_string()}))
}

pub(super) fn sites(emu: &Emu, _site: Pinned, _args: Args) -> Result<Value, String> {
    Ok(inspector::sites(emu))
}

/// Saves the whole state to the emulator's state file (`--state`), the only file the admin
/// API writes: a path from a request would let any client write anywhere the emulator may.
pub(super) fn save(emu: &Emu, _site: Pinned, args: Args) -> Result<Value, String> {
    if args.contains_key("path") {
        return Err(
            "path is not taken here: the admin API saves only to the emulator's state \
                    file (--state); Emulator.save(path) in Python writes elsewhere"
                .into(),
        );
    }
    let path = emu.state_file.as_deref().ok_or(
        "this emulator has no state file to save to: start it with --state FILE \
         (Emulator(state=...))",
    )?;
    let saved = persist::save(emu, path).map_err(|e| e.to_string())?;
    Ok(json!({
        "path": saved.path.display().to_string(),
        "bytes": saved.bytes,
        "seconds": saved.took.as_secs_f64(),
    }))
}

pub(super) fn reset(emu: &Emu, _site: Pinned, _args: Args) -> Result<Value, String> {
    emu.reset();
    Ok(json!({}))
}

/// The site an operation acts on: the one of `api_key` when given, else the default.
pub(super) fn site_of(emu: &Emu, args: &Args, op: &str) -> Result<Pinned, String> {
    // The inspector names sites by id: the page never holds a key.
    if let Some(id) = int_arg(args, "site_id")? {
        if op != "add_site" {
            return emu
                .pin_site_id(id)
                .ok_or_else(|| format!("no site has the id {id}"));
        }
    }
    let key = match args.get("api_key").and_then(Value::as_str) {
        Some(k) => k.to_string(),
        None => emu.default_key.clone(),
    };
    match emu.pin_site(&key) {
        Some(site) => Ok(site),
        // add_site names a key that has no site yet.
        None if op == "add_site" => emu
            .pin_site(&emu.default_key)
            .ok_or_else(|| "the emulator has no default site".to_string()),
        // A mistyped key must not seed the default site instead.
        None => Err("no site has that api_key: add it with add_site first".to_string()),
    }
}

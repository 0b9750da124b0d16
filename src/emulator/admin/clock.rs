//! The emulator's clock: read it, move it forward, travel to an instant, freeze it.

use serde_json::{json, Value};

use super::args::{time_arg, Args};
use crate::emulator::emu::{Emu, Pinned};
use crate::emulator::state::iso;

pub(super) fn now(emu: &Emu, _site: Pinned, _args: Args) -> Result<Value, String> {
    let st = emu.lock();
    Ok(json!({"now": iso(st.now()), "frozen": st.frozen_at.is_some()}))
}

pub(super) fn advance(emu: &Emu, _site: Pinned, args: Args) -> Result<Value, String> {
    // A century at most: the clock must stay on chrono's calendar.
    let secs = args
        .get("seconds")
        .and_then(Value::as_f64)
        .filter(|s| s.is_finite() && (0.0..=3.2e9).contains(s))
        .ok_or("seconds must be a number from 0 to 3.2e9 (a century)")?;
    let mut st = emu.lock();
    let step = chrono::Duration::milliseconds((secs * 1000.0).round() as i64);
    if chrono::Datelike::year(&(st.now() + step)) >= 9000 {
        return Err("the clock must stay before the year 9000".into());
    }
    st.advance_clock(step);
    Ok(json!({"now": iso(st.now())}))
}

pub(super) fn travel_to(emu: &Emu, _site: Pinned, args: Args) -> Result<Value, String> {
    // To a given instant (a test of "at 10:00 site time" must not depend on when it
    // runs); forward only, as `advance`, once anything has happened (what was delivered
    // stays delivered); to any instant before that (`Emulator(start=...)`: a notebook's
    // weeks of history laid down from a past day).
    let to = time_arg(&args, "time")?.ok_or("time is required")?;
    if !(1970..9000).contains(&chrono::Datelike::year(&to)) {
        return Err("time must be from 1970 and before the year 9000".into());
    }
    let mut st = emu.lock();
    let now = st.now();
    if to < now && st.untouched() {
        st.set_clock(to);
        return Ok(json!({"now": iso(st.now())}));
    }
    // `now` as read back is to the millisecond: travelling to it is staying.
    if to < now && now - to < chrono::Duration::seconds(1) {
        return Ok(json!({"now": iso(now)}));
    }
    if to < now {
        return Err(format!(
            "the clock only moves forward once anything has happened: {} is before the \
             emulator's now, {}",
            iso(to),
            iso(now)
        ));
    }
    st.advance_clock(to - now);
    Ok(json!({"now": iso(st.now())}))
}

pub(super) fn freeze_clock(emu: &Emu, _site: Pinned, args: Args) -> Result<Value, String> {
    let frozen = match args.get("frozen") {
        None => true,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("frozen must be true or false".into()),
    };
    let mut st = emu.lock();
    let at = st.freeze_clock(frozen);
    Ok(json!({"now": iso(at), "frozen": frozen}))
}

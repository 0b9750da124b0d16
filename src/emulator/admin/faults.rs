//! Faults: armed one by one (`inject_fault`) or drawn at random for soak tests.

use serde_json::{json, Value};

use super::args::{read_args, str_arg, Args};
use crate::emulator::emu::{Emu, Pinned};
use crate::emulator::faults::{can_match, route_list, Chaos, ChaosKind, FaultSpec};

pub(super) fn inject_fault(emu: &Emu, _site: Pinned, args: Args) -> Result<Value, String> {
    let spec: FaultSpec = read_args(args)?;
    let fault = spec.into_fault()?;
    emu.lock().faults.push(fault);
    Ok(json!({}))
}

pub(super) fn clear_faults(emu: &Emu, _site: Pinned, _args: Args) -> Result<Value, String> {
    let mut st = emu.lock();
    st.faults.clear();
    st.chaos = None;
    Ok(json!({}))
}

pub(super) fn inject_random_faults(emu: &Emu, _site: Pinned, args: Args) -> Result<Value, String> {
    let rate = args
        .get("rate")
        .and_then(Value::as_f64)
        .filter(|r| (0.0..=1.0).contains(r))
        .ok_or("rate must be a number from 0 to 1")?;
    let kinds = match args.get("kinds") {
        None | Some(Value::Null) => ChaosKind::ALL.to_vec(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|k| k.as_str().and_then(ChaosKind::parse))
            .collect::<Option<Vec<_>>>()
            .ok_or("kinds must name 500, 503, 429, delay, drop_before, drop_after")?,
        Some(_) => return Err("kinds must be a list".into()),
    };
    if kinds.is_empty() {
        return Err("kinds must name at least one kind of fault".into());
    }
    let delay = args.get("delay").and_then(Value::as_f64).unwrap_or(2.0);
    if !(delay.is_finite() && (0.0..=3600.0).contains(&delay)) {
        return Err("delay must be a number of seconds from 0 to 3600".into());
    }
    let seed = args
        .get("seed")
        .and_then(Value::as_u64)
        .unwrap_or_else(|| fastrand::u64(..));
    // A prefix, with or without a trailing `*`.
    let path = str_arg(&args, "path")?
        .map(|p| p.trim_end_matches('*').to_string())
        .unwrap_or_else(|| "/".into());
    // A prefix: it must lead to a route, or no fault would ever fire.
    if !can_match(&format!("{}*", path.trim_end_matches('*')), None) {
        return Err(format!(
            "no route of the service starts with {path:?}, so no fault would ever fire; \
                 the routes are {}",
            route_list()
        ));
    }
    emu.lock().chaos = Some(Chaos {
        path,
        rate,
        kinds,
        delay: std::time::Duration::from_secs_f64(delay),
        rng: fastrand::Rng::with_seed(seed),
        injected: Default::default(),
    });
    Ok(json!({"seed": seed}))
}

pub(super) fn fault_stats(emu: &Emu, _site: Pinned, _args: Args) -> Result<Value, String> {
    let st = emu.lock();
    Ok(json!(st
        .chaos
        .as_ref()
        .map(|c| c.injected.clone())
        .unwrap_or_default()))
}

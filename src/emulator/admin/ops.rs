//! The operations: each one's name, whether it only reads, and the function that runs it;
//! [`dispatch`] finds the site it acts on, runs it, and tells the inspector of a write.

use serde_json::{json, Map, Value};

use super::args::Args;
use super::sites::site_of;
use super::{campaigns, clock, deliveries, faults, requests, sites, subscribers};
use crate::emulator::emu::{Emu, Pinned};

type Run = fn(&Emu, Pinned, Args) -> Result<Value, String>;

/// One operation. One that only reads does not count as a change: the inspector's live page
/// re-reads after every change.
struct Op {
    name: &'static str,
    reads: bool,
    run: Run,
}

const fn read(name: &'static str, run: Run) -> Op {
    Op {
        name,
        reads: true,
        run,
    }
}

const fn write(name: &'static str, run: Run) -> Op {
    Op {
        name,
        reads: false,
        run,
    }
}

/// The operations, in the order the admin index lists them.
const OPERATIONS: &[Op] = &[
    write("inject_random_faults", faults::inject_random_faults),
    read("fault_stats", faults::fault_stats),
    write("set_request_log", requests::set_request_log),
    write("set_retention", requests::set_retention),
    read("retention", requests::retention),
    write("add_site", sites::add_site),
    write("set_timezone", sites::set_timezone),
    write("add_subscriber", subscribers::add_subscriber),
    write("add_subscribers", subscribers::add_subscribers),
    write("generate_subscribers", subscribers::generate_subscribers),
    write("set_online", subscribers::set_online),
    write("unsubscribe", subscribers::unsubscribe),
    write("create_segment", subscribers::create_segment),
    write("create_trigger", campaigns::create_trigger),
    write("add_alert", campaigns::add_alert),
    read("alerts", campaigns::alerts),
    read("requests", requests::requests),
    write("clear_requests", requests::clear_requests),
    read("subscribers", subscribers::subscribers),
    read("segments", subscribers::segments),
    read("notifications", deliveries::notifications),
    read("audience", deliveries::audience),
    read("events", deliveries::events),
    read("products", deliveries::products),
    read("deliveries", deliveries::deliveries),
    write("record_view", |emu, site, args| {
        deliveries::record(emu, site, args, false)
    }),
    write("record_click", |emu, site, args| {
        deliveries::record(emu, site, args, true)
    }),
    write("record_views", |emu, site, args| {
        deliveries::record_many(emu, site, args, false)
    }),
    write("record_clicks", |emu, site, args| {
        deliveries::record_many(emu, site, args, true)
    }),
    write("inject_fault", faults::inject_fault),
    write("clear_faults", faults::clear_faults),
    read("now", clock::now),
    write("advance", clock::advance),
    write("travel_to", clock::travel_to),
    write("freeze_clock", clock::freeze_clock),
    write("reset", sites::reset),
    write("save", sites::save),
    read("operations", |_, _, _| Ok(json!(names()))),
    read("sites", sites::sites),
    read("broadcasts", deliveries::broadcasts),
    read("triggers", campaigns::triggers),
    read("drips", campaigns::drips),
    read("summary", deliveries::summary),
];

/// Every operation's name, and whether it only reads.
pub fn operations() -> impl Iterator<Item = (&'static str, bool)> {
    OPERATIONS.iter().map(|op| (op.name, op.reads))
}

fn names() -> Vec<&'static str> {
    OPERATIONS.iter().map(|op| op.name).collect()
}

/// Runs one admin operation; one that writes tells the inspector's open pages.
pub fn dispatch(emu: &Emu, op: &str, args: Value) -> Result<Value, String> {
    let (site, args) = site_and_args(emu, op, args)?;
    let Some(found) = OPERATIONS.iter().find(|o| o.name == op) else {
        return Err(format!(
            "unknown operation {op}; operations: {}",
            names().join(", ")
        ));
    };
    let out = (found.run)(emu, site, args);
    if out.is_ok() && !found.reads {
        emu.changes.bump();
    }
    out
}

/// A page of `subscribers` or `deliveries` as rows of their own, for the glue to make
/// Python objects of directly (a row costs well under a microsecond, where a JSON text
/// decoded and its times parsed in Python cost several).
pub enum Rows {
    Subscribers(Vec<crate::emulator::state::Subscriber>),
    Deliveries(Vec<deliveries::DeliveryRow>),
}

/// The site an operation acts on, and its arguments.
fn site_and_args(emu: &Emu, op: &str, args: Value) -> Result<(Pinned, Args), String> {
    let mut args = match args {
        Value::Object(m) => m,
        Value::Null => Map::new(),
        _ => return Err("arguments must be a JSON object".into()),
    };
    let site = site_of(emu, &args, op)?;
    args.remove("site_id");
    Ok((site, args))
}

/// Reads `op`'s page (`subscribers` or `deliveries`, with their arguments) as [`Rows`].
pub fn rows(emu: &Emu, op: &str, args: Value) -> Result<Rows, String> {
    let (site, args) = site_and_args(emu, op, args)?;
    match op {
        "subscribers" => subscribers::subscriber_rows(emu, site, &args).map(Rows::Subscribers),
        "deliveries" => deliveries::delivery_rows(emu, site, &args).map(Rows::Deliveries),
        _ => Err(format!(
            "{op} is not read as rows (subscribers, deliveries)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Over HTTP this is a race no test can time; here the reset lands exactly between an
    // operation's look-up of its site and its work.
    #[test]
    fn an_operation_overtaken_by_a_reset_never_lands_on_the_site_that_took_its_id() {
        let emu = Emu::new("default-key-1234");
        for key in ["site-a-12345678", "site-b-12345678"] {
            dispatch(&emu, "add_site", json!({ "api_key": key })).expect("added");
        }
        let a = emu.pin_site("site-a-12345678").expect("a's site");
        // The next test's fixture: its sites added in another order, b taking a's old id.
        emu.reset();
        for key in ["site-b-12345678", "site-a-12345678"] {
            dispatch(&emu, "add_site", json!({ "api_key": key })).expect("added");
        }
        let b = emu.pin_site("site-b-12345678").expect("b's site");
        assert_eq!(b.site.0, a.site.0, "the test's premise: b has a's old id");
        let mut ran = false;
        let refused = emu.with_site(a, |_, _, _| ran = true);
        assert!(refused.is_err_and(|e| e.contains("reset meanwhile")));
        assert!(!ran, "the operation must not run on b's site");
        // b's own operations run.
        assert_eq!(emu.with_site(b, |s, _, _| s.subscribers.len()), Ok(0));
    }
}

//! The client's response decoding: whatever a server answers, the client returns a value or
//! an error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pushwire::client::transport::{decode, Ack, Iface};
use pushwire::client::{analytics, drips, segments, triggers};

fuzz_target!(|data: &[u8]| {
    let _ = decode::<triggers::List>(Iface::Main, data);
    let _ = decode::<triggers::One>(Iface::Main, data);
    let _ = decode::<drips::List>(Iface::Main, data);
    let _ = decode::<drips::One>(Iface::Main, data);
    let _ = decode::<segments::List>(Iface::Main, data);
    let _ = decode::<analytics::Summary>(Iface::Main, data);
    let _ = decode::<analytics::Distribution>(Iface::Main, data);
    let _ = decode::<Ack>(Iface::Events, data);
});

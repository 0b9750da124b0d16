//! The pyo3 glue of `pushwire._core`: conversions and GIL handling only.

mod client;
mod convert;
mod emulator;
mod fork;
mod local;
mod models;
mod ops;
mod runtime;
mod spread;

use pyo3::prelude::*;

/// The extension's Rust allocations (request futures, buffers, JSON maps) go to mimalloc.
/// Under glibc's malloc a request's few kilobytes of future and buffers took the slow path
/// (`malloc_consolidate`, `_int_malloc`): about a tenth of the client's CPU per request in
/// `benches/profile.py`. Python's own objects keep Python's allocator.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // Rust `log` records go to Python's `logging`, under the `pushwire` logger.
    let _ = pyo3_log::try_init();
    fork::install();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<emulator::EmulatorServer>()?;
    m.add_class::<client::CoreClient>()?;
    m.add_class::<client::Completions>()?;
    models::register(m)?;
    Ok(())
}

//! The pyo3 glue of `pushwire._core`: conversions and GIL handling only.

mod client;
mod convert;
mod emulator;
mod local;
mod models;
mod ops;
mod runtime;

use pyo3::prelude::*;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // Rust `log` records go to Python's `logging`, under the `pushwire` logger.
    let _ = pyo3_log::try_init();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<emulator::EmulatorServer>()?;
    m.add_class::<client::CoreClient>()?;
    m.add_class::<client::Completions>()?;
    models::register(m)?;
    Ok(())
}

//! The pyo3 glue of `pushwire._core`: conversions and GIL handling only.

mod emulator;

use pyo3::prelude::*;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // Rust `log` records go to Python's `logging` (the `pushwire` logger tree).
    let _ = pyo3_log::try_init();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<emulator::EmulatorServer>()?;
    Ok(())
}

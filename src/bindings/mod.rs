//! The pyo3 glue of `pushwire._core`: conversions and GIL handling only.

mod batch_across_threads;
mod busy_poll;
mod call_options;
mod client;
mod completions;
mod convert;
mod emulator;
mod emulator_rows;
mod errors;
mod fork;
mod logs;
mod model_input;
mod models;
mod observe;
mod ops;
mod page;
mod runtime;
mod signals;
mod stop;
mod thread_state;
mod utm;

use pyo3::prelude::*;

/// The extension's Rust allocations (request futures, buffers, JSON maps) go to jemalloc.
/// Under glibc's malloc a request's few kilobytes of future and buffers took the slow path
/// (`malloc_consolidate`, `_int_malloc`): about a tenth of the client's CPU per request in
/// `benches/profile.py`. jemalloc rather than mimalloc: jemalloc takes and resets its locks
/// around `fork()` (`pthread_atfork`), as glibc does, so a child forked while another thread
/// allocates (gunicorn `--preload`, Celery prefork) cannot inherit a held lock; mimalloc has
/// no such handling. Its symbols are prefixed: Python's own objects keep Python's allocator,
/// and nothing else in the process is affected. `disable_initial_exec_tls` because the
/// extension is loaded with `dlopen`. Windows keeps its system heap: jemalloc builds with
/// neither MSVC nor MinGW there, and there is no `fork()` to guard against.
#[cfg(unix)]
#[global_allocator]
static ALLOC: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Makes the Rust core read the `pushwire` logger's level now. Every client call and
/// emulator operation does this itself, so logging configured at any time takes effect at
/// the next call; nobody needs to call it.
#[pyfunction]
fn reset_log_cache(py: Python<'_>) {
    logs::refresh_now(py);
}

// Declares that the module runs without the GIL: a free-threaded CPython (3.14t) keeps it
// off when the module is imported. What stands behind the claim (every class frozen, the
// shared state behind Rust locks and atomics, the Python side's registries locked, and the
// threaded, async, forking and idempotency tests passing with the GIL off under `make
// test-ft`) is in docs/runtime.md.
#[pymodule(gil_used = false)]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // Rust `log` records go to Python's `logging`, under the `pushwire` logger.
    logs::install(m.py());
    m.add_function(wrap_pyfunction!(reset_log_cache, m)?)?;
    m.add_function(wrap_pyfunction!(emulator::openapi_document, m)?)?;
    fork::install();
    busy_poll::prepare();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // The operations that take an idempotency key, as operations.rs declares them.
    let keyed: Vec<&str> = crate::operations::ALL
        .iter()
        .filter(|op| op.takes_key())
        .map(|op| op.name)
        .collect();
    m.add(
        "_KEYED_OPERATIONS",
        pyo3::types::PyFrozenSet::new(m.py(), keyed)?,
    )?;
    m.add_class::<emulator::EmulatorServer>()?;
    m.add_class::<client::CoreClient>()?;
    m.add_class::<completions::Completions>()?;
    models::register(m)?;
    page::register(m)?;
    ops::register(m)?;
    Ok(())
}

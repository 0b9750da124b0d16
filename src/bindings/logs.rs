//! Rust `log` records to Python's `logging`, at the level logging is configured with now.
//!
//! The `pushwire` logger's effective level (and `logging.disable`'s) is read wherever a
//! call already holds the GIL (each client call, each emulator operation, `reset_log_cache`)
//! and becomes `log`'s global maximum, never below warnings: a debug or info record above it
//! is dropped by the `log` macros' own check, one atomic load, and never asks Python. A
//! record at or below it goes to pyo3-log, which takes the GIL to hand it to its Python
//! logger, whose own level, filters and handlers decide as for any Python record; emitting
//! needs the GIL anyway. pyo3-log caches the logger objects but not their levels, so a level
//! set after the first call takes effect at the next call: no cache to reset. Warnings and
//! errors, which are rare, always reach Python, so a child logger's level
//! (`pushwire.emulator`) or one set while no call runs (an emulator serving requests) is
//! honoured for them too.

use std::sync::atomic::{AtomicI64, Ordering};

use log::LevelFilter;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyAnyMethods, PyDict};

/// The `pushwire` logger object, and its `_cache` dict when it has one.
static LOGGER: PyOnceLock<(Py<PyAny>, Option<Py<PyDict>>)> = PyOnceLock::new();

/// The key this module keeps in the logger's `_cache` while the level it read holds.
const MARK: &str = "pushwire-core-level";

/// The Python level last handed to `log` (`i64::MIN` before the first).
static SEEN: AtomicI64 = AtomicI64::new(i64::MIN);

/// Installs the bridge: the `pushwire` targets at every level `log`'s maximum lets through;
/// other crates' (hyper, rustls) at warnings and errors only, so that a user who turns the
/// `pushwire` logger to DEBUG gets this package's lines, not every connection's internals
/// each taking the GIL to be dropped by their own loggers.
pub fn install(py: Python<'_>) {
    let installed = pyo3_log::Logger::new(py, pyo3_log::Caching::Loggers).map(|logger| {
        logger
            .filter(LevelFilter::Warn)
            .filter_target("pushwire".to_owned(), LevelFilter::Trace)
            .install()
    });
    if let Ok(Ok(_)) = installed {
        refresh(py);
    }
}

/// Python's numeric level as the most verbose `log` level it lets through.
fn filter_of(level: i64) -> LevelFilter {
    match level {
        // NOTSET on the root logger: everything.
        ..=5 => LevelFilter::Trace,
        6..=10 => LevelFilter::Debug,
        11..=20 => LevelFilter::Info,
        21..=30 => LevelFilter::Warn,
        31..=40 => LevelFilter::Error,
        _ => LevelFilter::Off,
    }
}

/// Reads the `pushwire` logger's effective level and hands it to `log` if it changed: one
/// dict look-up while logging's levels stay as they were, two Python calls after a change.
pub fn refresh(py: Python<'_>) {
    read_level(py, false);
}

/// [`refresh`], whatever the mark says (`reset_log_cache`).
pub fn refresh_now(py: Python<'_>) {
    read_level(py, true);
}

fn read_level(py: Python<'_>, force: bool) {
    let looked_up = LOGGER.get_or_try_init(py, || -> PyResult<_> {
        let logger = py
            .import("logging")?
            .call_method1("getLogger", ("pushwire",))?;
        let cache = logger
            .getattr("_cache")
            .ok()
            .and_then(|c| c.cast_into::<PyDict>().ok())
            .map(Bound::unbind);
        Ok((logger.unbind(), cache))
    });
    let Ok((logger, cache)) = looked_up else {
        return;
    };
    // logging empties every logger's `_cache` whenever a level changes anywhere (`setLevel`,
    // `disable`, `basicConfig`, `dictConfig`): while the mark put there is still in it, the
    // level read last still holds, and this costs one dict look-up instead of asking the
    // logger (a CPython detail since 3.7; without `_cache`, the logger is asked every time).
    let mark = pyo3::intern!(py, MARK);
    if let Some(cache) = cache.as_ref().filter(|_| !force) {
        if cache.bind(py).contains(mark).unwrap_or(false) {
            return;
        }
    }
    let logger = logger.bind(py);
    let read = || -> PyResult<i64> {
        let level: i64 = logger
            .call_method0(pyo3::intern!(py, "getEffectiveLevel"))?
            .extract()?;
        // `logging.disable(n)` turns off every record at n and below, whatever the levels.
        let disabled: i64 = logger
            .getattr(pyo3::intern!(py, "manager"))?
            .getattr(pyo3::intern!(py, "disable"))?
            .extract()?;
        Ok(level.max(disabled.saturating_add(1)))
    };
    // A logging patched into something odd: leave the level as it was.
    let Ok(level) = read() else {
        return;
    };
    if SEEN.swap(level, Ordering::Relaxed) != level {
        log::set_max_level(filter_of(level).max(LevelFilter::Warn));
    }
    if let Some(cache) = cache {
        let _ = cache.bind(py).set_item(mark, true);
    }
}

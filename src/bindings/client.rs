//! `pushwire._core.CoreClient`, the engine under `pushwire.Client` and
//! `pushwire.AsyncClient`: its construction, settings and entry points here; a blocking
//! call's executor in `blocking` (on the caller's thread with the GIL released; on the main
//! thread, where Python runs signal handlers, it wakes every 50 ms to let it, so Ctrl-C
//! interrupts a call, and cancels its request, within about that long); an async call's
//! submission in `submit` (a tokio task on the I/O threads, whose result reaches the asyncio
//! loop through `Completions`, see `completions`).

mod blocking;
mod submit;

use std::sync::Arc;
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::call_options::{self, PerCall};
use super::completions::Completions;
use super::errors::{to_pyerr, SAME};
use super::ops::{self, Op, PreparedCall, Ready, Renamer};
use super::stop;
use super::thread_state;
use crate::client::{transport, Config, Error, Limits, Transport};
use crate::message;
use crate::validate::FIELD;

/// A setting refused: `rest` follows the field's name (`"timeout"`, `" must be ..."`).
fn bad(py: Python<'_>, field: &'static str, rest: &'static str) -> PyErr {
    to_pyerr(py, Error::validation(field, message![FIELD, rest]), SAME)
}

/// `timeout` and `max_retries` as a client takes them, or a `ValidationError` naming the one
/// out of range.
fn checked_limits(
    py: Python<'_>,
    timeout: f64,
    max_retries: i64,
    max_response_size: i64,
) -> PyResult<Limits> {
    if !(timeout.is_finite() && timeout > 0.0 && timeout <= 86_400.0) {
        return Err(bad(
            py,
            "timeout",
            " must be a positive number of seconds, at most a day",
        ));
    }
    if !(0..=20).contains(&max_retries) {
        return Err(bad(py, "max_retries", " must be between 0 and 20"));
    }
    if !(1024..=1 << 40).contains(&max_response_size) {
        return Err(bad(
            py,
            "max_response_size",
            " must be a number of bytes from 1024 to 2**40",
        ));
    }
    Ok(Limits {
        timeout: Duration::from_secs_f64(timeout),
        max_retries: max_retries as u32,
        max_response_size: max_response_size as u64,
    })
}

#[pyclass(module = "pushwire._core", frozen)]
pub struct CoreClient {
    /// Also the client's identity: each thread keeps a transport per client (see `thread_state`).
    config: Arc<Config>,
    /// A `with_options` client's own timeout and retries: it shares `config`, and so the
    /// pools, of the client it was made from.
    limits: Option<Limits>,
}

impl Drop for CoreClient {
    fn drop(&mut self) {
        // The I/O threads hold a pool for this client; let each drop it now rather than at
        // its next call. (A call still running keeps its pool until it ends.) Only the last
        // of the clients sharing the pools (`with_options`) has any to drop.
        if Arc::strong_count(&self.config) > 1 {
            return;
        }
        if let Some(threads) = super::runtime::started() {
            let client = std::mem::replace(&mut self.config, Arc::new(Config::new("", "", "")));
            drop(client);
            threads.on_each(thread_state::prune);
        }
    }
}

#[pymethods]
impl CoreClient {
    #[new]
    #[pyo3(signature = (api_key, base_url, events_url, timeout = 30.0, max_retries = 2, default_headers = None, allow_insecure = false, backoff_base = 0.5, ca_bundle = None, proxy = None, max_connections = Some(100), max_response_size = transport::DEFAULT_MAX_RESPONSE_SIZE as i64))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        api_key: &str,
        base_url: &str,
        events_url: &str,
        timeout: f64,
        max_retries: i64,
        default_headers: Option<&Bound<'_, PyDict>>,
        allow_insecure: bool,
        backoff_base: f64,
        ca_bundle: Option<std::path::PathBuf>,
        proxy: Option<String>,
        max_connections: Option<i64>,
        max_response_size: i64,
    ) -> PyResult<Self> {
        let limits = checked_limits(py, timeout, max_retries, max_response_size)?;
        if !(backoff_base.is_finite() && (0.0..=3600.0).contains(&backoff_base)) {
            return Err(bad(
                py,
                "backoff_base",
                " must be a number of seconds from 0 to 3600",
            ));
        }
        if max_connections.is_some_and(|n| !(1..=65_536).contains(&n)) {
            return Err(bad(
                py,
                "max_connections",
                " must be between 1 and 65536, or None for no bound",
            ));
        }
        let mut config = Config::new(api_key, base_url, events_url)
            .with_max_connections(max_connections.map(|n| n as usize));
        config.timeout = limits.timeout;
        config.max_retries = limits.max_retries;
        config.max_response_size = limits.max_response_size;
        config.allow_insecure = allow_insecure;
        config.backoff_base = Duration::from_secs_f64(backoff_base);
        config.ca_bundle = ca_bundle;
        config.proxy = proxy;
        if let Some(h) = default_headers {
            for (k, v) in h.iter() {
                config.default_headers.push((k.extract()?, v.extract()?));
            }
        }
        // Built once here; every pool of the client, on every thread, shares it.
        config.tls = Some(
            transport::tls_config(config.ca_bundle.as_deref())
                .map_err(|e| to_pyerr(py, e, SAME))?,
        );
        let transport = Transport::new(&config).map_err(|e| to_pyerr(py, e, SAME))?;
        drop(transport);
        Ok(CoreClient {
            config: Arc::new(config),
            limits: None,
        })
    }

    /// A client on the same connections whose calls run under their own timeout, retries
    /// and answer bound (`None` keeps this client's).
    #[pyo3(signature = (timeout = None, max_retries = None, max_response_size = None))]
    fn with_options(
        &self,
        py: Python<'_>,
        timeout: Option<f64>,
        max_retries: Option<i64>,
        max_response_size: Option<i64>,
    ) -> PyResult<CoreClient> {
        let limits = checked_limits(
            py,
            timeout.unwrap_or_else(|| self.timeout()),
            max_retries.unwrap_or_else(|| i64::from(self.max_retries())),
            max_response_size.unwrap_or_else(|| self.max_response_size() as i64),
        )?;
        Ok(CoreClient {
            config: self.config.clone(),
            limits: Some(limits),
        })
    }

    #[getter]
    fn base_url(&self) -> &str {
        &self.config.base_url
    }

    #[getter]
    fn events_url(&self) -> &str {
        &self.config.events_url
    }

    #[getter]
    fn timeout(&self) -> f64 {
        self.limits
            .map_or(self.config.timeout, |l| l.timeout)
            .as_secs_f64()
    }

    #[getter]
    fn max_retries(&self) -> u32 {
        self.limits
            .map_or(self.config.max_retries, |l| l.max_retries)
    }

    #[getter]
    fn max_response_size(&self) -> u64 {
        self.limits
            .map_or(self.config.max_response_size, |l| l.max_response_size)
    }

    /// Whether `close()` was called on this client or on one sharing its connections.
    #[getter]
    fn closed(&self) -> bool {
        self.config
            .closed
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    #[getter]
    fn max_connections(&self) -> Option<usize> {
        self.config.max_connections
    }

    /// Closes the client's idle connections: at once on this thread and the I/O threads,
    /// at their next call on other threads that made blocking calls. Calls still running
    /// finish on their connections.
    fn close(&self) {
        self.config
            .closed
            .store(true, std::sync::atomic::Ordering::Relaxed);
        thread_state::prune_now();
        if let Some(threads) = super::runtime::started() {
            threads.on_each(thread_state::prune);
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "CoreClient(base_url={:?}, events_url={:?})",
            self.config.base_url, self.config.events_url
        )
    }

    /// Runs `call` (made by an operation's function, `_core.drips_get(...)`) and blocks
    /// until it ends, releasing the GIL meanwhile.
    fn call(&self, py: Python<'_>, call: &Bound<'_, PreparedCall>) -> PyResult<Py<PyAny>> {
        self.blocking(py, call.get(), None)
    }

    /// `call` with the call's own options (see `call_options`): a `(result, raw)` tuple
    /// when they ask for the raw answer.
    fn call_with(
        &self,
        py: Python<'_>,
        call: &Bound<'_, PreparedCall>,
        options: &Bound<'_, PyDict>,
    ) -> PyResult<Py<PyAny>> {
        let call = call.get();
        let per_call = call_options::read(call.name_str(), options)?
            .map_err(|e| to_pyerr(py, e, call.renamer()))?;
        self.blocking(py, call, Some(per_call))
    }

    /// Starts `call` as a task whose result `completions` will hand over; returns its id.
    fn submit(
        &self,
        py: Python<'_>,
        call: &Bound<'_, PreparedCall>,
        completions: &Bound<'_, Completions>,
    ) -> PyResult<u64> {
        self.start(py, call.get(), None, completions)
    }

    /// `submit` with the call's own options, as `call_with`.
    fn submit_with(
        &self,
        py: Python<'_>,
        call: &Bound<'_, PreparedCall>,
        options: &Bound<'_, PyDict>,
        completions: &Bound<'_, Completions>,
    ) -> PyResult<u64> {
        let call = call.get();
        let per_call = call_options::read(call.name_str(), options)?
            .map_err(|e| to_pyerr(py, e, call.renamer()))?;
        self.start(py, call, Some(per_call), completions)
    }
}

impl CoreClient {
    /// The limits a call runs under: its client's, with its own timeout if it has one.
    fn limits_for(&self, per_call: Option<&PerCall>) -> Option<Limits> {
        match per_call.and_then(|p| p.timeout) {
            None => self.limits,
            Some(timeout) => Some(Limits {
                timeout,
                ..self.limits.unwrap_or(Limits {
                    timeout,
                    max_retries: self.config.max_retries,
                    max_response_size: self.config.max_response_size,
                })
            }),
        }
    }
}

/// The op a prepared call runs, `track_many`'s events read now if they were not.
fn op_of(py: Python<'_>, ready: Option<Ready>, rename: Renamer) -> PyResult<Op> {
    let read = match ready {
        Some(Ready::Op(op)) => Ok(op),
        Some(Ready::Events(items, concurrency)) => ops::read_events(items.bind(py), concurrency),
        None => Err(Error::Internal("a call with nothing to run".into())),
    };
    // Ctrl-C landed in the caller's own code run by the conversion (a `to_dict`).
    if let Some(e) = stop::take() {
        return Err(e);
    }
    read.map_err(|e| to_pyerr(py, e, rename))
}

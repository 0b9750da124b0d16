//! `pushwire._core.CoreClient`, the engine under `pushwire.Client` and
//! `pushwire.AsyncClient`.
//!
//! Blocking calls run on the caller's thread with the GIL released; on the main thread,
//! where Python runs signal handlers, they wake every 50 ms to let it, so Ctrl-C interrupts
//! a call (and cancels its request) within about that long.
//!
//! Async calls run as tokio tasks on the I/O threads, whose results reach the asyncio loop
//! through `Completions` (see `completions`).

use std::sync::Arc;
use std::time::Duration;

use futures::future::{AbortHandle, Abortable};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::batch_across_threads;
use super::busy_poll;
use super::call_options::{self, raw_answer_of, with_options, PerCall};
use super::completions::{CompleteOnPanic, Completions};
use super::errors::to_pyerr;
use super::ops::{self, Op, Output, PreparedCall, Ready, Renamer};
use super::runtime::io_threads;
use super::signals::{handles_signals, signal_tick};
use super::stop;
use super::thread_state::{self, limited};
use crate::client::{transport, Config, Error, Limits, Transport};

/// What a blocking call does: an operation, or a batch already under way.
enum Work {
    Op(Op),
    Spread(batch_across_threads::Batch),
}

/// The outcome of a blocking call a progress callback stopped, until the callback's own
/// exception (`stop::take`) takes its place.
fn stopped() -> Error {
    Error::Cancelled("the call was stopped by its progress callback".into())
}

thread_local! {
    /// Whether this thread is inside a blocking call (runtimes do not nest).
    static IN_CALL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Marks the thread as inside a blocking call until dropped.
struct CallGuard;

impl CallGuard {
    fn enter() -> Option<CallGuard> {
        // Inside a runtime already (a progress callback of an async bulk call runs on one).
        if tokio::runtime::Handle::try_current().is_ok() {
            return None;
        }
        IN_CALL.with(|c| (!c.replace(true)).then_some(CallGuard))
    }
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        IN_CALL.with(|c| c.set(false));
    }
}

/// `timeout` and `max_retries` as a client takes them, or a `ValidationError` naming the one
/// out of range.
fn checked_limits(
    py: Python<'_>,
    timeout: f64,
    max_retries: i64,
    max_response_size: i64,
) -> PyResult<Limits> {
    let bad = |field: &str, m: &str| to_pyerr(py, Error::validation(field, m), |f| f.to_string());
    if !(timeout.is_finite() && timeout > 0.0 && timeout <= 86_400.0) {
        return Err(bad(
            "timeout",
            "timeout must be a positive number of seconds, at most a day",
        ));
    }
    if !(0..=20).contains(&max_retries) {
        return Err(bad("max_retries", "max_retries must be between 0 and 20"));
    }
    if !(1024..=1 << 40).contains(&max_response_size) {
        return Err(bad(
            "max_response_size",
            "max_response_size must be a number of bytes from 1024 to 2**40",
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
        let bad =
            |field: &str, m: &str| to_pyerr(py, Error::validation(field, m), |f| f.to_string());
        let limits = checked_limits(py, timeout, max_retries, max_response_size)?;
        if !(backoff_base.is_finite() && (0.0..=3600.0).contains(&backoff_base)) {
            return Err(bad(
                "backoff_base",
                "backoff_base must be a number of seconds from 0 to 3600",
            ));
        }
        if max_connections.is_some_and(|n| !(1..=65_536).contains(&n)) {
            return Err(bad(
                "max_connections",
                "max_connections must be between 1 and 65536, or None for no bound",
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
                .map_err(|e| to_pyerr(py, e, |f| f.to_string()))?,
        );
        let transport = Transport::new(&config).map_err(|e| to_pyerr(py, e, |f| f.to_string()))?;
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

    fn blocking(
        &self,
        py: Python<'_>,
        call: &PreparedCall,
        per_call: Option<PerCall>,
    ) -> PyResult<Py<PyAny>> {
        let rename = call.renamer();
        super::logs::refresh(py);
        let Some(_guard) = CallGuard::enter() else {
            let e = Error::Config(
                "a blocking pushwire call was made from code running inside another one on \
                 the same thread (a signal handler or a progress callback); make it from \
                 elsewhere, or use AsyncClient"
                    .into(),
            );
            return Err(to_pyerr(py, e, rename));
        };
        let (rt, transport) =
            thread_state::for_blocking(&self.config).map_err(|e| to_pyerr(py, e, rename))?;
        let transport = limited(transport, self.limits_for(per_call.as_ref()));
        let signals = handles_signals();
        let ready = call.take().map_err(|e| to_pyerr(py, e, rename))?;
        // A batch with options beyond headers (which every thread's requests carry) stays on
        // this thread, where they apply; so does one too small to be worth sharing (decided
        // here, with the GIL held: see `batch_across_threads::worth_it`).
        let (ready, spread) = match ready {
            Ready::Events(items, concurrency)
                if per_call.as_ref().is_none_or(PerCall::headers_only)
                    && batch_across_threads::worth_it(items.bind(py).len(), concurrency) =>
            {
                (None, Some((items.into_bound(py), concurrency)))
            }
            ready => (Some(ready), None),
        };
        let work = match (ready, spread) {
            (None, Some((items, concurrency))) => {
                // The I/O threads send the first events while this thread converts the rest.
                let mut batch = batch_across_threads::Batch::start(
                    &transport,
                    &self.config,
                    self.limits,
                    per_call.as_ref().map(|p| p.options.clone()),
                    items.len(),
                    concurrency,
                );
                for (i, item) in items.iter().enumerate() {
                    batch.add(ops::event(&item));
                    // Ctrl-C while converting: returning drops the batch, which calls off
                    // the I/O threads' workers; the events not sent yet never are.
                    if let Some(e) = stop::take() {
                        return Err(e);
                    }
                    if signals && i % 256 == 255 {
                        py.check_signals()?;
                    }
                }
                Work::Spread(batch)
            }
            (ready, _) => {
                let op = op_of(py, ready, rename)?;
                if per_call.as_ref().is_some_and(|p| p.raw) {
                    raw_answer_of(&op).map_err(|e| to_pyerr(py, e, rename))?;
                }
                Work::Op(op)
            }
        };
        let options = per_call.as_ref().map(|p| p.options.clone());
        // Only a thread that handles signals wakes to check them.
        let tick = signals.then(signal_tick);
        let may_spin = matches!(&work, Work::Op(op) if op.is_single_request());
        let outcome: Result<Result<Output, Error>, PyErr> = py.detach(|| {
            rt.block_on(async {
                // Nothing ran this thread's connections since its last call.
                crate::client::transport::catch_up_connections().await;
                let run = async {
                    match work {
                        Work::Spread(batch) => Ok(Output::Batch(batch.finish(&transport).await)),
                        Work::Op(op) => op.run(&transport).await,
                    }
                };
                let fut = with_options(options, run);
                tokio::pin!(fut);
                if let Some(spin) = may_spin.then(busy_poll::start).flatten() {
                    // Polls the socket without parking until the answer or the deadline
                    // (see `busy_poll`): each `yield_now` lets the runtime check its I/O with a
                    // zero timeout before polling the call again.
                    loop {
                        tokio::select! {
                            biased;
                            out = &mut fut => {
                                busy_poll::record(true);
                                return Ok(out);
                            }
                            // Stops the call: its exception replaces this below.
                            _ = stop::requested() => return Ok(Err(stopped())),
                            _ = tokio::task::yield_now() => {}
                        }
                        if std::time::Instant::now() >= spin.deadline {
                            busy_poll::record(false);
                            break;
                        }
                    }
                }
                loop {
                    tokio::select! {
                        biased;
                        out = &mut fut => return Ok(out),
                        _ = stop::requested() => return Ok(Err(stopped())),
                        _ = async {
                            match tick {
                                Some(tick) => tick.notified().await,
                                None => std::future::pending().await,
                            }
                        } => {
                            // Returning drops `fut`: the request is cancelled.
                            Python::attach(|py| match stop::take() {
                                Some(e) => Err(e),
                                None => py.check_signals(),
                            })?;
                        }
                    }
                }
            })
        });
        // A progress callback's KeyboardInterrupt that came after the last tick.
        let outcome = match stop::take() {
            Some(e) => Err(e),
            None => outcome,
        };
        if !matches!(outcome, Ok(Ok(_))) {
            // The call was interrupted or failed: close what it left in flight now.
            py.detach(|| thread_state::settle(&rt));
        }
        match outcome? {
            Ok(out) => out.into_py(py),
            Err(e) => Err(to_pyerr(py, e, rename)),
        }
    }

    fn start(
        &self,
        py: Python<'_>,
        call: &PreparedCall,
        per_call: Option<PerCall>,
        completions: &Bound<'_, Completions>,
    ) -> PyResult<u64> {
        let rename = call.renamer();
        super::logs::refresh(py);
        let ready = call.take().map_err(|e| to_pyerr(py, e, rename))?;
        let mut parsed = op_of(py, Some(ready), rename)?;
        parsed.on_io_thread();
        if per_call.as_ref().is_some_and(|p| p.raw) {
            raw_answer_of(&parsed).map_err(|e| to_pyerr(py, e, rename))?;
        }
        let (client, limits) = (self.config.clone(), self.limits_for(per_call.as_ref()));
        let options = per_call.map(|p| p.options);
        let inner = completions.get().inner().clone();
        let id = inner.next_id();
        let done = inner.clone();
        let (abort, registration) = AbortHandle::new_pair();
        let task = async move {
            // Should the task end without an outcome (a panic), the awaiting call still gets
            // one; an abort (cancelled call) reports nothing, as its future is gone.
            let guard = CompleteOnPanic::new(done, id, rename);
            // The I/O thread's own pool for this client.
            let out = match thread_state::transport(&client) {
                Ok(transport) => {
                    let transport = limited(transport, limits);
                    with_options(options, parsed.run(&transport)).await
                }
                Err(e) => Err(e),
            };
            guard.complete(out);
        };
        // Registered before the task can finish, so `drain` always finds it to remove.
        inner.track(id, abort);
        // Aborting drops the call's future (its request with it) at the task's next turn,
        // or before its first if it has not started.
        let sent = io_threads().submit(async move {
            let _ = Abortable::new(task, registration).await;
        });
        if !sent {
            let e = Error::Internal(
                "pushwire's I/O thread has stopped (a bug: please report it)".into(),
            );
            inner.complete((id, Err(e), rename));
        }
        Ok(id)
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

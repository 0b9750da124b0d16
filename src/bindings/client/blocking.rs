//! A blocking call: run on the caller's thread with the GIL released, woken every 50 ms on
//! a thread that handles signals (Ctrl-C stops it and cancels its request), spinning on the
//! socket briefly where that answers sooner (`busy_poll`), and a large `track_many` spread
//! over the I/O threads while this thread converts the events.

use pyo3::prelude::*;

use super::{op_of, CoreClient};
use crate::bindings::batch_across_threads;
use crate::bindings::busy_poll;
use crate::bindings::call_options::{raw_answer_of, with_options, PerCall};
use crate::bindings::errors::to_pyerr;
use crate::bindings::ops::{self, Op, Output, PreparedCall, Ready};
use crate::bindings::signals::{handles_signals, signal_tick};
use crate::bindings::stop;
use crate::bindings::thread_state::{self, limited};
use crate::client::Error;

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

impl CoreClient {
    pub(super) fn blocking(
        &self,
        py: Python<'_>,
        call: &PreparedCall,
        per_call: Option<PerCall>,
    ) -> PyResult<Py<PyAny>> {
        let rename = call.renamer();
        crate::bindings::logs::refresh(py);
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
}

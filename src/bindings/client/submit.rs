//! An async call: a tokio task on the I/O threads, registered with the `Completions` that
//! hands its result to the asyncio loop, and aborted (its request with it) when the awaiting
//! call is cancelled.

use futures::future::{AbortHandle, Abortable};
use pyo3::prelude::*;

use super::{op_of, CoreClient};
use crate::bindings::call_options::{raw_answer_of, with_options, PerCall};
use crate::bindings::completions::{CompleteOnPanic, Completions};
use crate::bindings::errors::to_pyerr;
use crate::bindings::ops::PreparedCall;
use crate::bindings::runtime::io_threads;
use crate::bindings::thread_state::{self, limited};
use crate::client::Error;

impl CoreClient {
    pub(super) fn start(
        &self,
        py: Python<'_>,
        call: &PreparedCall,
        per_call: Option<PerCall>,
        completions: &Bound<'_, Completions>,
    ) -> PyResult<u64> {
        let rename = call.renamer();
        crate::bindings::logs::refresh(py);
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

//! `pushwire._core.Completions`, the bridge that hands async results to an asyncio loop.
//!
//! pyo3-async-runtimes' `future_into_py` completes each future by taking the GIL from a
//! tokio thread, one request at a time, which contends with the event loop; instead every
//! finished task pushes its result into its loop's queue and writes one byte to a pipe the
//! loop watches (`add_reader`, or a thread of `_bridge.py` where the loop cannot), and the
//! loop converts the whole queue in one go (`Completions.drain`). Cancelling the awaiting
//! task aborts the request.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use futures::future::AbortHandle;
use pyo3::prelude::*;
use pyo3::types::PyList;

use super::errors::to_pyerr;
use super::ops::{Output, Renamer};
use crate::client::Error;

/// A finished call: its id, its outcome, and how its errors name fields.
type Done = (u64, Result<Output, Error>, Renamer);

/// Completes a call with an error if its task unwinds before completing it.
pub struct CompleteOnPanic(Option<(Arc<Inner>, u64, Renamer)>);

impl CompleteOnPanic {
    /// Guards call `id`, whose outcome goes to `done`.
    pub fn new(done: Arc<Inner>, id: u64, rename: Renamer) -> CompleteOnPanic {
        CompleteOnPanic(Some((done, id, rename)))
    }

    /// Completes the call with its outcome.
    pub fn complete(mut self, out: Result<Output, Error>) {
        if let Some((done, id, rename)) = self.0.take() {
            done.complete((id, out, rename));
        }
    }
}

impl Drop for CompleteOnPanic {
    fn drop(&mut self) {
        if let Some((done, id, rename)) = self.0.take() {
            if std::thread::panicking() {
                let e = Error::Internal(
                    "the call failed inside pushwire (a bug: please report it)".into(),
                );
                done.complete((id, Err(e), rename));
            }
        }
    }
}

/// The queue of one asyncio loop's finished calls, and the calls still running.
pub struct Inner {
    queue: Mutex<Vec<Done>>,
    pipe: WakePipe,
    tasks: Mutex<HashMap<u64, AbortHandle>>,
    next_id: AtomicU64,
}

impl Inner {
    /// A new call's id.
    pub fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Keeps the call's abort handle until it completes, for `cancel`.
    pub fn track(&self, id: u64, abort: AbortHandle) {
        self.tasks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, abort);
    }

    /// Hands a finished call to the loop: queued, and the loop woken if it was not yet.
    pub fn complete(&self, done: Done) {
        let was_empty = {
            let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
            let was_empty = q.is_empty();
            q.push(done);
            was_empty
        };
        if was_empty {
            // One byte per batch wakes the loop; a full pipe already means a wake-up is due.
            self.pipe.wake();
        }
    }
}

/// What wakes the loop: any one byte.
const WAKE: [u8; 1] = [0];

/// The write end of a loop's wake-up pipe.
struct WakePipe {
    file: std::fs::File,
}

impl WakePipe {
    /// On Unix `end` is the pipe's file descriptor, duplicated here (close-on-exec): the
    /// caller keeps its own, and dropping this closes only the copy. A number that is no
    /// open descriptor is refused.
    #[cfg(unix)]
    fn duplicate(end: isize) -> PyResult<WakePipe> {
        use std::os::fd::{FromRawFd, OwnedFd};
        let fd = std::os::raw::c_int::try_from(end).map_err(|_| bad_end())?;
        // SAFETY: `fcntl(F_DUPFD_CLOEXEC)` touches no memory of ours; a number that is no
        // open descriptor makes it fail (EBADF), never act on another.
        let copy = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
        if copy < 0 {
            return Err(bad_end());
        }
        // SAFETY: `copy` was made just now by this call, and nothing else holds it.
        let owned = unsafe { OwnedFd::from_raw_fd(copy) };
        Ok(WakePipe {
            file: std::fs::File::from(owned),
        })
    }

    /// On Windows `end` is the pipe's OS handle (`msvcrt.get_osfhandle`), duplicated here:
    /// Python's descriptor belongs to its own C runtime (the UCRT), which a MinGW build
    /// (msvcrt.dll) does not share, so the handle is the one thing both can name. The caller
    /// closes its descriptor afterwards.
    ///
    /// SAFETY: `end` is an open handle until this returns.
    #[cfg(windows)]
    unsafe fn duplicate(end: isize) -> PyResult<WakePipe> {
        use std::os::windows::io::{BorrowedHandle, RawHandle};
        // SAFETY: the caller keeps `end` open until this returns, and the borrow ends here.
        let borrowed = unsafe { BorrowedHandle::borrow_raw(end as RawHandle) };
        let owned = borrowed.try_clone_to_owned()?;
        Ok(WakePipe {
            file: std::fs::File::from(owned),
        })
    }

    /// One byte; a failed write (a full pipe, a loop gone) is no loss: a full pipe already
    /// means a wake-up is due.
    fn wake(&self) {
        use std::io::Write;
        let _ = (&self.file).write(&WAKE);
    }
}

fn bad_end() -> PyErr {
    pyo3::exceptions::PyValueError::new_err(
        "write_fd must be the write end of a pipe (a file descriptor; on Windows its OS handle)",
    )
}

/// The results of one asyncio loop's calls, and the pipe that tells the loop they are in.
#[pyclass(module = "pushwire._core", frozen)]
pub struct Completions {
    inner: Arc<Inner>,
}

impl Completions {
    pub fn inner(&self) -> &Arc<Inner> {
        &self.inner
    }
}

#[pymethods]
impl Completions {
    /// Duplicates the write end of a pipe: on Unix its descriptor (non-blocking), on
    /// Windows its OS handle (see `WakePipe::duplicate`). The caller's own stays the
    /// caller's to close.
    #[new]
    fn new(write_fd: isize) -> PyResult<Self> {
        if write_fd < 0 {
            return Err(bad_end());
        }
        #[cfg(unix)]
        let pipe = WakePipe::duplicate(write_fd)?;
        #[cfg(windows)]
        // SAFETY: the caller keeps the handle open until this returns.
        let pipe = unsafe { WakePipe::duplicate(write_fd) }?;
        Ok(Completions {
            inner: Arc::new(Inner {
                queue: Mutex::new(Vec::new()),
                pipe,
                tasks: Mutex::new(HashMap::new()),
                next_id: AtomicU64::new(1),
            }),
        })
    }

    /// Every finished call since the last drain: `(id, ok, result or exception)`.
    fn drain<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let batch =
            std::mem::take(&mut *self.inner.queue.lock().unwrap_or_else(|e| e.into_inner()));
        let out = PyList::empty(py);
        if batch.is_empty() {
            return Ok(out);
        }
        {
            let mut tasks = self.inner.tasks.lock().unwrap_or_else(|e| e.into_inner());
            for (id, _, _) in &batch {
                tasks.remove(id);
            }
        }
        for (id, result, rename) in batch {
            let item = match result.map(|o| o.into_py(py)) {
                Ok(Ok(value)) => (id, true, value),
                Ok(Err(conversion)) => (id, false, conversion.into_value(py).into_any()),
                Err(e) => (id, false, to_pyerr(py, e, rename).into_value(py).into_any()),
            };
            out.append(item)?;
        }
        Ok(out)
    }

    /// Aborts the request of call `id` (its awaiting task was cancelled).
    fn cancel(&self, id: u64) {
        if let Some(h) = self
            .inner
            .tasks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id)
        {
            h.abort();
        }
    }

    /// Calls still running.
    #[getter]
    fn pending(&self) -> usize {
        self.inner.tasks.lock().map(|t| t.len()).unwrap_or(0)
    }
}

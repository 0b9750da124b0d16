//! `segments.add_subscribers_bulk`, `add_profiles_bulk` and `remove_profiles_bulk`: a
//! list of any length read, then sent in chunks by `crate::client::bulk`, with the caller's
//! progress callback told of each chunk (with the GIL, from the right thread).

use crate::message;
use crate::validate::FIELD;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use pyo3::prelude::*;

use super::args::{concurrency, id_text, str_list, text};
use super::operation::{prepare, Known, PreparedCall, Ready, Run, Running, SAME};
use super::output::Output;
use crate::bindings::stop;
use crate::client::checkpoint::{Checkpoint, Input};
use crate::client::{bulk, Error, Transport};

/// What a bulk call does to its segment's members.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    AddHashes,
    AddProfiles,
    RemoveProfiles,
}

pub struct Args {
    kind: Kind,
    /// The segment's id (`AddHashes`) or name.
    target: String,
    items: Vec<String>,
    concurrency: usize,
    progress: Option<Py<PyAny>>,
    /// The checkpoint's path: opened when the call runs, for the site of the client that
    /// runs it.
    checkpoint: Option<std::path::PathBuf>,
    /// Report progress from a thread of its own rather than the one running the call
    /// (set for async calls, see `Run::on_io_thread`).
    offload_progress: bool,
}

/// The function of a bulk call: the same parameters for the three, the segment given by id
/// or by name; `progress` is a `callable(done, total)` or None.
macro_rules! bulk_function {
    ($function:ident, $name:literal, $kind:expr, $segment:ident, $items:ident) => {
        #[doc = concat!("`client.", $name, "`'s call.")]
        #[pyfunction]
        #[pyo3(signature = ($segment, $items, *, concurrency, checkpoint, progress))]
        fn $function(
            $segment: &Bound<'_, PyAny>,
            $items: &Bound<'_, PyAny>,
            concurrency: &Bound<'_, PyAny>,
            checkpoint: &Bound<'_, PyAny>,
            progress: &Bound<'_, PyAny>,
        ) -> PyResult<PreparedCall> {
            prepare($segment.py(), Known::as_($name, SAME), || {
                let call = read($kind, $segment, $items, concurrency, checkpoint, progress)?;
                Ok(Ready::Op(Box::new(call)))
            })
        }
    };
}

bulk_function!(
    segments_add_subscribers_bulk,
    "segments.add_subscribers_bulk",
    Kind::AddHashes,
    segment_id,
    hashes
);
bulk_function!(
    segments_add_profiles_bulk,
    "segments.add_profiles_bulk",
    Kind::AddProfiles,
    segment_name,
    profile_ids
);
bulk_function!(
    segments_remove_profiles_bulk,
    "segments.remove_profiles_bulk",
    Kind::RemoveProfiles,
    segment_name,
    profile_ids
);

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(segments_add_subscribers_bulk, m)?)?;
    m.add_function(wrap_pyfunction!(segments_add_profiles_bulk, m)?)?;
    m.add_function(wrap_pyfunction!(segments_remove_profiles_bulk, m)?)
}

/// The three calls' shared reading: the segment (an id or a name), the items, the
/// concurrency, the checkpoint and the progress callback.
fn read(
    kind: Kind,
    segment: &Bound<'_, PyAny>,
    items: &Bound<'_, PyAny>,
    concurrency: &Bound<'_, PyAny>,
    checkpoint: &Bound<'_, PyAny>,
    progress: &Bound<'_, PyAny>,
) -> Result<Args, Error> {
    let (target, field) = match kind {
        Kind::AddHashes => {
            let id = id_text(segment, "segment_id")?;
            crate::validate::segment_id(&id)?;
            (id, "hashes")
        }
        Kind::AddProfiles | Kind::RemoveProfiles => (text(segment, "segment_name")?, "profile_ids"),
    };
    let items = str_list(items, field)?;
    if items.is_empty() {
        return Err(Error::validation(
            field,
            message![FIELD, " must not be empty"],
        ));
    }
    if let Some(i) = items.iter().position(|h| h.trim().is_empty()) {
        return Err(Error::validation(
            field,
            message![FIELD, format!("[{i}] must not be empty")],
        ));
    }
    let concurrency = self::concurrency(concurrency)?;
    let checkpoint = match checkpoint {
        path if path.is_none() => None,
        path => {
            let path: std::path::PathBuf = path.extract().map_err(|_| {
                Error::validation(
                    "checkpoint",
                    message![FIELD, " must be a file's path (a str or an os.PathLike)"],
                )
            })?;
            Some(path)
        }
    };
    let progress = (!progress.is_none()).then(|| progress.clone().unbind());
    Ok(Args {
        kind,
        target,
        items,
        concurrency,
        progress,
        checkpoint,
        offload_progress: false,
    })
}

/// What `kind` does to the segment `target` names.
fn membership(kind: Kind, target: &str) -> bulk::Membership<'_> {
    match kind {
        Kind::AddHashes => bulk::Membership::AddHashes { segment_id: target },
        Kind::AddProfiles => bulk::Membership::AddProfiles {
            segment_name: target,
        },
        Kind::RemoveProfiles => bulk::Membership::RemoveProfiles {
            segment_name: target,
        },
    }
}

impl Args {
    async fn send(self, t: &Transport) -> Result<Output, Error> {
        let (items, concurrency) = (&self.items, self.concurrency);
        let total = items.len();
        let membership = membership(self.kind, &self.target);
        let checkpoint = match &self.checkpoint {
            Some(path) => {
                let (operation, segment) = membership.named();
                let input = Input {
                    operation,
                    segment: &segment,
                    site: t.site(),
                    items,
                    chunk_size: membership.chunk_size(),
                };
                Some(Checkpoint::open(path, &input)?)
            }
            None => None,
        };
        let checkpoint = checkpoint.as_ref();
        let call = move |cb: &Py<PyAny>, done: usize| {
            Python::attach(|py| {
                if let Err(e) = cb.call1(py, (done, total)) {
                    log::warn!(target: "pushwire", "progress callback failed: {e}");
                }
            })
        };
        // In place, on the thread of a blocking call: a failing callback is logged and
        // the call goes on, but Ctrl-C (or a SystemExit) raised in it, where Python runs
        // signal handlers, stops the call (see `stop::take`).
        let call_in_place = move |cb: &Py<PyAny>, done: usize| {
            if stop::pending() {
                return;
            }
            Python::attach(|py| match cb.call1(py, (done, total)) {
                Ok(_) => {}
                Err(e) if e.is_instance_of::<pyo3::exceptions::PyException>(py) => {
                    log::warn!(target: "pushwire", "progress callback failed: {e}");
                }
                Err(e) => stop::request(e),
            })
        };
        Ok(match self.progress {
            Some(cb) if self.offload_progress => {
                // In order, from one blocking-pool thread; the call ends after its last
                // report, as when reports are made in place.
                let (tx, rx) = std::sync::mpsc::channel::<usize>();
                // Set when the call is dropped unfinished (cancelled): reports still
                // queued then are not delivered.
                let gone = Arc::new(AtomicBool::new(false));
                let seen = gone.clone();
                let reporter = tokio::task::spawn_blocking(move || {
                    while let Ok(done) = rx.recv() {
                        if !seen.load(Ordering::Acquire) {
                            call(&cb, done);
                        }
                    }
                });
                struct SetOnDrop(Arc<AtomicBool>);
                impl Drop for SetOnDrop {
                    fn drop(&mut self) {
                        self.0.store(true, Ordering::Release);
                    }
                }
                let unfinished = SetOnDrop(gone);
                let report = move |done: usize| {
                    let _ = tx.send(done);
                };
                let out =
                    bulk::membership(t, membership, items, concurrency, checkpoint, report).await;
                let _ = reporter.await;
                drop(unfinished); // every report was delivered
                Output::Chunks(out)
            }
            Some(cb) => {
                let report = |done: usize| call_in_place(&cb, done);
                Output::Chunks(
                    bulk::membership(t, membership, items, concurrency, checkpoint, report).await,
                )
            }
            None => Output::Chunks(
                bulk::membership(t, membership, items, concurrency, checkpoint, |_| {}).await,
            ),
        })
    }
}

impl Run for Args {
    fn run(self: Box<Self>, t: &Transport) -> Running<'_> {
        Box::pin(self.send(t))
    }

    fn is_single_request(&self) -> bool {
        false
    }

    /// On an I/O thread, which every async call shares, a progress callback must not wait
    /// for the GIL (it would hold up every other call on that thread for as long), so
    /// reports go through a thread of their own.
    fn on_io_thread(&mut self) {
        self.offload_progress = true;
    }
}

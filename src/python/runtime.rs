//! The tokio runtime the client's calls run on: one per process. A process forked from one
//! that had a runtime (gunicorn preload, Celery prefork) gets a new one, since the parent's
//! worker threads do not exist in the child.

use std::sync::Mutex;

use tokio::runtime::Runtime;

static RUNTIME: Mutex<Option<(u32, &'static Runtime)>> = Mutex::new(None);

pub fn runtime() -> &'static Runtime {
    let pid = std::process::id();
    let mut slot = RUNTIME.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((owner, rt)) = *slot {
        if owner == pid {
            return rt;
        }
    }
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .clamp(2, 4);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .thread_name("pushwire")
        .enable_all()
        .build()
        .expect("the tokio runtime could not start");
    // Leaked on purpose: it lives as long as the process, and a parent's runtime inherited
    // through fork must never be dropped (its threads are gone).
    let rt: &'static Runtime = Box::leak(Box::new(rt));
    *slot = Some((pid, rt));
    rt
}

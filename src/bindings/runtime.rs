//! The threads async calls run on: a few I/O threads, each driving a current-thread tokio
//! runtime of its own, one set per process. A process forked from one that had them
//! (gunicorn preload, Celery prefork) starts its own, since the parent's threads do not
//! exist in the child.
//!
//! Why not one multi-thread runtime: its workers steal each other's tasks, so a connection's
//! driver and the request using it often run on different threads, and idle workers spin
//! while searching for work. At 64 calls in flight that cost about 20 us of CPU a request,
//! more than the whole request takes on a thread of its own (`benches/profile.py`). Here a
//! call is placed on one thread (round robin) and stays there, with connection pools of
//! that thread's own ([`super::thread_state`]).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::runtime::Handle;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::fork::PerProcess;

/// A call handed to an I/O thread through its inbox.
type Job = Pin<Box<dyn Future<Output = ()> + Send>>;

pub struct IoThreads {
    handles: Vec<Handle>,
    inboxes: Vec<mpsc::UnboundedSender<Job>>,
    next: AtomicUsize,
}

impl IoThreads {
    fn pick(&self) -> usize {
        self.next.fetch_add(1, Ordering::Relaxed) % self.handles.len()
    }

    /// Runs `fut` on the next I/O thread.
    pub fn spawn<F>(&self, fut: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.handles[self.pick()].spawn(fut)
    }

    /// Runs `fut` on the next I/O thread, through its inbox.
    ///
    /// Why not [`Handle::spawn`]: spawning from outside a current-thread runtime wakes its
    /// driver every time, a write to an eventfd (one system call on the event loop's thread
    /// per async call, and a wake-up of the I/O thread even when it is busy). The inbox
    /// wakes its thread only when that thread is waiting for it; calls made while the thread
    /// is busy are picked up together at its next turn.
    ///
    /// False if the thread is gone and `fut` was dropped unrun. (It cannot end while the
    /// process lives, short of a panic escaping tokio; the caller still answers its call.)
    #[must_use]
    pub fn submit<F>(&self, fut: F) -> bool
    where
        F: Future<Output = ()> + Send + 'static,
    {
        self.inboxes[self.pick()].send(Box::pin(fut)).is_ok()
    }

    /// How many there are.
    pub fn len(&self) -> usize {
        self.handles.len()
    }

    /// Runs `task` once on every I/O thread.
    pub fn on_each(&self, task: fn()) {
        for h in &self.handles {
            h.spawn(async move { task() });
        }
    }
}

/// How many I/O threads: `PUSHWIRE_IO_THREADS` if set (1 to 16), else half the cores (the
/// event loop and the calling code need the rest), at least 1 and at most 4.
fn thread_count() -> usize {
    if let Some(n) = std::env::var("PUSHWIRE_IO_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
    {
        return n.clamp(1, 16);
    }
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2);
    (cores / 2).clamp(1, 4)
}

static THREADS: PerProcess<IoThreads> = PerProcess::new();

/// The I/O threads, if this process has started them.
pub fn started() -> Option<&'static IoThreads> {
    THREADS.get()
}

pub fn io_threads() -> &'static IoThreads {
    THREADS.get_or_make(start, |_| {})
}

fn start() -> IoThreads {
    let mut handles = Vec::new();
    let mut inboxes = Vec::new();
    for i in 0..thread_count() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("the tokio runtime could not start");
        handles.push(rt.handle().clone());
        let (tx, mut rx) = mpsc::unbounded_channel::<Job>();
        inboxes.push(tx);
        std::thread::Builder::new()
            .name(format!("pushwire-io-{i}"))
            // Runs the tasks spawned through `handles` and the calls arriving in its inbox
            // for as long as the process lives. A spawn from the runtime's own thread goes
            // straight into its run queue, with no wake-up.
            .spawn(move || {
                rt.block_on(async move {
                    while let Some(job) = rx.recv().await {
                        tokio::spawn(job);
                    }
                    std::future::pending::<()>().await
                })
            })
            .expect("the client's I/O thread could not start");
    }
    IoThreads {
        handles,
        inboxes,
        next: AtomicUsize::new(0),
    }
}

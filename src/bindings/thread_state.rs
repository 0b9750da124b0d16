//! Per-thread state of the client: a connection pool (transport) per client, and for
//! threads that make blocking calls, a current-thread runtime.
//!
//! Blocking calls run on the calling thread's own runtime: on a shared multi-thread runtime
//! every network event of a blocking call hops from a worker thread to the caller and back;
//! here the caller drives its sockets itself, which takes about a third off a small call's
//! latency. Async calls run on the I/O threads of [`super::runtime`], each with pools of its
//! own, for the same reason: a connection is only ever driven by the thread that uses it.
//!
//! A thread's state is dropped when the thread ends (no leak in servers that start a thread
//! per request), and rebuilt in a process forked from one that had it.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use tokio::runtime::Runtime;

use crate::client::{Config, Error, Limits, Transport};

struct Local {
    /// The process generation it was made in ([`super::fork`]).
    generation: u64,
    /// Transports first: they are dropped before the runtime their connections ran on.
    /// With each client's `closed` flag, read without upgrading the weak reference.
    transports: Vec<(Weak<Config>, Arc<AtomicBool>, Arc<Transport>)>,
    rt: Option<Arc<Runtime>>,
}

thread_local! {
    static LOCAL: RefCell<Option<Local>> = const { RefCell::new(None) };
}

fn with_local<R>(f: impl FnOnce(&mut Local) -> Result<R, Error>) -> Result<R, Error> {
    let generation = super::fork::current();
    LOCAL.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.as_ref().is_none_or(|l| l.generation != generation) {
            if let Some(inherited) = slot.take() {
                // Forked: the parent's runtime shares its epoll descriptor with the parent;
                // never touch (or drop) it here.
                std::mem::forget(inherited);
            }
            *slot = Some(Local {
                generation,
                transports: Vec::new(),
                rt: None,
            });
        }
        match slot.as_mut() {
            Some(local) => f(local),
            None => Err(Error::Internal(
                "the client's thread state is missing".into(),
            )),
        }
    })
}

/// Drops the transports of clients that no longer exist or were closed (their idle
/// connections close; a call still running keeps its transport until it ends).
fn prune_in(local: &mut Local) {
    local
        .transports
        .retain(|(owner, closed, _)| owner.strong_count() > 0 && !closed.load(Ordering::Relaxed));
}

fn transport_in(local: &mut Local, client: &Arc<Config>) -> Result<Arc<Transport>, Error> {
    prune_in(local);
    let found = local
        .transports
        .iter()
        .find(|(owner, _, _)| std::ptr::eq(owner.as_ptr(), Arc::as_ptr(client)))
        .map(|(_, _, t)| t.clone());
    match found {
        Some(t) => Ok(t),
        None => {
            let t = Arc::new(Transport::new(client)?);
            local
                .transports
                .push((Arc::downgrade(client), client.closed.clone(), t.clone()));
            Ok(t)
        }
    }
}

/// This thread's transport for `client` (whose configuration is also its identity).
pub fn transport(client: &Arc<Config>) -> Result<Arc<Transport>, Error> {
    with_local(|local| transport_in(local, client))
}

/// This thread's runtime for blocking calls, and its transport for `client`.
pub fn for_blocking(client: &Arc<Config>) -> Result<(Arc<Runtime>, Arc<Transport>), Error> {
    with_local(|local| {
        let rt = match &local.rt {
            Some(rt) => rt.clone(),
            None => {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| Error::Internal(format!("the runtime could not start: {e}")))?;
                let rt = Arc::new(rt);
                local.rt = Some(rt.clone());
                rt
            }
        };
        Ok((rt, transport_in(local, client)?))
    })
}

/// Drops this thread's transports of clients that no longer exist (their idle connections
/// close with them).
pub fn prune() {
    let _ = with_local(|local| {
        prune_in(local);
        Ok(())
    });
}

/// [`prune`], then lets this thread's runtime run the closed pools' connection tasks, so
/// their sockets close now rather than at the thread's next call. Not from inside a
/// runtime (a progress callback of a call on this thread), where the next turn does it.
pub fn prune_now() {
    let rt = with_local(|local| {
        prune_in(local);
        Ok(local.rt.clone())
    })
    .ok()
    .flatten();
    if let Some(rt) = rt {
        settle(&rt);
    }
}

/// Lets this thread's runtime run the tasks that are ready on it: the connection tasks of
/// closed pools, or of requests a call gave up (Ctrl-C, a timeout), which close their
/// sockets when polled. Left alone until the thread's next call, a socket would stay open
/// and the service would finish the abandoned request: a write the user interrupted would
/// still happen. Not from inside a runtime (a progress callback of a call on this thread),
/// where the next turn does it.
pub fn settle(rt: &Runtime) {
    if tokio::runtime::Handle::try_current().is_err() {
        rt.block_on(async {
            for _ in 0..4 {
                tokio::task::yield_now().await;
            }
        });
    }
}

/// This thread's pool for a client, under a `with_options` client's own limits if any.
pub fn limited(transport: Arc<Transport>, limits: Option<Limits>) -> Arc<Transport> {
    match limits {
        None => transport,
        Some(limits) => Arc::new(transport.with_limits(limits)),
    }
}

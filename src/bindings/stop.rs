//! A stop asked for by the caller's own code while a call runs it: a KeyboardInterrupt or
//! SystemExit (an exception that is not an `Exception`) raised in a progress callback or in
//! a row's `to_dict` while arguments are converted. It is kept for this thread, the call
//! stops, and the call raises it in place of the error that stood in for it meanwhile.

use std::cell::RefCell;

use pyo3::prelude::*;

use crate::client::Error;

thread_local! {
    /// An exception that is not an `Exception` (KeyboardInterrupt, SystemExit) raised by a
    /// blocking call's progress callback on this thread: the call stops and raises it.
    static STOP: RefCell<Option<PyErr>> = const { RefCell::new(None) };
}

/// Keeps `e`, an exception that is not an `Exception` (KeyboardInterrupt, SystemExit) raised
/// by the caller's own code while converting a call's arguments (a row's `to_dict`), for
/// the call to raise (`take`); the error returned stands in for it until then.
pub fn stash(e: PyErr) -> Error {
    STOP.with(|s| *s.borrow_mut() = Some(e));
    placeholder()
}

/// What stands in for a stashed stop (`stash`) until it is raised.
const STOPPED: &str = "interrupted by an exception raised in the caller's own code";

pub fn placeholder() -> Error {
    Error::validation("", STOPPED)
}

/// Whether `err` stands in for a stashed stop.
pub fn is_placeholder(err: &Error) -> bool {
    matches!(err, Error::Validation(v) if v.message() == STOPPED)
}

pub fn pending() -> bool {
    STOP.with(|s| s.borrow().is_some())
}

/// The exception a progress callback of this thread's blocking call raised to stop it, if
/// any (taken: the next call starts clear).
pub fn take() -> Option<PyErr> {
    STOP.with(|s| s.borrow_mut().take())
}

/// Ready once a progress callback of this thread's blocking call has asked it to stop.
/// Registers no waker: a call polls it right after the call's own future, whose poll is
/// where the callback ran.
pub fn requested() -> impl std::future::Future<Output = ()> {
    std::future::poll_fn(|_| {
        if STOP.with(|s| s.borrow().is_some()) {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
}

/// Keeps `e`, raised by a progress callback of this thread's blocking call, for the call to
/// raise: the call stops at its next turn (`requested`).
pub fn request(e: PyErr) {
    STOP.with(|s| *s.borrow_mut() = Some(e));
}

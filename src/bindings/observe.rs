//! The core's [`Observer`] as a Python object (`pushwire.otel`'s per-call tracer): each
//! request a call sends is `start(method, url, host, port, resend_count)`, which returns
//! `(handle, headers)` or `None`, then `end(handle, status, error_type, protocol)`; what the
//! call logs is `log(level, message)`, emitted in the call's trace context.
//!
//! Whatever the Python side raises is dropped here: tracing never fails or changes a call.

use pyo3::prelude::*;
use reqwest::header::{HeaderName, HeaderValue};

use crate::client::transport::{Attempt, Ended, Observed, Observer};

/// A Python observer of one call's requests (`follows_requests`: its attribute, true when
/// it has none).
#[derive(Debug)]
pub struct PyObserver(Py<PyAny>, bool);

impl PyObserver {
    pub fn new(observer: &Bound<'_, PyAny>) -> PyObserver {
        let follows = observer
            .getattr("follows_requests")
            .and_then(|v| v.is_truthy())
            .unwrap_or(true);
        PyObserver(observer.clone().unbind(), follows)
    }
}

struct PyObserved {
    observer: Py<PyAny>,
    handle: Py<PyAny>,
    headers: Vec<(HeaderName, HeaderValue)>,
}

impl Observer for PyObserver {
    fn follows_requests(&self) -> bool {
        self.1
    }

    fn started(&self, a: &Attempt<'_>) -> Option<Box<dyn Observed>> {
        Python::attach(|py| {
            let args = (a.method, a.url, a.host, a.port, a.resend_count);
            let out = match self.0.call_method1(py, "start", args) {
                Ok(out) => out,
                Err(e) => {
                    dropped(py, &e);
                    return None;
                }
            };
            let (handle, pairs): (Py<PyAny>, Vec<(String, String)>) = out.extract(py).ok()?;
            let headers = pairs
                .iter()
                .filter_map(|(k, v)| {
                    Some((
                        HeaderName::from_bytes(k.as_bytes()).ok()?,
                        HeaderValue::from_str(v).ok()?,
                    ))
                })
                .collect();
            Some(Box::new(PyObserved {
                observer: self.0.clone_ref(py),
                handle,
                headers,
            }) as Box<dyn Observed>)
        })
    }

    fn log(&self, level: log::Level, message: &str) {
        Python::attach(|py| {
            let args = (Self::log_level(level), message);
            if let Err(e) = self.0.call_method1(py, "log", args) {
                // Not through the observer again: logged directly.
                log::debug!(target: "pushwire", "a traced log record failed: {}", e.value(py));
            }
        });
    }
}

impl PyObserver {
    fn log_level(level: log::Level) -> u8 {
        match level {
            log::Level::Error => 40,
            log::Level::Warn => 30,
            log::Level::Info => 20,
            log::Level::Debug => 10,
            log::Level::Trace => 5,
        }
    }
}

impl Observed for PyObserved {
    fn headers(&self) -> &[(HeaderName, HeaderValue)] {
        &self.headers
    }

    fn ended(self: Box<Self>, e: Ended) {
        Python::attach(|py| {
            let args = (self.handle, e.status, e.error_type, e.protocol);
            if let Err(e) = self.observer.call_method1(py, "end", args) {
                dropped(py, &e);
            }
        });
    }
}

/// A failure of the observer, told at debug level and otherwise dropped.
fn dropped(py: Python<'_>, e: &PyErr) {
    log::debug!(target: "pushwire", "tracing failed and was left out: {}", e.value(py));
}

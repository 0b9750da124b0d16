//! A call's own options as Python passes them (`extra_headers`, `extra_query`,
//! `extra_body`, `timeout`, and whether to keep the raw answer), read into the core's
//! [`CallOptions`]; the call run under them; and the raw answer handed back.

use crate::message;
use crate::validate::FIELD;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::convert::to_json;
use super::observe::PyObserver;
use super::ops::{headers, pairs, Op, Output};
use crate::client::transport::CallOptions;
use crate::client::Error;

/// What `CoreClient.call_with` and `submit_with` take.
pub struct PerCall {
    pub options: Arc<CallOptions>,
    pub timeout: Option<Duration>,
    pub raw: bool,
}

impl PerCall {
    /// Whether the options only add headers: what a batch spread over threads can apply on
    /// each of them.
    pub fn headers_only(&self) -> bool {
        let o = &self.options;
        self.timeout.is_none()
            && !self.raw
            && o.query.is_empty()
            && o.body.is_empty()
            && o.observer.as_ref().is_none_or(|ob| !ob.follows_requests())
    }
}

/// The names the options dict may hold (the keys of `pushwire.RequestOptions`, `raw`, and
/// `_observer`, the tracer `pushwire.otel` gives a call).
const NAMES: [&str; 6] = [
    "extra_headers",
    "extra_query",
    "extra_body",
    "timeout",
    "raw",
    "_observer",
];

/// Reads `options`; an unknown name is a `TypeError`, as a misspelt keyword argument is.
pub fn read(op: &str, options: &Bound<'_, PyDict>) -> PyResult<Result<PerCall, Error>> {
    let mut out = CallOptions::default();
    let mut timeout = None;
    let mut raw = false;
    for (name, value) in options.iter() {
        let name: String = name.extract()?;
        if !NAMES.contains(&name.as_str()) {
            return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                "{op}() got an unexpected keyword argument '{name}'"
            )));
        }
        if value.is_none() {
            continue;
        }
        let read = match name.as_str() {
            "extra_headers" => headers(&value, "extra_headers").map(|h| out.headers = h),
            "extra_query" => pairs(&value, &name).and_then(|pairs| {
                for (k, v) in pairs {
                    let json = to_json(&v, &format!("extra_query[{k:?}]"))?;
                    out.query.push((k, json));
                }
                Ok(())
            }),
            "extra_body" => pairs(&value, &name).and_then(|pairs| {
                for (k, v) in pairs {
                    let json = to_json(&v, &format!("extra_body[{k:?}]"))?;
                    out.body.insert(k, json);
                }
                Ok(())
            }),
            "timeout" => {
                let secs: f64 = value.extract()?;
                if !(secs.is_finite() && secs > 0.0 && secs <= 86_400.0) {
                    Err(Error::validation(
                        "timeout",
                        message![
                            FIELD,
                            " must be a positive number of seconds, at most a day"
                        ],
                    ))
                } else {
                    timeout = Some(Duration::from_secs_f64(secs));
                    Ok(())
                }
            }
            "_observer" => {
                out.observer = Some(Arc::new(PyObserver::new(&value)));
                Ok(())
            }
            _ => {
                raw = value.is_truthy()?;
                Ok(())
            }
        };
        if let Err(e) = read {
            return Ok(Err(e));
        }
    }
    if raw {
        out.raw = Some(Mutex::new(None));
    }
    Ok(Ok(PerCall {
        options: Arc::new(out),
        timeout,
        raw,
    }))
}

/// Whether `op` has one answer to show raw: a bulk call or a batch sends many requests.
pub fn raw_answer_of(op: &Op) -> Result<(), Error> {
    if op.is_single_request() {
        Ok(())
    } else {
        Err(Error::Config(
            "with_raw_response shows one answer, and this call sends many requests (a bulk \
             call or a batch): call it without with_raw_response"
                .into(),
        ))
    }
}

/// `run` with the call's options applied to each request it sends; with the raw answer it
/// kept, when they ask for one.
pub async fn with_options(
    options: Option<Arc<CallOptions>>,
    run: impl std::future::Future<Output = Result<Output, Error>>,
) -> Result<Output, Error> {
    let Some(options) = options else {
        return run.await;
    };
    let out = options.clone().scope(run).await;
    match (out, options.take_raw()) {
        (Ok(out), Some(raw)) => Ok(Output::WithRaw(Box::new(out), raw)),
        (Ok(out), None) => Ok(out),
        // A successful answer the typed read could not take: the raw call still returns it,
        // and `parse()` raises (errors by status still raise from the call).
        (Err(Error::Api(failure)), Some(raw)) if failure.unreadable => Ok(Output::WithRaw(
            Box::new(Output::Unread(Error::Api(failure))),
            raw,
        )),
        (Err(e), _) => Err(e),
    }
}

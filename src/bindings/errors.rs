//! The core's errors as the exceptions of `pushwire.errors`, their fields named as the
//! Python arguments that carry them (each operation's renamer, given a spec name).

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyDict;
use pythonize::pythonize;

use crate::client::Error;
use crate::operations::{python_name, PythonNames};

static ERRORS: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

fn errors_module(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    ERRORS
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(py.import("pushwire.errors")?.unbind())
        })
        .map(|m| m.bind(py))
}

/// The Python names of a call whose arguments are named as the spec's fields.
pub const SAME: PythonNames = &[];

/// The exception of `pushwire.errors` for a core error. `rename` maps a spec parameter
/// name to the Python argument that carries it.
pub fn to_pyerr(py: Python<'_>, err: Error, names: PythonNames) -> PyErr {
    // A Ctrl-C that stopped the conversion (`stop::stash`) is what the caller gets, in
    // place of the error standing in for it (and only there).
    if super::stop::is_placeholder(&err) {
        if let Some(stopped) = super::stop::take() {
            return stopped;
        }
    }
    match build_exception(py, err, names) {
        Ok(e) => e,
        Err(e) => e,
    }
}

/// The exception of `err`: the core says what failed (its kind, message and fields, named
/// as the exception's constructor names them) and `pushwire.errors._from_core` chooses the
/// class, the one place the hierarchy is written.
fn build_exception(py: Python<'_>, err: Error, names: PythonNames) -> PyResult<PyErr> {
    let m = errors_module(py)?;
    let fields = PyDict::new(py);
    let (kind, message) = match err {
        Error::Validation(v) => {
            fields.set_item("field", python_name(names, &v.field))?;
            // The words alone: the exception names its field apart (`field`), and its
            // text puts the field before words that do not name it.
            ("validation", v.words_named(&|f| python_name(names, f)))
        }
        Error::Config(m) => ("config", m),
        Error::Cancelled(m) => ("cancelled", m),
        Error::Internal(m) => ("internal", m),
        Error::Connection {
            message,
            outcome_unknown,
            ..
        } => {
            fields.set_item("outcome_unknown", outcome_unknown)?;
            ("connection", message)
        }
        Error::Timeout {
            message,
            outcome_unknown,
            ..
        } => {
            fields.set_item("outcome_unknown", outcome_unknown)?;
            ("timeout", message)
        }
        Error::TooLarge {
            message,
            outcome_unknown,
            limit,
        } => {
            fields.set_item("outcome_unknown", outcome_unknown)?;
            fields.set_item("max_response_size", limit)?;
            ("too_large", message)
        }
        Error::Api(a) => {
            fields.set_item("status_code", a.status)?;
            fields.set_item("body", pythonize(py, &a.body)?)?;
            fields.set_item("code", a.code)?;
            fields.set_item("details", pythonize(py, &a.details)?)?;
            fields.set_item("outcome_unknown", a.outcome_unknown)?;
            fields.set_item("retry_after", a.retry_after)?;
            fields.set_item("headers", &a.headers)?;
            ("api", a.message)
        }
    };
    let exc = m.getattr("_from_core")?.call1((kind, message, fields))?;
    Ok(PyErr::from_value(exc))
}

//! The seam between a Python method and the core: each operation is a function of
//! `pushwire._core` named after it (`drips_get` for `client.drips.get`), with pyo3's own
//! argument parsing and the Python method's parameter names, defined in the file of its
//! resource. It reads and checks its arguments (with the GIL, before anything is sent) into a
//! [`PreparedCall`], which a client runs (`CoreClient.call`, `submit`): a reader or a tool
//! follows a call from its method to its Rust function by name.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList};
use std::sync::Mutex;

use std::future::Future;
use std::pin::Pin;

use super::output::Output;
use crate::bindings::errors::to_pyerr;
use crate::bindings::stop;
use crate::client::{Error, Transport};
use crate::operations::{Declared, Operation};

/// Maps a core field name to the Python argument's.
pub type Renamer = crate::operations::PythonNames;

/// A call read and checked from its Python arguments, ready for a client to run once:
/// what each operation's function returns. `name` is the operation as the caller knows it
/// (`drips.get`), for its span, its log lines and its idempotency record.
#[pyclass(frozen, module = "pushwire._core")]
pub struct PreparedCall {
    name: &'static str,
    rename: Renamer,
    ready: Mutex<Option<Ready>>,
    key: Option<Key>,
}

/// The key of a keyed call, and the arguments its fingerprint is taken of (settled: a
/// one-shot iterable made a list before it was read, so that both read the same items).
pub type Key = (String, Py<PyDict>);

/// What a prepared call runs.
pub enum Ready {
    Op(Op),
    /// `events.track_many`'s events, not read yet: a blocking call may share their reading
    /// with the I/O threads (`crate::bindings::batch_across_threads`).
    Events(Py<PyList>, usize),
}

#[pymethods]
impl PreparedCall {
    /// The operation, as the caller knows it (`drips.get`).
    #[getter]
    fn name(&self) -> &'static str {
        self.name
    }

    /// The call's idempotency key, if it was given one.
    #[getter]
    fn idempotency_key(&self) -> Option<&str> {
        self.key.as_ref().map(|(key, _)| key.as_str())
    }

    /// The arguments a keyed call is fingerprinted by, by name (`None` without a key).
    #[getter]
    fn arguments(&self, py: Python<'_>) -> Option<Py<PyDict>> {
        self.key.as_ref().map(|(_, args)| args.clone_ref(py))
    }

    fn __repr__(&self) -> String {
        format!("<PreparedCall {}>", self.name)
    }
}

impl PreparedCall {
    /// How a violation's field is named to the caller.
    pub fn renamer(&self) -> Renamer {
        self.rename
    }

    pub fn name_str(&self) -> &'static str {
        self.name
    }

    /// What the call runs; an error if it already ran (a prepared call runs once).
    pub fn take(&self) -> Result<Ready, Error> {
        let taken = match self.ready.lock() {
            Ok(mut ready) => ready.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        taken.ok_or_else(|| {
            Error::Config(format!(
                "this {} call has run already: a prepared call runs once",
                self.name
            ))
        })
    }
}

/// What a prepared call is known by: the operation as the caller names it (`drips.get`) and
/// the Python names of its fields. An operation of the service is known by its declaration
/// (`&DRIPS_GET`); a call that is not one request of a declared operation (`request`,
/// `events.track_many`, `segments.remove_profiles`) by [`Known::as_`].
#[derive(Debug, Clone, Copy)]
pub struct Known {
    name: &'static str,
    rename: Renamer,
}

impl Known {
    pub const fn as_(name: &'static str, rename: Renamer) -> Known {
        Known { name, rename }
    }
}

impl From<&Operation> for Known {
    fn from(op: &Operation) -> Known {
        Known::as_(op.name, op.python_names)
    }
}

/// The prepared call `read` makes of an operation's arguments, or the exception that
/// refuses them, its field named as the Python argument that carries it.
pub fn prepare(
    py: Python<'_>,
    known: impl Into<Known>,
    read: impl FnOnce() -> Result<Ready, Error>,
) -> PyResult<PreparedCall> {
    prepare_keyed(py, known, None, read)
}

/// [`prepare`] for a call that may carry an idempotency key, with the arguments its
/// fingerprint is taken of.
pub fn prepare_keyed(
    py: Python<'_>,
    known: impl Into<Known>,
    key: Option<Key>,
    read: impl FnOnce() -> Result<Ready, Error>,
) -> PyResult<PreparedCall> {
    let Known { name, rename } = known.into();
    let read = read();
    // Ctrl-C landed in the caller's own code run by the conversion (a `to_dict`).
    if let Some(e) = stop::take() {
        return Err(e);
    }
    let ready = read.map_err(|e| to_pyerr(py, e, rename))?;
    Ok(PreparedCall {
        name,
        rename,
        ready: Mutex::new(Some(ready)),
        key,
    })
}

/// A keyed call's key and its arguments by name, each settled (`pushwire._fingerprint.
/// settled`), or `None` without a key; the values to read are those settled.
pub fn keyed<'py, const N: usize>(
    py: Python<'py>,
    key: Option<String>,
    args: [(&str, Bound<'py, PyAny>); N],
) -> PyResult<(Option<Key>, [Bound<'py, PyAny>; N])> {
    let Some(key) = key else {
        return Ok((None, args.map(|(_, v)| v)));
    };
    // Looked up once per process, not per keyed call.
    static SETTLED: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let settled = SETTLED
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(
                py.import("pushwire._fingerprint")?
                    .getattr("settled")?
                    .unbind(),
            )
        })?
        .bind(py);
    let named = PyDict::new(py);
    let mut values = Vec::with_capacity(N);
    for (name, value) in args {
        let value = settled.call1((value,))?;
        named.set_item(name, &value)?;
        values.push(value);
    }
    let values: [Bound<'py, PyAny>; N] = values
        .try_into()
        .unwrap_or_else(|_| unreachable!("one value per argument"));
    Ok((Some((key, named.unbind())), values))
}

/// The renamer of an operation whose fields keep their names.
pub use crate::bindings::errors::SAME;

/// What a call runs to: its output, or the error.
pub type Running<'a> = Pin<Box<dyn Future<Output = Result<Output, Error>> + Send + 'a>>;

/// A call with its arguments read, ready to run without the GIL: a [`Request`] of a declared
/// operation, or a call of several (`events.track_many`, the bulk membership calls).
pub trait Run: Send {
    fn run(self: Box<Self>, t: &Transport) -> Running<'_>;

    /// Whether it sends one request (with its retries), rather than a batch of them.
    fn is_single_request(&self) -> bool {
        true
    }

    /// Marks it as running on one of the client's I/O threads, which every async call
    /// shares (a bulk call's progress reports then go through a thread of their own).
    fn on_io_thread(&mut self) {}
}

/// A call ready to run.
pub type Op = Box<dyn Run>;

/// An operation as the bindings send it: the client's function of its declaration, and its
/// response as the output the Python method returns.
pub trait Sends: Declared<Request: Send> + 'static {
    fn send(
        t: &Transport,
        request: &Self::Request,
    ) -> impl Future<Output = Result<Output, Error>> + Send;
}

/// Each operation's [`Sends`], one line each: the operation, then the client's function
/// that sends its request; its response becomes the method's result through `Output::from`.
macro_rules! sends {
    ($($op:ident: $function:path;)*) => {$(
        impl $crate::bindings::ops::operation::Sends for $op {
            async fn send(
                t: &$crate::client::Transport,
                request: &Self::Request,
            ) -> Result<$crate::bindings::ops::output::Output, $crate::client::Error> {
                Ok($crate::bindings::ops::output::Output::from($function(t, request).await?))
            }
        }
    )*};
}
pub(crate) use sends;

/// The `_core` function of an operation that takes an idempotency key, declared as its
/// Python signature and what its body makes ready to run (`request::<Op>(...)`, or
/// `checked::<Op>(...)`): the positional arguments, after `;` the
/// keyword-only ones, then always `idempotency_key`. With a key, each argument is settled
/// first and the fingerprint taken of them by name ([`keyed`]); the body reads the settled
/// values under the arguments' own names.
macro_rules! keyed_call {
    (
        $(#[doc = $doc:literal])*
        fn $name:ident($($pos:ident),+ $(; $($kw:ident),+)?) -> $op:ident $body:block
    ) => {
        $(#[doc = $doc])*
        #[pyfunction]
        #[pyo3(signature = ($($pos,)+ * $($(, $kw)+)?, idempotency_key))]
        fn $name<'py>(
            py: Python<'py>,
            $($pos: Bound<'py, PyAny>,)+
            $($($kw: Bound<'py, PyAny>,)+)?
            idempotency_key: Option<String>,
        ) -> PyResult<$crate::bindings::ops::operation::PreparedCall> {
            use $crate::bindings::ops::operation::{keyed, prepare_keyed};
            let (key, [$($pos,)+ $($($kw,)+)?]) = keyed(
                py,
                idempotency_key,
                [$((stringify!($pos), $pos),)+ $($((stringify!($kw), $kw),)+)?],
            )?;
            let op = <$op as $crate::operations::Declared>::OPERATION;
            const _: () = assert!(
                <$op as $crate::operations::Declared>::OPERATION.takes_key(),
                "a keyed call's operation is declared Keyed in operations.rs"
            );
            prepare_keyed(py, op, key, || Ok($body))
        }
    };
}
pub(crate) use keyed_call;

/// A request of the operation `O`, read from the Python arguments, and the segment ids it
/// names that are checked against the site's before it is sent (each with its field's path).
struct Request<O: Declared>(O::Request, Vec<(String, i64)>);

impl<O: Sends> Run for Request<O> {
    fn run(self: Box<Self>, t: &Transport) -> Running<'_> {
        let Request(request, segments) = *self;
        Box::pin(async move {
            // Most calls name no segment: sent as they are, on the client's own limits.
            if segments.is_empty() {
                return O::send(t, &request).await;
            }
            crate::client::known_segments::then_send(t, &segments, |t| async move {
                O::send(&t, &request).await
            })
            .await
        })
    }
}

/// What a prepared call of `O` runs: `request`.
pub fn request<O: Sends>(request: O::Request) -> Ready {
    checked::<O>(request, Vec::new())
}

/// What a prepared call of `O` runs: `request`, once the site is found to have each segment
/// of `segments` (`crate::client::known_segments`).
pub fn checked<O: Sends>(request: O::Request, segments: Vec<(String, i64)>) -> Ready {
    Ready::Op(Box::new(Request::<O>(request, segments)))
}

/// [`prepare`] for the operation `O`: the request `read` makes of its Python arguments.
pub fn prepare_request<O: Sends>(
    py: Python<'_>,
    read: impl FnOnce() -> Result<O::Request, Error>,
) -> PyResult<PreparedCall> {
    const {
        assert!(
            !O::OPERATION.takes_key(),
            "an operation declared Keyed in operations.rs takes its key: keyed_call!"
        )
    };
    prepare(py, O::OPERATION, || read().map(request::<O>))
}

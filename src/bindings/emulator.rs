//! `pushwire._core.EmulatorServer`: the Rust emulator on its own runtime, for
//! `pushwire.testing.Emulator` and `python -m pushwire.emulator`.

use std::cell::Cell;
use std::io::ErrorKind;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use crate::emulator::state::WallClock;
use crate::emulator::{admin, persist, Config, Emu, Server};

#[pyclass(module = "pushwire._core", frozen)]
pub struct EmulatorServer {
    server: Mutex<Option<Server>>,
    /// The default site's key (the state file's when none was given).
    api_key: String,
    /// An emulator whose save at its stop failed: its state is still held, for `save(path)`
    /// to write elsewhere.
    unsaved: Mutex<Option<Arc<Emu>>>,
    base_url: String,
    events_url: String,
    /// What to say at start when it listens beyond this machine (`server::exposure_notice`).
    notice: Option<String>,
    /// This process's clock, which the emulator may follow (`follow_python_clock`), with
    /// its last reading, for a reading that fails.
    clock: Arc<PythonClock>,
}

#[pymethods]
impl EmulatorServer {
    #[new]
    #[pyo3(signature = (api_key, host = "127.0.0.1", port = 0, events_port = 0, allowed_hosts = Vec::new(), admin_token = None, state = None, save_every = None, load_from = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        api_key: &str,
        host: &str,
        port: u16,
        events_port: u16,
        allowed_hosts: Vec<String>,
        admin_token: Option<String>,
        state: Option<PathBuf>,
        save_every: Option<f64>,
        load_from: Option<PathBuf>,
    ) -> PyResult<Self> {
        let host: IpAddr = host.parse().map_err(|_| {
            PyValueError::new_err(format!("host must be an IP address, got {host:?}"))
        })?;
        // Empty: the state file's default key, or test-key.
        if let Some(problem) = Some(api_key)
            .filter(|k| !k.is_empty())
            .and_then(crate::emulator::state::key_problem)
        {
            return Err(PyValueError::new_err(problem));
        }
        let save_every = save_every
            .map(|s| {
                Duration::try_from_secs_f64(s)
                    .ok()
                    .filter(|d| !d.is_zero())
                    .ok_or_else(|| {
                        PyValueError::new_err(format!(
                            "save_every must be seconds above 0, got {s}"
                        ))
                    })
            })
            .transpose()?;
        if let Some(problem) = admin_token
            .as_deref()
            .and_then(crate::emulator::guard::token_problem)
        {
            return Err(PyValueError::new_err(problem));
        }
        let token_set = admin_token.is_some();
        let config = Config {
            api_key: api_key.to_string(),
            host,
            port,
            events_port,
            worker_threads: 2,
            allowed_hosts,
            admin_token,
            state_file: state,
            save_every,
            load_from,
        };
        let server = py
            .detach(|| Server::start(config))
            .map_err(|e| match e.kind() {
                // A state file refused, or a setting: the caller's to correct.
                ErrorKind::InvalidData | ErrorKind::InvalidInput => {
                    PyValueError::new_err(e.to_string())
                }
                ErrorKind::NotFound => PyFileNotFoundError::new_err(e.to_string()),
                _ => PyOSError::new_err(format!("the emulator could not start: {e}")),
            })?;
        Ok(EmulatorServer {
            api_key: server.emu().default_key.clone(),
            unsaved: Mutex::new(None),
            notice: crate::emulator::server::exposure_notice(host, token_set),
            base_url: server.base_url(),
            events_url: server.events_url(),
            server: Mutex::new(Some(server)),
            clock: Arc::new(PythonClock::default()),
        })
    }

    #[getter]
    fn notice(&self) -> Option<&str> {
        self.notice.as_deref()
    }

    #[getter]
    fn api_key(&self) -> &str {
        &self.api_key
    }

    /// The emulator's state file, if it has one.
    #[getter]
    fn state_file(&self) -> Option<PathBuf> {
        let guard = self.server.lock().unwrap_or_else(|e| e.into_inner());
        guard.as_ref().and_then(|s| s.emu().state_file.clone())
    }

    /// Saves the whole state to `path` (default: the state file): the path, its size in
    /// bytes and the seconds it took.
    #[pyo3(signature = (path = None))]
    fn save(&self, py: Python<'_>, path: Option<PathBuf>) -> PyResult<(PathBuf, u64, f64)> {
        let unsaved = self
            .unsaved
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let emu = match unsaved {
            Some(emu) => emu,
            None => self.running_emu()?,
        };
        let path = path.or_else(|| emu.state_file.clone()).ok_or_else(|| {
            PyValueError::new_err(
                "this emulator has no state file: give save() a path, or start it with \
                 Emulator(state=...)",
            )
        })?;
        let saved = self
            .entered(py, &emu, || persist::save(&emu, &path))?
            .map_err(state_file_error)?;
        Ok((saved.path, saved.bytes, saved.took.as_secs_f64()))
    }

    #[getter]
    fn base_url(&self) -> &str {
        &self.base_url
    }

    #[getter]
    fn events_url(&self) -> &str {
        &self.events_url
    }

    /// Runs an admin operation (see `/_emulator/{op}`): JSON text in, JSON text out.
    fn admin(&self, py: Python<'_>, op: &str, args_json: &str) -> PyResult<String> {
        super::logs::refresh(py);
        let args: serde_json::Value = serde_json::from_str(args_json)
            .map_err(|e| PyValueError::new_err(format!("arguments are not JSON: {e}")))?;
        let emu = self.running_emu()?;
        let out = self.entered(py, &emu, || admin::dispatch(&emu, op, args))?;
        match out {
            Ok(v) => Ok(v.to_string()),
            Err(e) => Err(PyValueError::new_err(e)),
        }
    }

    /// A page of `subscribers` or `deliveries` (`op`, with its arguments as `admin`
    /// takes them) as a list of dicts made here, its times aware datetimes.
    fn rows(&self, py: Python<'_>, op: &str, args_json: &str) -> PyResult<Py<pyo3::types::PyList>> {
        super::logs::refresh(py);
        let args: serde_json::Value = serde_json::from_str(args_json)
            .map_err(|e| PyValueError::new_err(format!("arguments are not JSON: {e}")))?;
        let emu = self.running_emu()?;
        let rows = self
            .entered(py, &emu, || admin::rows(&emu, op, args))?
            .map_err(PyValueError::new_err)?;
        super::emulator_rows::to_python(py, rows)
    }

    /// Makes the emulator's clock read this process's Python clock (`time.time()`, which
    /// time-machine and freezegun move), or the system's again.
    fn follow_python_clock(&self, py: Python<'_>, follow: bool) -> PyResult<()> {
        let emu = self.running_emu()?;
        let wall = if follow {
            // Read once here, so that a clock that cannot be read fails this call.
            self.clock.read(py)?;
            let clock = self.clock.clone();
            Some(WallClock(Arc::new(move || clock.read_elsewhere())))
        } else {
            None
        };
        self.entered(py, &emu, || emu.follow(wall))?;
        emu.changes.bump();
        Ok(())
    }

    /// Stops serving, then saves the state to its state file if it has one (an error if
    /// that save failed).
    fn stop(&self, py: Python<'_>) -> PyResult<()> {
        let taken = self.server.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(mut s) = taken {
            let emu = s.emu().clone();
            if let Some(Err(e)) = self.entered(py, &emu, || s.stop())? {
                *self.unsaved.lock().unwrap_or_else(|e| e.into_inner()) = Some(s.emu().clone());
                return Err(state_file_error(e));
            }
        }
        Ok(())
    }

    #[getter]
    fn running(&self) -> bool {
        self.server.lock().map(|s| s.is_some()).unwrap_or(false)
    }
}

impl Drop for EmulatorServer {
    /// The final save of an emulator dropped without `stop()` runs without the GIL, as
    /// `stop()`'s does: it waits for the server's threads, which may need the GIL to read a
    /// followed clock.
    fn drop(&mut self) {
        let taken = self
            .server
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(server) = taken {
            let last = self.clock.last_reading();
            // Where Python cannot be entered (it is exiting), the closure and the server in
            // it are dropped as they are: no thread holds the GIL for the server's to wait on.
            let _ = Python::try_attach(move |py| {
                py.detach(move || with_pre_read(last, move || drop(server)))
            });
        }
    }
}

impl EmulatorServer {
    /// Runs `f`, an entry into the emulator, without the GIL, the followed clock read
    /// first, with the GIL, before any of the emulator's locks is taken: a signal handler
    /// that the reading runs may call the emulator freely, and an exception the clock
    /// raises (`KeyboardInterrupt` among them) is the caller's, with nothing done.
    fn entered<R: Send>(
        &self,
        py: Python<'_>,
        emu: &Emu,
        f: impl FnOnce() -> R + Send,
    ) -> PyResult<R> {
        let reading = if emu.follows_a_wall_clock() {
            Some(self.clock.read(py)?.timestamp_micros())
        } else {
            None
        };
        Ok(py.detach(|| with_pre_read(reading, f)))
    }

    fn running_emu(&self) -> PyResult<Arc<Emu>> {
        let guard = self.server.lock().unwrap_or_else(|e| e.into_inner());
        let server = guard
            .as_ref()
            .ok_or_else(|| PyRuntimeError::new_err("the emulator is stopped"))?;
        Ok(server.emu().clone())
    }
}

/// A state file's error as Python's: the disk's as `OSError`, a file refused as
/// `ValueError`.
fn state_file_error(e: persist::StateFileError) -> PyErr {
    match e {
        persist::StateFileError::Io { ref source, .. } => match source.raw_os_error() {
            Some(errno) => PyOSError::new_err((errno, e.to_string())),
            None => PyOSError::new_err(e.to_string()),
        },
        other => PyValueError::new_err(other.to_string()),
    }
}

/// The service's OpenAPI 3.1 document as JSON text, its servers at `base_url` and
/// `events_url`; with `admin`, the emulator's admin API's, served at `base_url`.
#[pyfunction]
#[pyo3(signature = (base_url, events_url, admin = false))]
pub fn openapi_document(base_url: &str, events_url: &str, admin: bool) -> String {
    let doc = if admin {
        crate::emulator::openapi::admin_document(base_url)
    } else {
        crate::emulator::openapi::document(base_url, events_url)
    };
    doc.to_string()
}

thread_local! {
    /// The Python clock's reading (microseconds) an entry from Python took on this thread
    /// before letting go of the GIL ([`EmulatorServer::entered`]): the emulator's locks
    /// taken on this thread read it rather than enter Python again.
    static PRE_READ: Cell<Option<i64>> = const { Cell::new(None) };
}

/// `f` run with `reading` as this thread's [`PRE_READ`], the one before it restored after.
fn with_pre_read<R>(reading: Option<i64>, f: impl FnOnce() -> R) -> R {
    let before = PRE_READ.with(|r| r.replace(reading));
    let out = f();
    PRE_READ.with(|r| r.set(before));
    out
}

/// This process's Python clock, `time.time()` looked up at each reading (freezegun replaces
/// the function, time-machine patches it), and its last reading.
struct PythonClock {
    /// Microseconds since 1970; `i64::MIN` before the first reading.
    last: AtomicI64,
}

impl Default for PythonClock {
    fn default() -> Self {
        PythonClock {
            last: AtomicI64::new(i64::MIN),
        }
    }
}

impl PythonClock {
    /// A reading with the GIL held, through `pushwire._testing._clock.read` (a Python
    /// frame for a fake clock that looks through its callers'): the caller's exception if
    /// `time.time()` raises (a signal handler's `KeyboardInterrupt` among them) or answers
    /// what is no instant.
    fn read(&self, py: Python<'_>) -> PyResult<DateTime<Utc>> {
        let secs: f64 = py
            .import(pyo3::intern!(py, "pushwire._testing._clock"))?
            .getattr(pyo3::intern!(py, "read"))?
            .call0()?
            .extract()?;
        let micros = (secs * 1e6).round();
        let at = micros
            .is_finite()
            .then(|| DateTime::from_timestamp_micros(micros as i64))
            .flatten()
            .ok_or_else(|| {
                PyValueError::new_err(format!("time.time() answered {secs}, which is no instant"))
            })?;
        self.last.store(at.timestamp_micros(), Ordering::SeqCst);
        Ok(at)
    }

    /// A reading where the emulator needs one: what an entry from Python on this thread read
    /// before it let go of the GIL, or else (a request on the server's threads) a reading of
    /// its own, or, where Python cannot be entered (it is exiting) or the clock raises, the
    /// last reading: never the system's clock, which may be years from the one followed. An
    /// exception the clock raises on these threads is reported as unraisable (none is a
    /// `KeyboardInterrupt`: Python runs signal handlers on its main thread alone).
    fn read_elsewhere(&self) -> DateTime<Utc> {
        if let Some(at) = PRE_READ
            .with(Cell::get)
            .and_then(DateTime::from_timestamp_micros)
        {
            return at;
        }
        let read =
            Python::try_attach(|py| self.read(py).map_err(|e| e.write_unraisable(py, None)).ok())
                .flatten();
        read.or_else(|| {
            self.last_reading()
                .and_then(DateTime::from_timestamp_micros)
        })
        // Never read yet: `follow_python_clock` reads it once before following.
        .unwrap_or_else(Utc::now)
    }

    /// The last reading, microseconds since 1970.
    fn last_reading(&self) -> Option<i64> {
        Some(self.last.load(Ordering::SeqCst)).filter(|&m| m != i64::MIN)
    }
}

//! `pushwire._core.EmulatorServer`: the Rust emulator on its own runtime, for
//! `pushwire.testing.Emulator` and `python -m pushwire.emulator`.

use std::net::IpAddr;
use std::sync::Mutex;

use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use crate::emulator::{admin, Config, Server};

#[pyclass(module = "pushwire._core", frozen)]
pub struct EmulatorServer {
    server: Mutex<Option<Server>>,
    base_url: String,
    events_url: String,
    /// What to say at start when it listens beyond this machine (`server::exposure_notice`).
    notice: Option<String>,
}

#[pymethods]
impl EmulatorServer {
    #[new]
    #[pyo3(signature = (api_key, host = "127.0.0.1", port = 0, events_port = 0, allowed_hosts = Vec::new(), admin_token = None))]
    fn new(
        py: Python<'_>,
        api_key: &str,
        host: &str,
        port: u16,
        events_port: u16,
        allowed_hosts: Vec<String>,
        admin_token: Option<String>,
    ) -> PyResult<Self> {
        let host: IpAddr = host.parse().map_err(|_| {
            PyValueError::new_err(format!("host must be an IP address, got {host:?}"))
        })?;
        if let Some(problem) = crate::emulator::state::key_problem(api_key) {
            return Err(PyValueError::new_err(problem));
        }
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
        };
        let server = py
            .detach(|| Server::start(config))
            .map_err(|e| PyOSError::new_err(format!("the emulator could not start: {e}")))?;
        Ok(EmulatorServer {
            notice: crate::emulator::server::exposure_notice(host, token_set),
            base_url: server.base_url(),
            events_url: server.events_url(),
            server: Mutex::new(Some(server)),
        })
    }

    #[getter]
    fn notice(&self) -> Option<&str> {
        self.notice.as_deref()
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
        let guard = self.server.lock().unwrap_or_else(|e| e.into_inner());
        let server = guard
            .as_ref()
            .ok_or_else(|| PyRuntimeError::new_err("the emulator is stopped"))?;
        let emu = server.emu().clone();
        drop(guard);
        let out = py.detach(|| admin::dispatch(&emu, op, args));
        match out {
            Ok(v) => Ok(v.to_string()),
            Err(e) => Err(PyValueError::new_err(e)),
        }
    }

    fn stop(&self, py: Python<'_>) {
        let taken = self.server.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(mut s) = taken {
            py.detach(|| s.stop());
        }
    }

    #[getter]
    fn running(&self) -> bool {
        self.server.lock().map(|s| s.is_some()).unwrap_or(false)
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

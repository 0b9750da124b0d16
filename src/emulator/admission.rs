//! What the gate asks of the emulator for each API request: admission in the current epoch,
//! its entry in the request log (every spelling of every key redacted), its status and
//! duration when answered, and the fault it meets.

use axum::body::Bytes;
use axum::http::request::Parts;
use axum::http::{Method, StatusCode};
use serde_json::{Map, Value};

use super::api_error::Interface;
use super::emu::{Admitted, Emu};
use super::faults::Fault;
use super::keys::{api_key, key_spellings, REDACTED};
use super::state::{prune, trace_id_of, LogEntry, SiteId, State};

/// A request as the gate admitted it: the epoch it arrived in and its log entry's number.
pub struct Admission {
    epoch: u64,
    entry: Option<usize>,
}

impl Admission {
    /// The authenticated request's site, for its route.
    pub fn admitted(&self, site: SiteId, iface: Interface) -> Admitted {
        Admitted {
            site,
            epoch: self.epoch,
            iface,
        }
    }
}

impl Emu {
    /// Admits a request: notes the epoch it arrived in and logs it (unless the log is off),
    /// both under one hold of the lock, so that a reset falls wholly before or after.
    /// `request_id` is the one its answer carries (`X-Request-Id`).
    pub fn admit(
        &self,
        iface: Interface,
        parts: &Parts,
        body: &Bytes,
        request_id: &str,
    ) -> Admission {
        let mut st = self.lock();
        let epoch = self.epoch();
        if !self
            .record_requests
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            return Admission { epoch, entry: None };
        }
        let received_at = st.now();
        // The key sent and every site's key, in each spelling a request can carry them.
        let sent = api_key(&parts.headers).unwrap_or("");
        let secrets = key_spellings(std::iter::once(sent).chain(st.api_keys()));
        let redact = |text: String| -> String {
            secrets
                .iter()
                .fold(text, |t, secret| t.replace(secret.as_str(), REDACTED))
        };
        let mut headers = Map::new();
        for (name, value) in &parts.headers {
            let shown = if name.as_str() == "api-key" || name.as_str() == "api_key" {
                REDACTED.to_string()
            } else {
                redact(String::from_utf8_lossy(value.as_bytes()).into_owned())
            };
            headers.insert(name.as_str().to_string(), Value::String(shown));
        }
        let trace_id = trace_id_of(&headers);
        st.log.push_back(LogEntry {
            trace_id,
            request_id: request_id.to_string(),
            interface: iface.name(),
            method: parts.method.to_string(),
            path: redact(parts.uri.path().to_string()),
            query: redact(parts.uri.query().unwrap_or("").to_string()),
            headers,
            body: redact(String::from_utf8_lossy(body).into_owned()),
            status: None,
            received_at,
            duration_ms: None,
            started: std::time::Instant::now(),
            fault: None,
        });
        let entry = st.log_dropped + st.log.len() - 1;
        let dropped = prune(&mut st.log, self.retention());
        st.log_dropped += dropped;
        st.log_pruned += dropped as u64;
        Admission {
            epoch,
            entry: Some(entry),
        }
    }

    /// Whether no reset came since the request was admitted.
    pub fn current(&self, at: &Admission) -> bool {
        self.epoch() == at.epoch
    }

    /// The request's log entry, if it is still there (not cleared, no reset since).
    fn entry<'s>(&self, st: &'s mut State, at: &Admission) -> Option<&'s mut LogEntry> {
        let n = at.entry?.checked_sub(st.log_dropped)?;
        if !self.current(at) {
            return None;
        }
        st.log.get_mut(n)
    }

    /// Empties the request log.
    pub fn clear_log(&self) {
        let mut st = self.lock();
        st.log_dropped += st.log.len();
        st.log.clear();
    }

    pub fn log_status(&self, at: &Admission, status: StatusCode) {
        if at.entry.is_some() {
            let mut st = self.lock();
            if let Some(e) = self.entry(&mut st, at) {
                e.status = Some(status.as_u16());
                e.duration_ms = Some(e.started.elapsed().as_secs_f64() * 1e3);
            }
        }
        self.changes.bump();
    }

    pub fn log_fault(&self, at: &Admission, fault: &Fault) {
        let mut st = self.lock();
        if let Some(e) = self.entry(&mut st, at) {
            e.fault = Some(fault.describe());
        }
    }

    /// The first armed fault matching the request, used up by one. None for a request from
    /// before a reset: the next test's faults are not its own.
    pub fn take_fault(&self, at: &Admission, method: &Method, path: &str) -> Option<Fault> {
        let mut st = self.lock();
        if !self.current(at) {
            return None;
        }
        let Some(i) = st.faults.iter().position(|f| f.matches(method, path)) else {
            return st.chaos.as_mut().and_then(|c| c.draw(path));
        };
        let f = st.faults[i].clone();
        st.faults[i].times -= 1;
        if st.faults[i].times == 0 {
            st.faults.remove(i);
        }
        Some(f)
    }
}

//! Faults injected into the API routes by tests: an error status (with `Retry-After`), a
//! delay, or a connection dropped before or after the request is processed; and headers
//! added to the answer, with a status or on the route's real answer.

use std::time::Duration;

use axum::http::{HeaderName, HeaderValue, Method, StatusCode};
use serde::Deserialize;

/// When a dropped connection is cut: before the service processed the request (it surely
/// did nothing) or after (it did, and the client never hears so).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropMode {
    Before,
    After,
}

/// One armed fault: it fires on the next `times` requests matching `path` (and `method`,
/// when given). `path` is exact, or a prefix when it ends with `*`.
#[derive(Debug, Clone)]
pub struct Fault {
    pub path: String,
    pub method: Option<Method>,
    /// The status answered instead of the route's answer.
    pub status: Option<StatusCode>,
    /// Seconds, sent as `Retry-After` with the status.
    pub retry_after: Option<u64>,
    /// Waited before the answer (or before the drop).
    pub delay: Option<Duration>,
    pub drop: Option<DropMode>,
    /// Requests it still fires on; it is disarmed at 0.
    pub times: u32,
    /// The JSON body of a `status` fault, instead of the interface's plain error.
    pub body: Option<serde_json::Value>,
    /// The request is processed first, then the delay waited and the status answered: the
    /// service acted, and the client hears a failure or nothing in time.
    pub processed: bool,
    /// Added to the answer (a status fault's, or the route's own when the fault has no
    /// status), in order; a name given several values is sent once per value.
    pub headers: Vec<(HeaderName, HeaderValue)>,
}

impl Fault {
    /// What the fault did, for the request log.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(d) = self.delay {
            parts.push(format!("delay {:.3} s", d.as_secs_f64()));
        }
        if let Some(s) = self.status {
            parts.push(format!("status {}", s.as_u16()));
        }
        if !self.headers.is_empty() {
            let names: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
            parts.push(format!("headers {}", names.join(", ")));
        }
        match self.drop {
            Some(DropMode::Before) => parts.push("drop before processing".into()),
            Some(DropMode::After) => parts.push("drop after processing".into()),
            None if self.processed => parts.push("after processing".into()),
            None => {}
        }
        parts.join(", ")
    }

    pub fn matches(&self, method: &Method, path: &str) -> bool {
        let path_ok = match self.path.strip_suffix('*') {
            Some(prefix) => path.starts_with(prefix),
            None => self.path == path,
        };
        path_ok && self.method.as_ref().is_none_or(|m| m == method)
    }
}

/// The admin request that arms a fault (`POST /_emulator/inject_fault`).
#[derive(Debug, Deserialize)]
pub struct FaultSpec {
    pub path: String,
    #[serde(default)]
    pub method: Option<String>,
    #[serde(default)]
    pub status: Option<u16>,
    #[serde(default = "one")]
    pub times: i64,
    #[serde(default)]
    pub retry_after: Option<u64>,
    /// Seconds.
    #[serde(default)]
    pub delay: Option<f64>,
    /// `false`, `true` (same as `"before"`), `"before"` or `"after"`.
    #[serde(default)]
    pub drop: Option<serde_json::Value>,
    #[serde(default)]
    pub body: Option<serde_json::Value>,
    #[serde(default)]
    pub processed: bool,
    /// `{name: value}` or `{name: [value, ...]}`.
    #[serde(default)]
    pub headers: Option<serde_json::Map<String, serde_json::Value>>,
}

/// Headers a fault may not set: they frame the message (a wrong length would cut or hang the
/// answer) or belong to the connection, which the server manages.
const FRAMING: [&str; 5] = [
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "upgrade",
];

/// A fault's `headers` as (name, value) pairs, each checked as HTTP allows.
fn fault_headers(
    given: Option<serde_json::Map<String, serde_json::Value>>,
) -> Result<Vec<(HeaderName, HeaderValue)>, String> {
    let mut out = Vec::new();
    for (name, value) in given.unwrap_or_default() {
        let header = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("headers: {name:?} is not a header name"))?;
        if FRAMING.contains(&header.as_str()) {
            return Err(format!(
                "headers: {name} frames the answer or the connection and is set by the \
                 server; a fault cannot set it"
            ));
        }
        let values = match value {
            serde_json::Value::Array(values) => values,
            one => vec![one],
        };
        for v in values {
            let text = match v {
                serde_json::Value::String(s) => s,
                serde_json::Value::Number(n) => n.to_string(),
                other => {
                    return Err(format!(
                        "headers: {name}'s value must be a string, a number or a list of them, \
                         not {other}"
                    ))
                }
            };
            let value = HeaderValue::from_str(&text).map_err(|_| {
                format!("headers: {name}'s value {text:?} is not a valid header value")
            })?;
            out.push((header.clone(), value));
        }
    }
    Ok(out)
}

fn one() -> i64 {
    1
}

/// Whether a fault's `path` (exact, or a prefix ending in `*`) can match a request to one
/// of the service's operations (`operations::ALL`, `{...}` being one segment), with `method`
/// when one is given: a typo (`/notifications`, a trailing `/`, a query string) would arm a
/// fault that never fires, and a test of the caller's error handling would pass without
/// testing it.
pub fn can_match(path: &str, method: Option<&Method>) -> bool {
    let segment_fits = |given: &str, pattern: &str, partial: bool| {
        (pattern.starts_with('{') && !given.is_empty())
            || pattern == given
            || (partial && (pattern.starts_with('{') || pattern.starts_with(given)))
    };
    if path.contains(['{', '}']) {
        return false; // a placeholder never equals a request's path: give the id
    }
    routes().iter().any(|(route, methods)| {
        // HEAD is answered wherever GET is.
        let takes = |m: &Method| {
            methods.contains(&m.as_str()) || (*m == Method::HEAD && methods.contains(&"GET"))
        };
        if method.is_some_and(|m| !takes(m)) {
            return false;
        }
        let pattern: Vec<&str> = route.split('/').collect();
        match path.strip_suffix('*') {
            None => {
                let given: Vec<&str> = path.split('/').collect();
                given.len() == pattern.len()
                    && given
                        .iter()
                        .zip(&pattern)
                        .all(|(g, p)| segment_fits(g, p, false))
            }
            Some(prefix) => {
                let given: Vec<&str> = prefix.split('/').collect();
                given.len() <= pattern.len()
                    && given
                        .iter()
                        .zip(&pattern)
                        .enumerate()
                        .all(|(i, (g, p))| segment_fits(g, p, i + 1 == given.len()))
            }
        }
    })
}

impl FaultSpec {
    pub fn into_fault(self) -> Result<Fault, String> {
        let method = self
            .method
            .map(|m| Method::from_bytes(m.to_ascii_uppercase().as_bytes()))
            .transpose()
            .map_err(|_| "method is not an HTTP method".to_string())?;
        // A final status: a 1xx is no answer (101 would even take the connection over).
        let status = self
            .status
            .map(|s| match s {
                200..=599 => StatusCode::from_u16(s).ok(),
                _ => None,
            })
            .map(|s| s.ok_or("status must be an HTTP status from 200 to 599"))
            .transpose()?;
        let drop = match self.drop {
            None | Some(serde_json::Value::Bool(false)) | Some(serde_json::Value::Null) => None,
            Some(serde_json::Value::Bool(true)) => Some(DropMode::Before),
            Some(serde_json::Value::String(s)) if s == "before" => Some(DropMode::Before),
            Some(serde_json::Value::String(s)) if s == "after" => Some(DropMode::After),
            Some(_) => return Err("drop must be false, true, \"before\" or \"after\"".into()),
        };
        let delay = match self.delay {
            Some(d) if d.is_finite() && (0.0..=3600.0).contains(&d) => {
                Some(Duration::from_secs_f64(d))
            }
            Some(_) => return Err("delay must be a number of seconds from 0 to 3600".into()),
            None => None,
        };
        let headers = fault_headers(self.headers)?;
        if status.is_none() && drop.is_none() && delay.is_none() && headers.is_empty() {
            return Err("a fault needs a status, a delay, drop or headers".into());
        }
        if drop.is_some() && !headers.is_empty() {
            return Err("a dropped connection has no answer to carry headers".into());
        }
        if !self.path.starts_with('/') {
            return Err("path must start with /".into());
        }
        if self.path.contains('?') {
            return Err(format!(
                "path is matched without its query string: {:?} would never match; drop \
                 the ?...",
                self.path
            ));
        }
        if !can_match(&self.path, None) {
            return Err(format!(
                "no route of the service serves {:?}, so the fault would never fire; the \
                 routes are {} (a {{...}} segment is any id; end a path with * for a prefix)",
                self.path,
                route_list()
            ));
        }
        if let Some(m) = method.as_ref().filter(|m| !can_match(&self.path, Some(m))) {
            return Err(format!(
                "no route under {:?} takes {m}, so the fault would never fire; the routes \
                 are {}",
                self.path,
                route_list()
            ));
        }
        if status.is_some() && drop.is_some() {
            return Err(
                "a fault answers with a status or drops the connection, not both (a delay \
                 may come with either)"
                    .into(),
            );
        }
        if self.processed && drop.is_some() {
            return Err(
                "processed goes with a status or a delay; a connection dropped after \
                 processing is drop=\"after\""
                    .into(),
            );
        }
        let times = u32::try_from(self.times)
            .ok()
            .filter(|t| *t >= 1)
            .ok_or("times must be a positive integer (how many requests the fault hits)")?;
        Ok(Fault {
            path: self.path,
            method,
            status,
            retry_after: self.retry_after,
            delay,
            drop,
            times,
            body: self.body,
            processed: self.processed,
            headers,
        })
    }
}

/// The service's paths, each with the methods it takes (`GET` first), in the spec's order
/// (gathered from `operations::ALL` once).
fn routes() -> &'static [(&'static str, Vec<&'static str>)] {
    static ROUTES: std::sync::LazyLock<Vec<(&'static str, Vec<&'static str>)>> =
        std::sync::LazyLock::new(|| {
            let mut out: Vec<(&'static str, Vec<&'static str>)> = Vec::new();
            for op in crate::operations::ALL {
                match out.iter_mut().find(|(path, _)| *path == op.path) {
                    Some((_, methods)) => methods.push(op.method),
                    None => out.push((op.path, vec![op.method])),
                }
            }
            for (_, methods) in &mut out {
                methods.sort_unstable();
            }
            out
        });
    &ROUTES
}

/// The routes with their methods, for messages.
pub fn route_list() -> String {
    routes()
        .iter()
        .map(|(r, m)| format!("{} {r}", m.join("/")))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Random faults on a share of requests, for soak tests: each request under `path` (a
/// prefix) meets one of `kinds`, chosen at random, with probability `rate`. Seeded, so a
/// failing soak can be replayed.
#[derive(Debug)]
pub struct Chaos {
    pub path: String,
    pub rate: f64,
    pub kinds: Vec<ChaosKind>,
    pub delay: Duration,
    pub rng: fastrand::Rng,
    /// How many of each kind were injected, by name.
    pub injected: std::collections::BTreeMap<&'static str, u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChaosKind {
    Status500,
    Status503RetryAfter,
    Status429,
    Delay,
    DropBefore,
    DropAfter,
}

impl ChaosKind {
    pub const ALL: [ChaosKind; 6] = [
        ChaosKind::Status500,
        ChaosKind::Status503RetryAfter,
        ChaosKind::Status429,
        ChaosKind::Delay,
        ChaosKind::DropBefore,
        ChaosKind::DropAfter,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ChaosKind::Status500 => "500",
            ChaosKind::Status503RetryAfter => "503",
            ChaosKind::Status429 => "429",
            ChaosKind::Delay => "delay",
            ChaosKind::DropBefore => "drop_before",
            ChaosKind::DropAfter => "drop_after",
        }
    }

    pub fn parse(s: &str) -> Option<ChaosKind> {
        ChaosKind::ALL.into_iter().find(|k| k.name() == s)
    }

    fn fault(self, delay: Duration) -> Fault {
        let mut f = Fault {
            path: String::new(),
            method: None,
            status: None,
            retry_after: None,
            delay: None,
            drop: None,
            times: 1,
            body: None,
            processed: false,
            headers: Vec::new(),
        };
        match self {
            ChaosKind::Status500 => f.status = Some(StatusCode::INTERNAL_SERVER_ERROR),
            ChaosKind::Status503RetryAfter => {
                f.status = Some(StatusCode::SERVICE_UNAVAILABLE);
                f.retry_after = Some(0);
            }
            ChaosKind::Status429 => {
                f.status = Some(StatusCode::TOO_MANY_REQUESTS);
                f.retry_after = Some(0);
            }
            ChaosKind::Delay => f.delay = Some(delay),
            ChaosKind::DropBefore => f.drop = Some(DropMode::Before),
            ChaosKind::DropAfter => f.drop = Some(DropMode::After),
        }
        f
    }
}

impl Chaos {
    /// The fault this request meets, if any.
    pub fn draw(&mut self, path: &str) -> Option<Fault> {
        if !path.starts_with(&self.path) || self.kinds.is_empty() {
            return None;
        }
        if self.rng.f64() >= self.rate {
            return None;
        }
        let kind = self.kinds[self.rng.usize(0..self.kinds.len())];
        *self.injected.entry(kind.name()).or_default() += 1;
        Some(kind.fault(self.delay))
    }
}

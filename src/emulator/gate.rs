//! What every request of an interface goes through before its route: the body cap, the
//! request log, injected faults and authentication.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::FutureExt;
use tokio::sync::Notify;

use super::admission::Admission;
use super::api_error::{ApiError, Interface};
use super::emu::Emu;
use super::faults::{DropMode, Fault};
use super::keys::{api_key, key_header};
use super::state::SiteId;
use crate::operations::{DRIPS_LIST, TRIGGERS_LIST};

/// Request bodies above this are refused with 413 before they are buffered further.
pub const BODY_LIMIT: usize = 1 << 20;

/// Closes the connection a request arrived on without an answer (the `drop` fault).
#[derive(Clone)]
pub struct ConnKill(pub Arc<Notify>);

/// Per-interface context of the gate.
#[derive(Clone)]
pub struct Gate {
    pub emu: Arc<Emu>,
    pub iface: Interface,
}

/// The header naming a request on its answer. The spec shows no response headers; the
/// emulator sends this one, as most gateways in front of a service do, so that a test can
/// match a client's error (`e.request_id`) to the request log. Code must not count on the
/// real service sending it.
pub const REQUEST_ID: &str = "x-request-id";

/// The middleware in front of every API route of an interface. Every answer carries its
/// request's id (`X-Request-Id`), which the request log keeps too, unless an injected fault
/// set one of its own (as a gateway's id would stand in front of the service's).
pub async fn gate(State(gate): State<Gate>, req: Request, next: Next) -> Response {
    let id = format!("req_{:016x}", fastrand::u64(..));
    let mut resp = answer(gate, req, next, &id).await;
    if !resp.headers().contains_key(REQUEST_ID) {
        if let Ok(v) = HeaderValue::from_str(&id) {
            resp.headers_mut().insert(REQUEST_ID, v);
        }
    }
    resp
}

async fn answer(gate: Gate, req: Request, next: Next, request_id: &str) -> Response {
    let Gate { emu, iface } = gate;
    let (mut parts, body) = req.into_parts();
    let bytes = match read_body(body).await {
        Ok(b) => b,
        Err(e) => {
            let (status, message) = match e {
                BodyError::TooLarge => (
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!("Request body exceeds {BODY_LIMIT} bytes"),
                ),
                BodyError::Malformed => (
                    StatusCode::BAD_REQUEST,
                    "The request body could not be read (malformed chunked encoding, or cut \
                     short)"
                        .to_string(),
                ),
                BodyError::Stalled => (
                    StatusCode::REQUEST_TIMEOUT,
                    "The request body stopped arriving".to_string(),
                ),
            };
            return route_error(iface, parts.uri.path(), status, message).into_response();
        }
    };
    let path = parts.uri.path().to_string();
    // A reset (the next test's fixture) while this request waits out a delay starts a new
    // epoch: the request is then never processed into, nor logged in, the fresh state.
    let at = emu.admit(iface, &parts, &bytes, request_id);
    let kill = parts.extensions.get::<ConnKill>().cloned();

    let fault = emu.take_fault(&at, &parts.method, &path);
    if let Some(f) = &fault {
        emu.log_fault(&at, f);
    }
    let mut drop_after = false;
    let mut after_processing = None;
    // Headers of a fault without a status, added to the route's own answer.
    let mut decoration = Vec::new();
    match fault {
        Some(f) if f.processed => after_processing = Some(f),
        Some(f) => {
            if f.status.is_none() {
                decoration = f.headers.clone();
            }
            if let Some(d) = f.delay {
                tokio::time::sleep(d).await;
                // Reset while waiting: answered 410 rather than dropped, which a client
                // would retry into the fresh state.
                if !emu.current(&at) {
                    return stale(iface);
                }
            }
            match f.drop {
                Some(DropMode::Before) => return hang_up(kill).await,
                Some(DropMode::After) => drop_after = true,
                None => {}
            }
            if f.status.is_some() && emu.current(&at) {
                return fault_response(&emu, &at, iface, parts.uri.path(), &f);
            }
        }
        None => {}
    }
    if !emu.current(&at) {
        return stale(iface);
    }

    let path = parts.uri.path().to_string();
    let mut resp = match authenticate(&emu, iface, &parts.headers) {
        Ok(site) => {
            parts.extensions.insert(at.admitted(site, iface));
            let handled = next.run(Request::from_parts(parts, Body::from(bytes)));
            // A bug in a handler must still answer (section 7's 500), not close the
            // connection: the client would read a write's outcome as unknown.
            match std::panic::AssertUnwindSafe(handled).catch_unwind().await {
                Ok(resp) => resp,
                Err(_) => {
                    log::error!("emulator handler panicked on {path}");
                    fault_error(iface, &path, StatusCode::INTERNAL_SERVER_ERROR).into_response()
                }
            }
        }
        Err(e) => e.into_response(),
    };
    emu.log_status(&at, resp.status());
    append(&mut resp, &decoration);
    if drop_after {
        // Overtaken by a reset (its route answered 410): a drop would be retried into the
        // fresh state.
        if !emu.current(&at) {
            return stale(iface);
        }
        return hang_up(kill).await;
    }
    // Processed: now the delay and the failure the client sees instead of the answer.
    match after_processing {
        Some(f) => {
            if let Some(d) = f.delay {
                tokio::time::sleep(d).await;
            }
            // A reset came meanwhile (its route was overtaken, or it waited out the delay):
            // the request belongs to an earlier test, and a failure now would be retried
            // into the fresh state.
            if !emu.current(&at) {
                return stale(iface);
            }
            match f.status {
                Some(_) => fault_response(&emu, &at, iface, &path, &f),
                None => {
                    append(&mut resp, &f.headers);
                    resp
                }
            }
        }
        None => resp,
    }
}

/// Why a request body could not be read.
enum BodyError {
    TooLarge,
    Malformed,
    Stalled,
}

/// The whole body, capped at [`BODY_LIMIT`] (http-body-util's `Limited`: nothing past the
/// cap is buffered). A body that stops arriving, no part of it coming within the read
/// timeout, is given up; a slow one that keeps arriving is read to its end (tower-http's
/// `TimeoutBody`: a timeout between parts, reset by each).
async fn read_body(body: Body) -> Result<Bytes, BodyError> {
    use http_body_util::{BodyExt, LengthLimitError, Limited};
    use tower_http::timeout::{TimeoutBody, TimeoutError};
    let body = Limited::new(TimeoutBody::new(read_timeout(), body), BODY_LIMIT);
    match body.collect().await {
        // A body in one part (the usual case) is kept as it came, without a copy.
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<TimeoutError>() => Err(BodyError::Stalled),
        Err(e)
            if e.is::<LengthLimitError>()
                || std::error::Error::source(&*e).is_some_and(|s| s.is::<LengthLimitError>()) =>
        {
            Err(BodyError::TooLarge)
        }
        Err(_) => Err(BodyError::Malformed),
    }
}

/// How long a request's head, or the next part of its body, may take to arrive (90 s, longer
/// than clients keep an idle connection: the SDK's pools drop theirs at 60 s); `PUSHWIRE_EMULATOR_READ_TIMEOUT`
/// (seconds) sets it, for tests of the timeout.
pub fn read_timeout() -> std::time::Duration {
    static SECS: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    let secs = *SECS.get_or_init(|| {
        std::env::var("PUSHWIRE_EMULATOR_READ_TIMEOUT")
            .ok()
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s > 0.0 && *s <= 86_400.0)
            .unwrap_or(90.0)
    });
    std::time::Duration::from_secs_f64(secs)
}

/// The answer to a request that was waiting (a delay fault) when the emulator was reset: it
/// belongs to an earlier test. A 410, which no client retries into the fresh state (a
/// dropped connection would be retried by a read or an idempotent write).
fn stale(iface: Interface) -> Response {
    ApiError::stale(iface).into_response()
}

/// The answer of a `status` fault: its body, or the route's own error shape, with its
/// `Retry-After`; its status logged as the request's.
fn fault_response(emu: &Emu, at: &Admission, iface: Interface, path: &str, f: &Fault) -> Response {
    let status = f.status.unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut resp = match &f.body {
        Some(body) => (status, axum::Json(body.clone())).into_response(),
        None => fault_error(iface, path, status).into_response(),
    };
    if let Some(ra) = f.retry_after {
        if let Ok(v) = HeaderValue::from_str(&ra.to_string()) {
            resp.headers_mut().insert("retry-after", v);
        }
    }
    append(&mut resp, &f.headers);
    emu.log_status(at, resp.status());
    resp
}

/// A fault's headers, after the answer's own: appended, so a name given twice is sent twice.
fn append(resp: &mut Response, headers: &[(HeaderName, HeaderValue)]) {
    for (name, value) in headers {
        resp.headers_mut().append(name.clone(), value.clone());
    }
}

/// An injected error status in the shape the route's real errors have (section 7): a 401 as
/// the interface's refused key, a campaign endpoint's 4xx with its `error` object.
fn fault_error(iface: Interface, path: &str, status: StatusCode) -> ApiError {
    match (iface, status.as_u16()) {
        (Interface::Main, 401) => ApiError::Unauthorized,
        (Interface::Events, 401) => ApiError::Events {
            status,
            code: 401000,
            message: "API key not found or incorrect".into(),
            details: Vec::new(),
        },
        _ => route_error(iface, path, status, fault_message(iface, status)),
    }
}

/// An error the gate answers for a route (a body it could not read, an injected status), in
/// the route's shape: a campaign endpoint's 4xx carries its `error` object (section 7).
fn route_error(
    iface: Interface,
    path: &str,
    status: StatusCode,
    message: impl Into<String>,
) -> ApiError {
    let campaign = path.starts_with(TRIGGERS_LIST.path) || path.starts_with(DRIPS_LIST.path);
    match (iface, status.as_u16()) {
        (Interface::Main, 400..=499) if campaign && status.as_u16() != 429 => {
            ApiError::Campaign(status, message.into())
        }
        _ => ApiError::plain(iface, status, message),
    }
}

/// What an injected error status says: the spec's words where it has them (section 7).
fn fault_message(iface: Interface, status: StatusCode) -> &'static str {
    match (iface, status.as_u16()) {
        (Interface::Main, 500..=599) => "Something went wrong.",
        (Interface::Events, 500..=599) => "Something went wrong",
        (_, 429) => "Too many requests",
        _ => "Injected fault",
    }
}

/// Closes the connection and never answers.
async fn hang_up(kill: Option<ConnKill>) -> Response {
    if let Some(ConnKill(k)) = kill {
        k.notify_one();
    }
    std::future::pending::<Response>().await
}

fn authenticate(emu: &Emu, iface: Interface, headers: &HeaderMap) -> Result<SiteId, ApiError> {
    // Sent is what counts, not readable: a header that is not text (`k\xff`) is a key that
    // is wrong, not one that is missing. An empty or blank header is missing.
    let sent = key_header(headers).is_some_and(|v| !v.as_bytes().trim_ascii().is_empty());
    let key = api_key(headers).filter(|k| !k.is_empty());
    match (key.and_then(|k| emu.site_for_key(k)), sent, iface) {
        (Some(site), _, _) => Ok(site),
        (None, _, Interface::Main) => Err(ApiError::Unauthorized),
        (None, false, Interface::Events) => Err(ApiError::Events {
            status: StatusCode::UNAUTHORIZED,
            code: 401002,
            message: "API key missing. It must be sent in the API-KEY header".into(),
            details: Vec::new(),
        }),
        (None, true, Interface::Events) => Err(ApiError::Events {
            status: StatusCode::UNAUTHORIZED,
            code: 401000,
            message: "API key not found or incorrect".into(),
            details: Vec::new(),
        }),
    }
}

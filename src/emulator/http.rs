//! What every request of an interface goes through before its route: the body cap, the
//! request log, injected faults and authentication; and the spec's error shapes (section 7).

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use futures::FutureExt;
use serde_json::{json, Map, Value};
use tokio::sync::Notify;

use super::faults::{DropMode, Fault};
use super::state::{Emu, SiteId};
use crate::form::Form;
use crate::validate::Violation;

/// Request bodies above this are refused with 413 before they are buffered further.
pub const BODY_LIMIT: usize = 1 << 20;

/// The two interfaces, which differ in their error shapes and authentication codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interface {
    Main,
    Events,
}

impl Interface {
    pub fn name(self) -> &'static str {
        match self {
            Interface::Main => "main",
            Interface::Events => "events",
        }
    }
}

/// An error answer in the spec's shapes.
#[derive(Debug)]
pub enum ApiError {
    /// Main interface 401: `{success: false, message: "API KEY Invalid"}`.
    Unauthorized,
    /// Campaign endpoints: `{success: false, error: {name: "InvalidRequestException", message}}`.
    Campaign(StatusCode, String),
    /// Segment, notification and other main endpoints: `{success: false, message}`.
    Message(StatusCode, String),
    /// Events interface: `{error: {message, code, details?}}`.
    Events {
        status: StatusCode,
        code: u32,
        message: String,
        details: Vec<Violation>,
    },
}

impl ApiError {
    pub fn bad_campaign(v: impl std::fmt::Display) -> ApiError {
        ApiError::Campaign(StatusCode::BAD_REQUEST, v.to_string())
    }

    pub fn bad(message: impl Into<String>) -> ApiError {
        ApiError::Message(StatusCode::BAD_REQUEST, message.into())
    }

    pub fn invalid_event(details: Vec<Violation>) -> ApiError {
        ApiError::Events {
            status: StatusCode::BAD_REQUEST,
            code: 1003,
            message: "Invalid data".into(),
            details,
        }
    }

    /// A request of an earlier test: the emulator was reset since it arrived (410).
    pub fn stale(iface: Interface) -> ApiError {
        ApiError::plain(
            iface,
            StatusCode::GONE,
            "the emulator was reset while this request waited: it belongs to an earlier test",
        )
    }

    /// The plain error of `iface` for transport-level failures (bad body, 404, 413, faults).
    pub fn plain(iface: Interface, status: StatusCode, message: impl Into<String>) -> ApiError {
        let message = message.into();
        match iface {
            Interface::Main => ApiError::Message(status, message),
            Interface::Events => ApiError::Events {
                status,
                code: if status.is_server_error() { 1001 } else { 1003 },
                details: Vec::new(),
                message,
            },
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        match self {
            ApiError::Unauthorized => (
                StatusCode::UNAUTHORIZED,
                Json(json!({"success": false, "message": "API KEY Invalid"})),
            )
                .into_response(),
            ApiError::Campaign(status, message) => (
                status,
                Json(json!({
                    "success": false,
                    "error": {"name": "InvalidRequestException", "message": message},
                })),
            )
                .into_response(),
            ApiError::Message(status, message) => {
                (status, Json(json!({"success": false, "message": message}))).into_response()
            }
            ApiError::Events {
                status,
                code,
                message,
                details,
            } => {
                let mut error = json!({"message": message, "code": code});
                if !details.is_empty() {
                    error["details"] = details
                        .iter()
                        .map(|v| {
                            json!({
                                "message": v.message,
                                "path": event_path(&v.field),
                            })
                        })
                        .collect();
                }
                (status, Json(json!({ "error": error }))).into_response()
            }
        }
    }
}

/// The `path` of an events-interface violation: `data.<key>` is `["data", key]` whatever the
/// key holds (a dot included); every other field is a top-level key of the body.
fn event_path(field: &str) -> Vec<&str> {
    match field.split_once('.') {
        Some(("data", key)) => vec!["data", key],
        _ => vec![field],
    }
}

pub type ApiResult = Result<Response, ApiError>;

/// A success body.
pub fn ok(body: Value) -> ApiResult {
    Ok(Json(body).into_response())
}

/// The key header as sent, in the spellings real clients use: `Api-Key`/`api-key` and
/// `api_key`/`Api_key` (header names compare case-insensitively).
fn key_header(headers: &HeaderMap) -> Option<&HeaderValue> {
    headers.get("api-key").or_else(|| headers.get("api_key"))
}

/// The key, trimmed, when the header is text; `None` when it is absent or is not text.
pub fn api_key(headers: &HeaderMap) -> Option<&str> {
    key_header(headers)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
}

/// Closes the connection a request arrived on without an answer (the `drop` fault).
#[derive(Clone)]
pub struct ConnKill(pub Arc<Notify>);

/// Per-interface context of the gate.
#[derive(Clone)]
pub struct Gate {
    pub emu: Arc<Emu>,
    pub iface: Interface,
}

/// The middleware in front of every API route of an interface.
pub async fn gate(State(gate): State<Gate>, req: Request, next: Next) -> Response {
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
    let at = emu.admit(iface, &parts, &bytes);
    let kill = parts.extensions.get::<ConnKill>().cloned();

    let fault = emu.take_fault(&at, &parts.method, &path);
    if let Some(f) = &fault {
        emu.log_fault(&at, f);
    }
    let mut drop_after = false;
    let mut after_processing = None;
    match fault {
        Some(f) if f.processed => after_processing = Some(f),
        Some(f) => {
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
                let resp = fault_response(iface, parts.uri.path(), &f);
                emu.log_status(&at, resp.status());
                return resp;
            }
        }
        None => {}
    }
    if !emu.current(&at) {
        return stale(iface);
    }

    let path = parts.uri.path().to_string();
    let resp = match authenticate(&emu, iface, &parts.headers) {
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
                Some(_) => {
                    let failed = fault_response(iface, &path, &f);
                    emu.log_status(&at, failed.status());
                    failed
                }
                None => resp,
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
/// `Retry-After`.
fn fault_response(iface: Interface, path: &str, f: &Fault) -> Response {
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
    resp
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
    let campaign = path.starts_with("/apiv1/triggers") || path.starts_with("/apiv1/drips");
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

/// Unknown paths, in the interface's error shape.
pub async fn not_found(State(gate): State<Gate>, method: Method, req: Request) -> Response {
    ApiError::plain(
        gate.iface,
        StatusCode::NOT_FOUND,
        format!("Cannot {method} {}", req.uri().path()),
    )
    .into_response()
}

fn content_type(headers: &HeaderMap) -> String {
    headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// The `charset` a body declares, if any, is UTF-8 (or its subset ASCII): a form in another
/// one (`caf%E9` in ISO-8859-1) would be read as replacement characters and stored so.
fn utf8_charset(headers: &HeaderMap) -> Result<(), String> {
    let raw = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    for param in raw.split(';').skip(1) {
        let Some((name, value)) = param.split_once('=') else {
            continue;
        };
        if !name.trim().eq_ignore_ascii_case("charset") {
            continue;
        }
        let value = value.trim().trim_matches('"');
        if !["utf-8", "utf8", "us-ascii"]
            .iter()
            .any(|ok| value.eq_ignore_ascii_case(ok))
        {
            return Err(format!("Unsupported charset {value}: send UTF-8"));
        }
    }
    Ok(())
}

/// A JSON object body; `None` names what is wrong with it.
pub fn json_object(headers: &HeaderMap, body: &Bytes) -> Result<Map<String, Value>, String> {
    let ct = content_type(headers);
    if !(ct == "application/json" || ct.ends_with("+json")) {
        return Err(if ct.is_empty() {
            "Content-Type must be application/json".to_string()
        } else {
            format!("Unsupported Content-Type {ct}: send application/json")
        });
    }
    utf8_charset(headers)?;
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err("The body must be a JSON object".to_string()),
        Err(e) => Err(format!("Malformed JSON body: {e}")),
    }
}

/// A form body. The spec's endpoints are form-encoded; a JSON object is accepted too (its
/// arrays become lists, `attributes` stays the JSON it is), since clients send one by
/// mistake and the service reads both.
pub async fn form_body(headers: &HeaderMap, body: &Bytes) -> Result<Form, String> {
    let ct = content_type(headers);
    if ct == "application/x-www-form-urlencoded" {
        utf8_charset(headers)?;
    }
    match ct.as_str() {
        "" | "application/x-www-form-urlencoded" => checked(Form::parse(body)),
        "multipart/form-data" => checked(multipart_form(headers, body).await?),
        "application/json" => {
            let obj = json_object(headers, body)?;
            let mut w = crate::form::FormWriter::new();
            for (k, v) in &obj {
                match v {
                    // A JSON-encoded parameter (the attribute filter of 2.14) sent as JSON
                    // itself: its groups are one value, carried as their JSON text.
                    Value::Array(_) | Value::Object(_) if k.eq_ignore_ascii_case("attributes") => {
                        w.field(k, &v.to_string());
                    }
                    // A form cannot carry an empty list, and dropping the key would lift the
                    // filter (a broadcast to everyone): refused, as anything that could
                    // silently widen a broadcast is.
                    // An empty exclusion excludes no one: it cannot widen a broadcast.
                    Value::Array(items) if items.is_empty() && k.starts_with("exclude_") => {}
                    Value::Array(items) if items.is_empty() => {
                        return Err(format!("The {k} field must not be an empty array."));
                    }
                    Value::Array(items) => {
                        let items: Vec<String> = items.iter().map(scalar_text).collect();
                        w.list(k, &items);
                    }
                    // A targeting parameter sent as null would be no filter: everyone.
                    Value::Null if is_targeting(k) => {
                        return Err(format!("The {k} field must not be null."));
                    }
                    Value::Null => {}
                    other => {
                        w.field(k, &scalar_text(other));
                    }
                }
            }
            checked(Form::parse(w.finish().as_bytes()))
        }
        other => Err(format!(
            "Unsupported Content-Type {other}: send application/x-www-form-urlencoded"
        )),
    }
}

/// The fields of a `multipart/form-data` body (Node's `form-data`, a browser's `FormData`),
/// named as in a form body: indexed, `[]` and repeated names. The body was already read
/// under the request body cap. A file part is refused: no parameter of the API is a file,
/// and its name would be read as a field nobody set.
async fn multipart_form(headers: &HeaderMap, body: &Bytes) -> Result<Form, String> {
    let ct = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let boundary = multer::parse_boundary(ct)
        .map_err(|e| format!("Malformed multipart/form-data Content-Type: {e}"))?;
    let whole = body.clone();
    let stream = futures::stream::once(async move { Ok::<Bytes, std::io::Error>(whole) });
    let mut parts = multer::Multipart::new(stream, boundary);
    let malformed = |e: multer::Error| format!("Malformed multipart/form-data body: {e}");
    let mut pairs = Vec::new();
    while let Some(part) = parts.next_field().await.map_err(malformed)? {
        let Some(name) = part.name().map(str::to_string) else {
            return Err("A multipart/form-data part has no name".to_string());
        };
        if let Some(file) = part.file_name() {
            return Err(format!(
                "The {name} part is a file ({file:?}): this endpoint takes fields only"
            ));
        }
        let value = part.text().await.map_err(malformed)?;
        pairs.push((name, value));
    }
    Ok(Form::from_pairs(pairs))
}

/// The broadcast parameters (4.13) that narrow who receives it: a blank or null one would
/// lift its filter. (The exclusions only ever narrow.)
pub fn is_targeting(key: &str) -> bool {
    key.starts_with("include_")
        || matches!(
            key,
            "profile_id"
                | "subscriber_hash"
                | "attributes"
                | "Attributes"
                | "from_date"
                | "to_date"
        )
}

fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A form with no key whose brackets are not an array index: such a key would be read as
/// a field nobody sent (and the one meant left out, which can widen a broadcast).
fn checked(form: Form) -> Result<Form, String> {
    match form.bad_key() {
        Some(key) => Err(Form::bad_key_message(key)),
        None => Ok(form),
    }
}

/// The query string as a form (same array spellings, same refusal of bad indexes).
pub fn query(uri: &axum::http::Uri) -> Result<Form, String> {
    checked(Form::parse(uri.query().unwrap_or("").as_bytes()))
}

/// An optional integer query parameter; a value that is not one is a violation. An integer
/// past the 64-bit range is taken as the range's end, so that the bounds of the parameter
/// give the message (`limit must be between 1 and 500`).
pub fn int_param(q: &Form, name: &str) -> Result<Option<i64>, Violation> {
    use std::num::IntErrorKind;
    match q.text(name) {
        None => Ok(None),
        Some(s) => match s.parse::<i64>() {
            Ok(v) => Ok(Some(v)),
            Err(e) if *e.kind() == IntErrorKind::PosOverflow => Ok(Some(i64::MAX)),
            Err(e) if *e.kind() == IntErrorKind::NegOverflow => Ok(Some(i64::MIN)),
            Err(_) => Err(Violation::new(name, format!("{name} must be an integer"))),
        },
    }
}

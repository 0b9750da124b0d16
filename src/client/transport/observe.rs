//! What a call tells an observer of each request it sends (each attempt, a resend being one
//! of its own): tracing makes a CLIENT span of each, and the headers the observer returns
//! (the span's trace context) go out with that request.
//!
//! A call without an observer pays one `Option` check per attempt; the observer rides on
//! the call's [`CallOptions`](super::CallOptions), so the resource files never see it.

use reqwest::header::{HeaderName, HeaderValue};

/// One request about to be sent.
#[derive(Debug)]
pub struct Attempt<'a> {
    pub method: &'a str,
    /// The whole URL, the key blanked in every spelling it could have there.
    pub url: &'a str,
    pub host: &'a str,
    pub port: u16,
    /// 0 for the first request of the call, then 1, 2, ... for each resend.
    pub resend_count: u32,
}

/// How one request ended.
#[derive(Debug)]
pub struct Ended {
    /// The answer's status, when one came.
    pub status: Option<u16>,
    /// Why it failed (the status as text for 4xx and 5xx, `timeout`, `connect_error`, ...),
    /// or `None` when it succeeded: the `error.type` of OpenTelemetry's HTTP conventions.
    pub error_type: Option<String>,
    /// The HTTP version of the answer (`"1.1"`, `"2"`), or of the request when none came.
    pub protocol: &'static str,
}

/// Told of each request a call sends, and of what the call logs.
pub trait Observer: Send + Sync + std::fmt::Debug {
    /// A request is about to be sent; `None` when the observer has nothing to follow it by
    /// (it failed: an observer never changes or fails a call).
    fn started(&self, attempt: &Attempt<'_>) -> Option<Box<dyn Observed>>;
    /// Whether [`started`](Observer::started) is to be told of each request: a bulk call's
    /// observer follows only what the call logs (its requests carry the call's own trace
    /// context as headers, and a batch of thousands pays nothing per request).
    fn follows_requests(&self) -> bool {
        true
    }
    /// A record the call logs on the `pushwire` logger, which the observer emits in the
    /// call's trace context: an async call runs on an I/O thread, where no context of the
    /// caller's is current.
    fn log(&self, level: log::Level, message: &str);
}

/// One request being followed.
pub trait Observed: Send {
    /// Headers to send with the request (its trace context).
    fn headers(&self) -> &[(HeaderName, HeaderValue)];
    /// The request ended.
    fn ended(self: Box<Self>, ended: Ended);
}

/// `HTTP/1.1` as the conventions' `network.protocol.version` writes it.
pub(super) fn protocol_version(version: reqwest::Version) -> &'static str {
    match version {
        reqwest::Version::HTTP_09 => "0.9",
        reqwest::Version::HTTP_10 => "1.0",
        reqwest::Version::HTTP_2 => "2",
        reqwest::Version::HTTP_3 => "3",
        _ => "1.1",
    }
}

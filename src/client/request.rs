//! A call this release has no method for: any method and path of either interface, sent
//! as the typed calls are (the key, retries by idempotency, the deadline, logs, tracing and
//! outcome-unknown errors), to the configured roots only.

use crate::message;
use crate::validate::FIELD;
use std::borrow::Cow;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, StatusCode};

use super::transport::{Body, Call, Idempotency, Iface, Transport};
use super::{Error, Result};

/// A request as its caller describes it.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: Method,
    /// As the spec writes it after `{base_url}` or `{events_url}` (`/apiv1/drips`), or a
    /// whole URL on that root.
    pub path: String,
    pub iface: Iface,
    /// Query parameters, encoded (`name[0]` for a list's items, as the spec's forms).
    pub query: Vec<(String, String)>,
    pub headers: Vec<(HeaderName, HeaderValue)>,
    pub body: Body,
    /// Whether sending it twice acts once: given, or from the method (GET, HEAD, OPTIONS,
    /// PUT and DELETE do; POST and PATCH do not, so they are not resent once they may have
    /// been received).
    pub idempotent: Option<bool>,
}

/// The answer: its status, headers and body as they came.
pub type Answer = (StatusCode, HeaderMap, bytes::Bytes);

impl Request {
    /// The call it makes on `t`, or a validation error naming what is wrong (nothing sent).
    pub fn call(&self, t: &Transport) -> Result<Call> {
        let prefix = self.iface.prefix();
        let root = match self.iface {
            Iface::Main => "base_url",
            Iface::Events => "events_url",
        };
        if self.path.contains(['?', '#']) {
            return Err(Error::validation(
                "path",
                message![
                    FIELD,
                    format!(
                        " must not carry a query or a fragment ({:?}): pass query=",
                        self.path
                    )
                ],
            ));
        }
        let absolute = self.path.starts_with("//") || self.path.contains("://");
        let path: Cow<'_, str> = if absolute {
            match t.path_on_root(self.iface, &self.path) {
                Some(path) => Cow::Owned(path),
                None => {
                    return Err(Error::validation(
                        "path",
                        message![
                            FIELD,
                            format!(
                                " {:?} is not on the client's {root}: the key goes to the \
                                 configured hosts only; pass a path such as {prefix}/segments",
                                self.path
                            )
                        ],
                    ))
                }
            }
        } else {
            Cow::Borrowed(&self.path)
        };
        let rest = path
            .strip_prefix(prefix)
            .filter(|rest| rest.is_empty() || rest.starts_with('/'));
        let Some(rest) = rest else {
            return Err(Error::validation(
                "path",
                message![
                    FIELD,
                    format!(
                        " must begin with {prefix}, as the spec writes the {} interface's \
                     paths after {{{root}}}: {:?}",
                        if self.iface == Iface::Main {
                            "main"
                        } else {
                            "events"
                        },
                        self.path
                    )
                ],
            ));
        };
        if let Some(c) = self.path.chars().find(|c| c.is_control()) {
            // The URL parser would drop a tab, CR or LF without a word.
            return Err(Error::validation(
                "path",
                message![
                    FIELD,
                    format!(" must not hold control characters ({c:?}): {:?}", self.path)
                ],
            ));
        }
        if leaves_its_root(rest) {
            return Err(Error::validation(
                "path",
                message![
                    FIELD,
                    format!(
                        " must not hold '.' or '..' segments, in any spelling a server reads \
                         as one (percent-encoded, backslashes, Unicode full stops): {:?}",
                        self.path
                    )
                ],
            ));
        }
        let reads = matches!(self.method, Method::GET | Method::HEAD);
        if reads && !matches!(self.body, Body::Empty) {
            return Err(Error::validation(
                "body",
                message![
                    format!("a {} sends no ", self.method),
                    FIELD,
                    ": pass query="
                ],
            ));
        }
        let safe = self.idempotent.unwrap_or(matches!(
            self.method,
            Method::GET | Method::HEAD | Method::OPTIONS | Method::PUT | Method::DELETE
        ));
        let call = Call {
            iface: self.iface,
            method: self.method.clone(),
            path: rest.to_string(),
            query: self
                .query
                .iter()
                .map(|(k, v)| (Cow::Owned(k.clone()), v.clone()))
                .collect(),
            body: self.body.clone(),
            idempotency: if safe {
                Idempotency::Safe
            } else {
                Idempotency::Unsafe
            },
            headers: self.headers.clone(),
        };
        // The URL as it is sent, after the URL parser's own normalising: under the root, or
        // not sent (the key goes to the configured root alone).
        if !t.stays_on_root(&call) {
            return Err(Error::validation(
                "path",
                message![
                    FIELD,
                    format!(
                        " {:?} leaves the client's {root} once read as a URL: the key goes to \
                         the configured root only",
                        self.path
                    )
                ],
            ));
        }
        Ok(call)
    }
}

/// Whether a path on a root could reach, as a server or a proxy reads it, a place outside
/// that root: a `.` or `..` segment once percent-decoded (as often as decoding changes it: a
/// server behind a proxy may decode twice), with backslashes and encoded slashes read as
/// slashes and the full stops and slashes Unicode writes otherwise (U+FF0E, U+FF0F, ...)
/// read as theirs, as a server that normalises text reads them.
fn leaves_its_root(path: &str) -> bool {
    const SLASHES: [char; 6] = ['/', '\\', '\u{ff0f}', '\u{ff3c}', '\u{2215}', '\u{29f5}'];
    const DOTS: [char; 6] = [
        '.', '\u{ff0e}', '\u{2024}', '\u{fe52}', '\u{3002}', '\u{ff61}',
    ];
    let mut text = std::borrow::Cow::Borrowed(path);
    // Four decodings deep at most: text encoded deeper is refused as it is.
    for depth in 0.. {
        let decoded = percent_encoding::percent_decode_str(&text).decode_utf8_lossy();
        if decoded == text {
            break;
        }
        if depth == 4 {
            return true;
        }
        text = std::borrow::Cow::Owned(decoded.into_owned());
    }
    text.split(SLASHES).any(|segment| {
        let dots = segment.chars().take_while(|c| DOTS.contains(c)).count();
        (1..=2).contains(&dots) && dots == segment.chars().count()
    })
}

/// Sends `request` (with retries as its idempotency allows); the first successful answer.
/// A failure is the error a typed call would raise for it.
pub async fn send(t: &Transport, request: &Request) -> Result<Answer> {
    let call = request.call(t)?;
    t.send_raw(&call).await
}

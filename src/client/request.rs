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
        if rest
            .split('/')
            .any(|segment| segment == "." || segment == "..")
        {
            return Err(Error::validation(
                "path",
                message![
                    FIELD,
                    format!(" must not hold '.' or '..' segments: {:?}", self.path)
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
        Ok(Call {
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
        })
    }
}

/// Sends `request` (with retries as its idempotency allows); the first successful answer.
/// A failure is the error a typed call would raise for it.
pub async fn send(t: &Transport, request: &Request) -> Result<Answer> {
    let call = request.call(t)?;
    t.send_raw(&call).await
}

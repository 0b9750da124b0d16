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
            return Err(path_refused(format!(
                " must not carry a query or a fragment ({:?}): pass query=",
                self.path
            )));
        }
        let absolute = self.path.starts_with("//") || self.path.contains("://");
        let path: Cow<'_, str> = if absolute {
            match t.path_on_root(self.iface, &self.path) {
                Some(path) => Cow::Owned(path),
                None => {
                    return Err(path_refused(format!(
                        " {:?} is not on the client's {root}: the key goes to the \
                                 configured hosts only; pass a path such as {prefix}/segments",
                        self.path
                    )))
                }
            }
        } else {
            Cow::Borrowed(&self.path)
        };
        let rest = path
            .strip_prefix(prefix)
            .filter(|rest| rest.is_empty() || rest.starts_with('/'));
        let Some(rest) = rest else {
            return Err(path_refused(format!(
                " must begin with {prefix}, as the spec writes the {} interface's \
                     paths after {{{root}}}: {:?}",
                if self.iface == Iface::Main {
                    "main"
                } else {
                    "events"
                },
                self.path
            )));
        };
        if let Some(c) = self.path.chars().find(|c| c.is_control()) {
            // The URL parser would drop a tab, CR or LF without a word.
            return Err(path_refused(format!(
                " must not hold control characters ({c:?}): {:?}",
                self.path
            )));
        }
        if leaves_its_root(rest) {
            return Err(path_refused(format!(
                " must not hold '.' or '..' segments, in any spelling a server reads \
                         as one (percent-encoded, backslashes, Unicode full stops): {:?}",
                self.path
            )));
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
            return Err(path_refused(format!(
                " {:?} leaves the client's {root} once read as a URL: the key goes to \
                         the configured root only",
                self.path
            )));
        }
        Ok(call)
    }
}

/// The path refused: `words` after its name.
fn path_refused(words: String) -> Error {
    Error::validation("path", message![FIELD, words])
}

/// Whether a path on a root could reach, as a server or a proxy reads it, a place outside
/// that root. The path is read as the most lenient server would: percent-decoded as often as
/// decoding changes it (a server behind a proxy may decode twice), then NFKC-normalised (so
/// `．．`, `‥` and `﹨` are `..` and `\`), backslashes read as slashes; a segment that is
/// dots alone, once its `;parameters` (`..;`) and trailing spaces are dropped, goes up. Text
/// that decodes to no UTF-8 (an overlong `%c0%ae`), IIS's `%u002e` and a decoded control
/// character (`%00`, where a server may end the path) are refused as they are: some servers
/// read them as dots or ends.
fn leaves_its_root(path: &str) -> bool {
    // Slashes NFKC leaves as they are.
    const SLASHES: [char; 4] = ['/', '\\', '\u{2215}', '\u{29f5}'];
    let mut text = path.to_string();
    // Four decodings deep at most: text encoded deeper is refused as it is.
    for depth in 0.. {
        let Ok(decoded) = percent_encoding::percent_decode_str(&text).decode_utf8() else {
            return true;
        };
        if decoded == text {
            break;
        }
        if depth == 4 {
            return true;
        }
        text = decoded.into_owned();
    }
    let iis = text.match_indices("%u").any(|(i, _)| {
        let hex = text[i + 2..].chars().take(4);
        hex.clone().count() == 4 && hex.into_iter().all(|c| c.is_ascii_hexdigit())
    });
    let text = icu_normalizer::ComposingNormalizerBorrowed::new_nfkc().normalize(&text);
    iis || text.chars().any(char::is_control)
        || text.split(SLASHES).any(|segment| {
            let name = segment.split(';').next().unwrap_or_default();
            let name = name.trim_end_matches(char::is_whitespace);
            !name.is_empty() && name.chars().all(|c| matches!(c, '.' | '\u{3002}'))
        })
}

/// Sends `request` (with retries as its idempotency allows); the first successful answer.
/// A failure is the error a typed call would raise for it.
pub async fn send(t: &Transport, request: &Request) -> Result<Answer> {
    let call = request.call(t)?;
    t.send_raw(&call).await
}

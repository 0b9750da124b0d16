//! One attempt: the request built and sent, and its answer read within
//! `max_response_size`, never buffering past it.

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, CONTENT_TYPE};
use reqwest::{StatusCode, Url, Version};

use super::call::{Body, Call, Iface};
use super::options::CallOptions;
use super::pool::Transport;
use super::urls::url_of;
use crate::operations::EVENTS_TRACK;

/// How an attempt failed: the HTTP stack, or an answer larger than `max_response_size`.
#[derive(Debug)]
pub(super) enum AttemptError {
    Http(reqwest::Error),
    TooLarge {
        status: StatusCode,
        /// Its `Content-Length`, when that alone was over the bound (nothing was read).
        announced: Option<u64>,
    },
}

impl From<reqwest::Error> for AttemptError {
    fn from(e: reqwest::Error) -> Self {
        AttemptError::Http(e)
    }
}

impl Transport {
    /// The URL `call` is sent to, with its query and any extra query parameters.
    pub(super) fn request_url(&self, call: &Call, options: Option<&CallOptions>) -> Url {
        let root = match call.iface {
            Iface::Main => &self.main_root,
            Iface::Events => match &self.events_root {
                Some(root) => root,
                None => &self.main_root,
            },
        };
        let mut url = match &self.events_endpoint {
            Some(url) if call.iface == Iface::Events && call.path == EVENTS_TRACK.on_root() => {
                url.clone()
            }
            _ => url_of(root, &call.path),
        };
        let extra = options.map(CallOptions::query_pairs).unwrap_or_default();
        if !call.query.is_empty() || !extra.is_empty() {
            let mut pairs = url.query_pairs_mut();
            pairs.extend_pairs(call.query.iter().map(|(k, v)| (k.as_ref(), v.as_str())));
            pairs.extend_pairs(extra.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        }
        url
    }

    /// Whether the URL `call` is sent to lies under its interface's root: the root's origin,
    /// and its path or one below it, once the URL parser has normalised the call's path
    /// (`%2e%2e` and `\\` become `..` and `/` there).
    pub(crate) fn stays_on_root(&self, call: &Call) -> bool {
        let root = match call.iface {
            Iface::Main => &self.main_root,
            Iface::Events => self.events_root.as_ref().unwrap_or(&self.main_root),
        };
        let url = self.request_url(call, None);
        let under = url
            .path()
            .strip_prefix(root.path())
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'));
        under && url.origin() == root.origin()
    }

    /// One request of `call`, its answer read; `version` is set to the answer's HTTP
    /// version.
    pub(super) async fn attempt(
        &self,
        call: &Call,
        remaining: Duration,
        options: Option<&CallOptions>,
        traced: &[(HeaderName, HeaderValue)],
        version: &mut Version,
    ) -> std::result::Result<(StatusCode, HeaderMap, bytes::Bytes), AttemptError> {
        let url = self.request_url(call, options);
        let mut req = self
            .http
            .request(call.method.clone(), url)
            .timeout(remaining);
        req = match &call.body {
            Body::Empty => req,
            Body::Json(b) => req.header(CONTENT_TYPE, "application/json").body(b.clone()),
            Body::Form(f) => req
                .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
                .body(f.clone()),
        };
        for (name, value) in &call.headers {
            req = req.header(name.clone(), value.clone());
        }
        if let Some(options) = options {
            for (name, value) in &options.headers {
                req = req.header(name.clone(), value.clone());
            }
        }
        // The caller's own trace headers (`extra_headers`) win: a header sent twice would
        // be two contexts, which W3C Trace Context reads as none.
        let given = |name: &HeaderName| {
            call.headers.iter().any(|(n, _)| n == name)
                || options.is_some_and(|o| o.headers.iter().any(|(n, _)| n == name))
        };
        for (name, value) in traced.iter().filter(|(name, _)| !given(name)) {
            req = req.header(name.clone(), value.clone());
        }
        let mut resp = req.send().await?;
        let status = resp.status();
        *version = resp.version();
        // Moved out, not copied: a failure reads them (Retry-After), and so does a refusal
        // answered 2xx (its error carries them); the body is read without them (reqwest's
        // `content_length` is the body's own size hint).
        let headers = std::mem::take(resp.headers_mut());
        let limit = self.limits.max_response_size;
        let too_large = |announced| AttemptError::TooLarge { status, announced };
        // Returning early drops `resp` with its body unread: the connection is closed,
        // never returned to the pool, and nothing past the bound is read or buffered.
        let announced = resp.content_length();
        if announced.is_some_and(|n| n > limit) {
            return Err(too_large(announced));
        }
        // Read part by part, the bound checked before each is kept. Written here rather
        // than with http-body-util's `Limited`: reqwest's `Response` gives its parts, not
        // its body, and a one-part answer (most of them) is kept without a copy. The parts
        // are kept as they came and joined once at the end: what is held never passes the
        // bound, where a growing buffer would hold its old and new copies at once.
        let Some(first) = resp.chunk().await? else {
            return Ok((status, headers, bytes::Bytes::new()));
        };
        let mut total = first.len() as u64;
        if total > limit {
            return Err(too_large(None));
        }
        let Some(second) = resp.chunk().await? else {
            return Ok((status, headers, first));
        };
        let mut parts = vec![first];
        let mut next = Some(second);
        while let Some(part) = next {
            total += part.len() as u64;
            if total > limit {
                return Err(too_large(None));
            }
            parts.push(part);
            next = resp.chunk().await?;
        }
        let mut body = bytes::BytesMut::with_capacity(total as usize);
        for part in parts {
            body.extend_from_slice(&part);
        }
        Ok((status, headers, body.freeze()))
    }
}

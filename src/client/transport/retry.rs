//! A call sent: attempts with retries and backoff, all within one deadline that also
//! bounds the wait for a connection slot, and a successful answer decoded.

use crate::message;
use crate::validate::FIELD;
use std::time::{Duration, Instant};

use reqwest::header::HeaderMap;
use reqwest::{Method, StatusCode};
use serde::de::DeserializeOwned;

use crate::client::error::{decoded_without_secret, Error, Result};

use super::call::{Call, Idempotency, Iface};
use super::envelope::{decode, Envelope};
use super::failure::{
    api_failure, connection_message, header_pairs, redirect_message, timeout_error, too_large,
};
use super::observe::{protocol_version, Attempt, Ended, Observed, Observer};
use super::options::{emit_log, CallOptions, RawAnswer};
use super::pool::Transport;
use super::read::AttemptError;

impl Transport {
    /// Sends `call` (with retries) and decodes a successful answer into `R`.
    pub async fn send<R: DeserializeOwned + Envelope>(&self, call: &Call) -> Result<R> {
        let (status, headers, bytes) = self.send_raw(call).await?;
        // A byte-order mark some servers put before the JSON.
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
        let write = call.method != Method::GET;
        decode::<R>(call.iface, status, bytes, write).map_err(|e| {
            // Described again from the body without the key: a message quotes an excerpt,
            // which could cut the key where a whole-key replacement would miss it.
            let e = match decode::<R>(call.iface, status, &self.without_secret(bytes), write) {
                Err(redacted) => redacted,
                Ok(_) => e,
            };
            let e = match e {
                Error::Api(mut failure) => {
                    failure.headers = header_pairs(&headers);
                    Error::Api(failure)
                }
                other => other,
            };
            self.redacted(e)
        })
    }

    /// `body` with the API key blanked wherever it appears in it.
    fn without_secret<'b>(&self, body: &'b [u8]) -> std::borrow::Cow<'b, [u8]> {
        let Some(secret) = self.secret.as_deref() else {
            return std::borrow::Cow::Borrowed(body);
        };
        let needle = secret.as_bytes();
        if !body.windows(needle.len()).any(|w| w == needle) {
            return std::borrow::Cow::Borrowed(body);
        }
        let text = String::from_utf8_lossy(body).replace(secret, crate::client::error::REDACTED);
        std::borrow::Cow::Owned(text.into_bytes())
    }

    /// `text` (a URL, a header's value) with the API key blanked in every spelling it can
    /// have there.
    fn shown(&self, text: &str) -> String {
        match decoded_without_secret(text, self.secret.as_deref()) {
            (shown, true) => shown,
            _ => text.to_string(),
        }
    }

    /// An answer's headers as text, the key blanked wherever one echoes it.
    fn shown_headers(&self, headers: &HeaderMap) -> Vec<(String, String)> {
        let mut pairs = header_pairs(headers);
        for (_, value) in &mut pairs {
            *value = self.shown(value);
        }
        pairs
    }

    /// `err` with the API key blanked wherever the service's answer echoed it.
    fn redacted(&self, err: Error) -> Error {
        match (err, &self.secret) {
            (Error::Api(mut failure), Some(secret)) => {
                failure.redact(secret);
                Error::Api(failure)
            }
            (err, _) => err,
        }
    }

    /// Sends `call` with retries; the status, headers and body of the first successful
    /// answer.
    pub async fn send_raw(&self, call: &Call) -> Result<(StatusCode, HeaderMap, bytes::Bytes)> {
        if call.iface == Iface::Events && self.events_root.is_none() {
            return Err(Error::validation(
                "events_url",
                message![
                    "no ",
                    FIELD,
                    ": pass ",
                    FIELD,
                    "= or set PUSHWIRE_EVENTS_URL to track events"
                ],
            ));
        }
        let options = CallOptions::current();
        let options = options.as_deref();
        let merged = match options {
            Some(options) => options.applied(call)?,
            None => None,
        };
        let call = merged.as_ref().unwrap_or(call);
        let started = Instant::now();
        let deadline = started.checked_add(self.limits.timeout).unwrap_or(started);
        // One slot for the call's requests, one at a time; let go during a backoff wait,
        // when no request is in flight.
        let mut slot = match &self.slots {
            None => None,
            Some(slots) => {
                match tokio::time::timeout_at(deadline.into(), slots.clone().acquire_owned()).await
                {
                    Ok(slot) => slot.ok(),
                    Err(_) => {
                        return Err(Error::Timeout {
                            message: format!(
                                "{} {} did not start within the timeout of {:.1} s: all \
                                 max_connections={} connections of the client were busy",
                                call.method,
                                call.shown_path(),
                                self.limits.timeout.as_secs_f64(),
                                self.max_connections
                            ),
                            outcome_unknown: false,
                            source: None,
                        })
                    }
                }
            }
        };
        let mut retries = 0u32;
        loop {
            let remaining = deadline.saturating_duration_since(Instant::now());
            if remaining.is_zero() {
                return Err(timeout_error(call, self.limits.timeout, false, None));
            }
            let mut version = reqwest::Version::HTTP_11;
            let observed = options
                .and_then(|o| o.observer.as_deref())
                .filter(|observer| observer.follows_requests())
                .and_then(|observer| self.observe(observer, call, options, retries));
            let traced = observed.as_ref().map_or(&[][..], |o| o.headers());
            let outcome = self
                .attempt(call, remaining, options, traced, &mut version)
                .await;
            if let Some(observed) = observed {
                observed.ended(ended(&outcome, version));
            }
            let (err, wait_hint, retryable) = match outcome {
                Ok((status, headers, body)) if status.is_success() => {
                    log_call(call, status.as_u16(), started, retries);
                    if let Some(options) = options.filter(|o| o.raw.is_some()) {
                        options.keep_raw(|| RawAnswer {
                            status: status.as_u16(),
                            http_version: version_name(version),
                            headers: self.shown_headers(&headers),
                            body: bytes::Bytes::copy_from_slice(&self.without_secret(&body)),
                            method: call.method.to_string(),
                            url: self.shown(self.request_url(call, Some(options)).as_str()),
                            elapsed: started.elapsed(),
                            retries,
                        });
                    }
                    return Ok((status, headers, body));
                }
                Ok((status, headers, body)) => {
                    let body = self.without_secret(&body);
                    let mut failure = api_failure(call.iface, status, &headers, &body);
                    if status.is_redirection() {
                        failure.message =
                            redirect_message(status, &headers, self.secret.as_deref());
                    }
                    if let Some(secret) = &self.secret {
                        failure.redact(secret);
                    }
                    // A server or gateway failure may come after the service acted on a
                    // write; any other refusal is an answer.
                    failure.outcome_unknown =
                        call.method != Method::GET && matches!(status.as_u16(), 500 | 502 | 504);
                    log_call(call, status.as_u16(), started, retries);
                    let retryable = match call.idempotency {
                        Idempotency::Safe => {
                            status == StatusCode::REQUEST_TIMEOUT
                                || status == StatusCode::TOO_MANY_REQUESTS
                                || status.is_server_error()
                        }
                        Idempotency::Unsafe => {
                            status == StatusCode::TOO_MANY_REQUESTS
                                || (status == StatusCode::SERVICE_UNAVAILABLE
                                    && failure.retry_after.is_some())
                        }
                    };
                    let hint = failure.retry_after;
                    (Error::Api(Box::new(failure)), hint, retryable)
                }
                Err(AttemptError::TooLarge { status, announced }) => {
                    // Not retried: the same request would most likely get the same answer.
                    log_call(call, status.as_u16(), started, retries);
                    return Err(too_large(
                        call,
                        status,
                        announced,
                        self.limits.max_response_size,
                    ));
                }
                Err(AttemptError::Http(e)) => {
                    // Only a failed connect proves the request never left.
                    let not_sent = e.is_connect();
                    let outcome_unknown = call.method != Method::GET && !not_sent;
                    emit_log(log::Level::Debug, || {
                        format!(
                            "{} {} failed after {:.1} ms: {}",
                            call.method,
                            call.shown_path(),
                            started.elapsed().as_secs_f64() * 1e3,
                            e
                        )
                    });
                    let retryable = match call.idempotency {
                        Idempotency::Safe => true,
                        Idempotency::Unsafe => not_sent,
                    };
                    let message = connection_message(call, &e, outcome_unknown);
                    let timed_out = e.is_timeout();
                    let source = Some(std::sync::Arc::new(e) as crate::client::error::Cause);
                    let err = if timed_out {
                        timeout_error(call, self.limits.timeout, outcome_unknown, source)
                    } else {
                        Error::Connection {
                            message,
                            outcome_unknown,
                            source,
                        }
                    };
                    (err, None, retryable)
                }
            };
            if !retryable || retries >= self.limits.max_retries {
                return Err(err);
            }
            let wait = self.backoff(retries, wait_hint);
            if Instant::now() + wait >= deadline {
                return Err(err);
            }
            emit_log(log::Level::Info, || {
                format!(
                    "retrying {} {} in {:.0} ms (retry {} of {}): {}",
                    call.method,
                    call.shown_path(),
                    wait.as_secs_f64() * 1e3,
                    retries + 1,
                    self.limits.max_retries,
                    err
                )
            });
            drop(slot.take());
            tokio::time::sleep(wait).await;
            if let Some(slots) = &self.slots {
                match tokio::time::timeout_at(deadline.into(), slots.clone().acquire_owned()).await
                {
                    Ok(s) => slot = s.ok(),
                    // No slot free again before the deadline: the call ran out of time
                    // waiting, which the last attempt's error would not say.
                    Err(_) => {
                        return Err(Error::Timeout {
                            message: format!(
                                "{} {} did not finish within the timeout of {:.1} s: after {err}, \
                                 all max_connections={} connections of the client stayed busy \
                                 until then",
                                call.method,
                                call.shown_path(),
                                self.limits.timeout.as_secs_f64(),
                                self.max_connections
                            ),
                            outcome_unknown: err.outcome_unknown(),
                            // What the last attempt ended in, below the time it ran out of.
                            source: Some(std::sync::Arc::new(err.clone())),
                        });
                    }
                }
            }
            retries += 1;
        }
    }

    /// `observer` told of the request about to be sent.
    fn observe(
        &self,
        observer: &dyn Observer,
        call: &Call,
        options: Option<&CallOptions>,
        resend_count: u32,
    ) -> Option<Box<dyn Observed>> {
        let url = self.request_url(call, options);
        observer.started(&Attempt {
            method: call.method.as_str(),
            url: &self.shown(url.as_str()),
            host: url.host_str().unwrap_or_default(),
            port: url.port_or_known_default().unwrap_or_default(),
            resend_count,
        })
    }

    /// The wait before retry number `retries + 1`: the service's `Retry-After` when given,
    /// else `base * 2^retries` capped, with jitter so clients do not retry in lockstep.
    fn backoff(&self, retries: u32, retry_after: Option<f64>) -> Duration {
        if let Some(secs) = retry_after {
            return Duration::from_secs_f64(secs.clamp(0.0, 600.0));
        }
        let exp = self
            .backoff_base
            .saturating_mul(1u32 << retries.min(16))
            .min(self.backoff_max);
        let jitter: f64 = 0.5 + fastrand::f64() * 0.5;
        exp.mul_f64(jitter)
    }
}

/// How an attempt ended, for its observer.
fn ended(
    outcome: &std::result::Result<(StatusCode, HeaderMap, bytes::Bytes), AttemptError>,
    version: reqwest::Version,
) -> Ended {
    let (status, error_type) = match outcome {
        Ok((status, _, _)) => (
            Some(status.as_u16()),
            (status.is_client_error() || status.is_server_error())
                .then(|| status.as_u16().to_string()),
        ),
        Err(AttemptError::TooLarge { status, .. }) => {
            (Some(status.as_u16()), Some("response_too_large".into()))
        }
        Err(AttemptError::Http(e)) => {
            let kind = if e.is_timeout() {
                "timeout"
            } else if e.is_connect() {
                "connect_error"
            } else {
                "connection_error"
            };
            (None, Some(kind.into()))
        }
    };
    Ended {
        status,
        error_type,
        protocol: protocol_version(version),
    }
}

/// How `with_raw_response` names an HTTP version: as Python's HTTP clients do.
fn version_name(version: reqwest::Version) -> &'static str {
    match version {
        reqwest::Version::HTTP_09 => "HTTP/0.9",
        reqwest::Version::HTTP_10 => "HTTP/1.0",
        reqwest::Version::HTTP_2 => "HTTP/2",
        reqwest::Version::HTTP_3 => "HTTP/3",
        _ => "HTTP/1.1",
    }
}

fn log_call(call: &Call, status: u16, started: Instant, retries: u32) {
    emit_log(log::Level::Debug, || {
        format!(
            "{} {} -> {} in {:.1} ms ({} retries)",
            call.method,
            call.shown_path(),
            status,
            started.elapsed().as_secs_f64() * 1e3,
            retries
        )
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::transport::Config;

    #[tokio::test]
    async fn a_call_that_finds_no_free_connection_within_its_timeout_sends_nothing() {
        let mut cfg = Config::new("k", "http://127.0.0.1:9", "").with_max_connections(Some(1));
        cfg.timeout = Duration::from_millis(100);
        // Every slot taken, as by a call in flight.
        let busy = cfg
            .slots
            .as_ref()
            .expect("slots")
            .get()
            .acquire_owned()
            .await;
        let t = Transport::new(&cfg).expect("transport");
        let started = Instant::now();
        let err = t.send_raw(&Call::get("/segments")).await.unwrap_err();
        assert!(started.elapsed() >= Duration::from_millis(100));
        match err {
            Error::Timeout {
                message,
                outcome_unknown,
                ..
            } => {
                assert!(!outcome_unknown, "nothing was sent");
                assert!(message.contains("max_connections=1"), "{message}");
                assert!(message.contains("did not start"), "{message}");
            }
            other => panic!("expected a timeout, got {other:?}"),
        }
        drop(busy);
    }
}

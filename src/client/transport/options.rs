//! What one call adds to its request beyond its validated arguments (extra headers, query
//! parameters and body fields), and, when asked, the raw answer it got.
//!
//! The options travel with the call's future as a tokio task-local, scoped around the
//! operation by the caller ([`CallOptions::scope`]) and read by [`Transport::send_raw`]:
//! the resource modules, which describe calls, need not know of them, and a call without
//! options pays one task-local lookup per request.
//!
//! [`Transport::send_raw`]: super::pool::Transport

use crate::message;
use crate::validate::FIELD;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::header::{HeaderName, HeaderValue};
use serde_json::{Map, Value};

use crate::client::error::{Error, Result};
use crate::form::{Form, FormWriter};

use super::call::{Body, Call};
use super::observe::Observer;

tokio::task_local! {
    static OPTIONS: Arc<CallOptions>;
}

/// A call's extras and its raw-answer slot.
#[derive(Debug, Default)]
pub struct CallOptions {
    /// Sent on every attempt, after the client's own headers (checked by
    /// [`extra_header`]).
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// Appended to the call's query string.
    pub query: Vec<(String, Value)>,
    /// Merged into the call's body, in its encoding.
    pub body: Map<String, Value>,
    /// Filled with the last attempt's answer when asked (`with_raw_response`).
    pub raw: Option<Mutex<Option<RawAnswer>>>,
    /// Told of each request the call sends (tracing).
    pub observer: Option<Arc<dyn Observer>>,
}

/// An answer as it came, for `with_raw_response`: the key blanked wherever it shows.
#[derive(Debug, Clone)]
pub struct RawAnswer {
    pub status: u16,
    pub http_version: &'static str,
    pub headers: Vec<(String, String)>,
    pub body: bytes::Bytes,
    pub method: String,
    pub url: String,
    pub elapsed: Duration,
    pub retries: u32,
}

impl CallOptions {
    /// Runs `fut` with these options applied to every request it sends.
    pub async fn scope<F: Future>(self: Arc<Self>, fut: F) -> F::Output {
        OPTIONS.scope(self, fut).await
    }

    /// Runs `fut`, a request a call makes of its own accord (the site's segments, read to
    /// check a broadcast's), under the call's observer alone: its extras and its raw answer
    /// are those of the request the caller asked for.
    pub async fn own_request<F: Future>(fut: F) -> F::Output {
        let observer = Self::current().and_then(|o| o.observer.clone());
        let options = CallOptions {
            observer,
            ..CallOptions::default()
        };
        Arc::new(options).scope(fut).await
    }

    /// The options of the call running on this task, if it has any.
    pub(super) fn current() -> Option<Arc<CallOptions>> {
        OPTIONS.try_with(Arc::clone).ok()
    }

    /// The raw answer kept for `with_raw_response`, taken.
    pub fn take_raw(&self) -> Option<RawAnswer> {
        self.raw
            .as_ref()
            .and_then(|slot| slot.lock().map_or(None, |mut s| s.take()))
    }

    pub(super) fn keep_raw(&self, answer: impl FnOnce() -> RawAnswer) {
        if let Some(slot) = &self.raw {
            if let Ok(mut s) = slot.lock() {
                *s = Some(answer());
            }
        }
    }

    /// `call` with the extra query parameters and body fields merged in, or a validation
    /// error naming the first extra that would replace what the call itself sends.
    pub(super) fn applied(&self, call: &Call) -> Result<Option<Call>> {
        if self.query.is_empty() && self.body.is_empty() {
            return Ok(None);
        }
        let mut merged = call.clone();
        for (key, value) in &self.query {
            if call
                .query
                .iter()
                .any(|(k, _)| base_name(k) == base_name(key))
            {
                return Err(replaces("extra_query", key));
            }
            form_fields(&mut FormWriter::new(), key, value)
                .map_err(|m| form_refusal("extra_query", key, m))?;
        }
        if !self.body.is_empty() {
            merged.body = self.merged_body(&call.body)?;
        }
        Ok(Some(merged))
    }

    fn merged_body(&self, body: &Body) -> Result<Body> {
        match body {
            Body::Empty => Err(Error::validation(
                "extra_body",
                message![
                    FIELD,
                    " is for calls that send a body; this one is a GET: use extra_query"
                ],
            )),
            Body::Json(bytes) => {
                let mut fields: Map<String, Value> = serde_json::from_slice(bytes)
                    .map_err(|e| Error::Config(format!("the call's own body is not JSON: {e}")))?;
                for (key, value) in &self.body {
                    if fields.contains_key(key) {
                        return Err(replaces("extra_body", key));
                    }
                    fields.insert(key.clone(), value.clone());
                }
                let out = serde_json::to_vec(&fields).unwrap_or_default();
                Ok(Body::Json(out.into()))
            }
            Body::Form(bytes) => {
                let sent = Form::parse(bytes);
                for key in self.body.keys() {
                    if sent.keys().any(|k| k == base_name(key)) {
                        return Err(replaces("extra_body", key));
                    }
                }
                let mut writer = FormWriter::new();
                for (key, value) in &self.body {
                    form_fields(&mut writer, key, value)
                        .map_err(|m| form_refusal("extra_body", key, m))?;
                }
                let extra = writer.finish();
                let mut out = Vec::with_capacity(bytes.len() + 1 + extra.len());
                out.extend_from_slice(bytes);
                if !bytes.is_empty() && !extra.is_empty() {
                    out.push(b'&');
                }
                out.extend_from_slice(extra.as_bytes());
                Ok(Body::Form(out.into()))
            }
        }
    }

    /// The extra query parameters as encoded pairs (lists indexed, as the spec's forms).
    /// Their values were checked by [`CallOptions::applied`].
    pub(super) fn query_pairs(&self) -> Vec<(String, String)> {
        let mut writer = FormWriter::new();
        for (key, value) in &self.query {
            let _ = form_fields(&mut writer, key, value);
        }
        form_urlencoded::parse(writer.finish().as_bytes())
            .into_owned()
            .collect()
    }
}

/// `fields` encoded as a form (the spec's spelling: lists as indexed keys), or a
/// validation error naming `field[key]` for a value a form cannot carry.
pub fn form_of(field: &str, fields: &Map<String, Value>) -> Result<String> {
    let mut writer = FormWriter::new();
    for (key, value) in fields {
        form_fields(&mut writer, key, value).map_err(|m| form_refusal(field, key, m))?;
    }
    Ok(writer.finish())
}

/// The field a form or query key names: `include_segments` for `include_segments[0]`.
fn base_name(key: &str) -> &str {
    key.split('[').next().unwrap_or(key)
}

fn replaces(field: &str, key: &str) -> Error {
    Error::validation(
        field,
        message![
            FIELD,
            format!(
                " must not set {key:?}: the call already sends it from its own (validated) \
             arguments; pass it there"
            )
        ],
    )
}

fn form_refusal(field: &str, key: &str, what: &str) -> Error {
    Error::validation(
        field,
        message![
            FIELD,
            format!(
                "[{key:?}] is {what}, which a form or a query cannot carry: the service's \
             forms hold text and lists of text (sent as {key}[0], {key}[1], ...)"
            )
        ],
    )
}

/// `value` under `key` in a form: text as it is, a number or a bool as JSON writes it,
/// `null` as an empty value, a list as indexed keys (`key[0]`, the spelling the spec's forms
/// use); or what the value is when a form cannot carry it (a dict, a list in a list: the
/// service refuses keys like `key[name]` and `key[0][0]`).
fn form_fields(
    writer: &mut FormWriter,
    key: &str,
    value: &Value,
) -> std::result::Result<(), &'static str> {
    match value {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                if matches!(item, Value::Array(_) | Value::Object(_)) {
                    return Err("a list holding lists or dicts");
                }
                form_fields(writer, &format!("{key}[{i}]"), item)?;
            }
        }
        Value::Object(_) => return Err("a dict"),
        Value::String(s) => {
            writer.field(key, s);
        }
        Value::Null => {
            writer.field(key, "");
        }
        other => {
            writer.field(key, &other.to_string());
        }
    }
    Ok(())
}

/// A header a caller adds to one call (`extra_headers`) or to every call
/// (`default_headers`), checked: never the key (that is `api_key`), never a header that
/// frames the message or the connection (the HTTP stack sets those for each request), and,
/// for one call (`extra_headers`, `request`'s `headers`), never `Content-Type` (the call's
/// encoding sets it).
pub fn extra_header(field: &str, name: &str, value: &str) -> Result<(HeaderName, HeaderValue)> {
    let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
        Error::validation(
            field,
            message![FIELD, format!(": bad header name {name:?}")],
        )
    })?;
    if matches!(header.as_str(), "api-key" | "api_key") {
        return Err(Error::validation(
            field,
            message![FIELD, " must not carry the key: pass api_key="],
        ));
    }
    let framing = matches!(
        header.as_str(),
        "content-length"
            | "transfer-encoding"
            | "host"
            | "connection"
            | "keep-alive"
            | "te"
            | "trailer"
            | "upgrade"
            | "proxy-connection"
    );
    if framing || (field != "default_headers" && header == reqwest::header::CONTENT_TYPE) {
        return Err(Error::validation(
            field,
            message![
                FIELD,
                format!(" must not set {name}: the HTTP client sets it for each request")
            ],
        ));
    }
    let value = HeaderValue::from_str(value).map_err(|_| {
        Error::validation(field, message![FIELD, format!(": bad value for {name}")])
    })?;
    Ok((header, value))
}

/// Logs `message` on the `pushwire` logger, through the running call's observer when it
/// has one (so that the record carries the call's trace), else directly. The message is
/// made only when the level is enabled: a batch would pay for it on every event.
pub fn emit_log(level: log::Level, message: impl FnOnce() -> String) {
    if !log::log_enabled!(target: "pushwire", level) {
        return;
    }
    let observer = CallOptions::current().and_then(|o| o.observer.clone());
    match observer {
        Some(observer) => observer.log(level, &message()),
        None => log::log!(target: "pushwire", level, "{}", message()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::transport::Idempotency;
    use serde_json::json;

    fn with_body(fields: Value) -> CallOptions {
        CallOptions {
            body: fields.as_object().cloned().unwrap_or_default(),
            ..CallOptions::default()
        }
    }

    fn form_call(body: &str) -> Call {
        let body = Body::Form(bytes::Bytes::copy_from_slice(body.as_bytes()));
        Call::post("/notifications", body, Idempotency::Unsafe)
    }

    #[test]
    fn extras_join_a_form_body_with_lists_indexed() {
        let options = with_body(json!({"tag": "bf", "ids": [1, "b"], "on": true, "none": null}));
        let merged = options.applied(&form_call("a=1")).unwrap().unwrap();
        let Body::Form(body) = merged.body else {
            panic!("a form stays a form")
        };
        assert_eq!(
            std::str::from_utf8(&body).unwrap(),
            "a=1&tag=bf&ids%5B0%5D=1&ids%5B1%5D=b&on=true&none="
        );
    }

    #[test]
    fn extras_join_a_json_body_as_given() {
        let call = Call::post(
            "/drips",
            Body::Json(br#"{"campaign_name":"x"}"#.to_vec().into()),
            Idempotency::Unsafe,
        );
        let merged = with_body(json!({"meta": {"k": [1]}}))
            .applied(&call)
            .unwrap()
            .unwrap();
        let Body::Json(body) = merged.body else {
            panic!("JSON stays JSON")
        };
        let read: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(read, json!({"campaign_name": "x", "meta": {"k": [1]}}));
    }

    #[test]
    fn an_extra_naming_a_sent_field_or_a_shape_a_form_cannot_carry_is_refused() {
        let refused = |options: CallOptions, body: &str| match options.applied(&form_call(body)) {
            Err(Error::Validation(v)) => (v.field.clone(), v.message()),
            other => panic!("expected a refusal, got {other:?}"),
        };
        let (field, message) = refused(
            with_body(json!({"include_segments": [3]})),
            "include_segments%5B0%5D=1",
        );
        assert_eq!(field, "extra_body");
        assert!(message.contains("include_segments"), "{message}");
        let (_, message) = refused(with_body(json!({"m": {"k": 1}})), "a=1");
        assert!(message.contains("a dict"), "{message}");
        let (_, message) = refused(with_body(json!({"m": [[1]]})), "a=1");
        assert!(message.contains("lists or dicts"), "{message}");
        let on_get = with_body(json!({"x": 1})).applied(&Call::get("/segments"));
        assert!(matches!(on_get, Err(Error::Validation(v)) if v.message().contains("GET")));
        let query = CallOptions {
            query: vec![("limit".into(), json!(5))],
            ..CallOptions::default()
        };
        let listed = Call::get("/drips").query("limit", Some(10));
        assert!(
            matches!(query.applied(&listed), Err(Error::Validation(v)) if v.field == "extra_query")
        );
    }

    #[test]
    fn the_key_and_framing_headers_are_refused_by_name() {
        for name in ["Api-Key", "content-length", "Host", "Transfer-Encoding"] {
            let Err(Error::Validation(v)) = extra_header("extra_headers", name, "x") else {
                panic!("{name} should be refused")
            };
            assert_eq!(v.field, "extra_headers");
        }
        assert!(extra_header("extra_headers", "Content-Type", "text/plain").is_err());
        // A client's default headers may set the content type (each call's own wins).
        assert!(extra_header("default_headers", "Content-Type", "text/plain").is_ok());
        assert!(extra_header("extra_headers", "X-Trace", "t-1").is_ok());
    }
}

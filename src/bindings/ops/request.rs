//! `client.request(...)`: a call this release has no method for, its arguments read, then
//! sent by `crate::client::request`; its answer's body read as JSON.

use crate::message;
use crate::validate::FIELD;
use pyo3::prelude::*;
use pyo3::types::PyString;
use reqwest::Method;
use serde_json::{Map, Value};

use super::args::{headers, pairs, text};
use super::operation::{prepare, Known, PreparedCall, Ready, Run, Running, SAME};
use super::output::Output;
use crate::bindings::convert::to_json;
use crate::client::request::{send, Request};
use crate::client::transport::{form_of, Body, Iface};
use crate::client::{ApiFailure, Error, Transport};

pub struct Args(Request);

/// `client.request`'s call.
#[pyfunction]
#[pyo3(signature = (method, path, *, query, body, form, headers, idempotent, interface))]
#[allow(clippy::too_many_arguments)] // one per parameter of `client.request`
fn request(
    method: &Bound<'_, PyAny>,
    path: &Bound<'_, PyAny>,
    query: &Bound<'_, PyAny>,
    body: &Bound<'_, PyAny>,
    form: &Bound<'_, PyAny>,
    headers: &Bound<'_, PyAny>,
    idempotent: &Bound<'_, PyAny>,
    interface: &Bound<'_, PyAny>,
) -> PyResult<PreparedCall> {
    prepare(method.py(), Known::as_("request", SAME), || {
        let method = text(method, "method")?.to_ascii_uppercase();
        let method = Method::from_bytes(method.as_bytes()).map_err(|_| {
            Error::validation("method", message![format!("{method:?} is no HTTP "), FIELD])
        })?;
        let path = text(path, "path")?;
        let query = match query {
            q if q.is_none() => Vec::new(),
            q => {
                let encoded = form_of("query", &fields(q, "query")?)?;
                form_urlencoded::parse(encoded.as_bytes())
                    .into_owned()
                    .collect()
            }
        };
        let body = match (body.is_none(), form.is_none()) {
            (true, true) => Body::Empty,
            (false, true) => {
                let json = to_json(body, "body")?;
                Body::Json(serde_json::to_vec(&json).unwrap_or_default().into())
            }
            (true, false) => {
                Body::Form(form_of("form", &fields(form, "form")?)?.into_bytes().into())
            }
            (false, false) => {
                return Err(Error::validation(
                    "form",
                    message![
                        "pass body= (sent as JSON) or ",
                        FIELD,
                        "= (form-encoded), not both"
                    ],
                ))
            }
        };
        let headers = match headers {
            h if h.is_none() => Vec::new(),
            h => self::headers(h, "headers")?,
        };
        let idempotent = match idempotent {
            i if i.is_none() => None,
            i => Some(
                i.is_truthy()
                    .map_err(|e| Error::validation("idempotent", e.to_string()))?,
            ),
        };
        let iface = match interface
            .cast::<PyString>()
            .map(|s| s.to_string_lossy().into_owned())
        {
            Ok(name) if name == "main" => Iface::Main,
            Ok(name) if name == "events" => Iface::Events,
            _ => {
                return Err(Error::validation(
                    "interface",
                    message![
                        FIELD,
                        " must be \"main\" ({base_url}) or \"events\" ({events_url})"
                    ],
                ))
            }
        };
        Ok(Ready::Op(Box::new(Args(Request {
            method,
            path,
            iface,
            query,
            headers,
            body,
            idempotent,
        }))))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(request, m)?)
}

/// A mapping's items as JSON fields, named `field[key]` in errors.
fn fields(value: &Bound<'_, PyAny>, field: &str) -> Result<Map<String, Value>, Error> {
    pairs(value, field)?
        .into_iter()
        .map(|(k, v)| {
            let json = to_json(&v, &format!("{field}[{k:?}]"))?;
            Ok((k, json))
        })
        .collect()
}

impl Args {
    async fn send(self, t: &Transport) -> Result<Output, Error> {
        let (status, _, body) = send(t, &self.0).await?;
        let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&body);
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(Output::Json(Value::Null));
        }
        Ok(match serde_json::from_slice(body) {
            Ok(json) => Output::Json(json),
            // The answer stands (the raw response has it); `parse()` says why it has no JSON.
            Err(e) => Output::Unread(Error::Api(Box::new(ApiFailure::unreadable(
                status.as_u16(),
                format!("the answer is not JSON ({e}): read .text or .content"),
                Value::Null,
            )))),
        })
    }
}

impl Run for Args {
    fn run(self: Box<Self>, t: &Transport) -> Running<'_> {
        Box::pin(self.send(t))
    }
}

//! A call as a resource module describes it: the interface, method, path, query and body,
//! and whether repeating it could repeat its effect.

use std::borrow::Cow;

use reqwest::header::{HeaderName, HeaderValue};
use reqwest::Method;

/// Which interface a call goes to.
pub use crate::operations::Interface as Iface;
use crate::operations::Operation;

/// Whether repeating a call could repeat its effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Idempotency {
    /// Reads and writes that land in the same state however often they run.
    Safe,
    /// Writes with a side effect per request (a broadcast, a drip, an event, a product update).
    Unsafe,
}

#[derive(Debug, Clone)]
/// A request body; `Bytes` so that a retry resends it without copying.
pub enum Body {
    Empty,
    Json(bytes::Bytes),
    Form(bytes::Bytes),
}

/// One API call, as a resource module describes it.
#[derive(Debug, Clone)]
pub struct Call {
    pub iface: Iface,
    pub method: Method,
    pub path: String,
    /// Query parameters, in order; a resource's names are its own (`&'static str`),
    /// `client::request`'s are the caller's.
    pub query: Vec<(Cow<'static, str>, String)>,
    pub body: Body,
    pub idempotency: Idempotency,
    /// Headers of this call, sent after the client's own (`client::request`'s).
    pub headers: Vec<(HeaderName, HeaderValue)>,
}

impl Call {
    pub fn get(path: impl Into<String>) -> Call {
        Call {
            iface: Iface::Main,
            method: Method::GET,
            path: path.into(),
            query: Vec::new(),
            body: Body::Empty,
            idempotency: Idempotency::Safe,
            headers: Vec::new(),
        }
    }

    pub fn post(path: impl Into<String>, body: Body, idempotency: Idempotency) -> Call {
        Call {
            iface: Iface::Main,
            method: Method::POST,
            path: path.into(),
            query: Vec::new(),
            body,
            idempotency,
            headers: Vec::new(),
        }
    }

    /// A call of the service's operation `op` (its interface, method, path and whether it
    /// may be repeated), with `body`.
    pub fn to(op: &Operation, body: Body) -> Call {
        Call::to_path(op, op.on_root().to_string(), body)
    }

    /// [`Call::to`] at `path`, `op`'s path with its parameter given (`on_root_with`).
    pub fn to_path(op: &Operation, path: String, body: Body) -> Call {
        Call {
            iface: op.interface,
            method: op.http_method(),
            path,
            query: Vec::new(),
            body,
            idempotency: if op.idempotent {
                Idempotency::Safe
            } else {
                Idempotency::Unsafe
            },
            headers: Vec::new(),
        }
    }

    pub fn query(mut self, key: &'static str, value: Option<impl ToString>) -> Call {
        if let Some(v) = value {
            self.query.push((Cow::Borrowed(key), v.to_string()));
        }
        self
    }

    /// The path as the service sees it, with its interface's prefix (for logs and errors).
    pub fn shown_path(&self) -> String {
        format!("{}{}", self.iface.prefix(), self.path)
    }

    pub fn on(mut self, iface: Iface) -> Call {
        self.iface = iface;
        self
    }
}

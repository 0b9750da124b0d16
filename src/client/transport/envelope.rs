//! The answers' envelope: `success: false` read as a refusal whatever the status, and a
//! 2xx that does not decode told with the field at fault.

use reqwest::StatusCode;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;

use crate::client::error::{ApiFailure, Error, Result};

use super::call::Iface;
use super::failure::{failure_from_body, with_events_code};

/// The fields every main-interface answer may carry to say it failed.
pub trait Envelope {
    fn success(&self) -> Option<bool>;
}

/// Decodes a 2xx answer. A `success: false` answer becomes [`Error::Api`] with the
/// service's message, as the real service sends some failures with HTTP 200. An answer that
/// does not decode is an error with its status; for a `write`, whose 2xx says the service
/// took it, its outcome is unknown (it must not be sent again blindly).
pub fn decode<R: DeserializeOwned + Envelope>(
    iface: Iface,
    status: StatusCode,
    body: &[u8],
    write: bool,
) -> Result<R> {
    let code = status.as_u16();
    match serde_json::from_slice::<R>(body) {
        Ok(r) if r.success() == Some(false) => {
            let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
            let failure = refusal(failure_from_body(code, v));
            Err(Error::Api(Box::new(match iface {
                Iface::Events => with_events_code(failure),
                Iface::Main => failure,
            })))
        }
        Ok(r) => Ok(r),
        Err(e) => {
            let v: Value = serde_json::from_slice(body)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()));
            let mut failure = failure_from_body(code, v);
            let refused = failure.body.get("success") == Some(&Value::Bool(false));
            if refused {
                // A refusal is a refusal, whatever else its answer lacks.
                failure = refusal(failure);
            } else {
                // Decoded again, on this rare path only, to name the field at fault.
                let mut de = serde_json::Deserializer::from_slice(body);
                let at = match serde_path_to_error::deserialize::<_, R>(&mut de) {
                    Err(e) if e.path().to_string() != "." => format!(" (at `{}`)", e.path()),
                    _ => String::new(),
                };
                let interface = match iface {
                    Iface::Main => "main",
                    Iface::Events => "event-tracking",
                };
                failure.unreadable = (200..300).contains(&code);
                failure.message = match &failure.body {
                    // Not JSON at all: a proxy's or gateway's page, most likely.
                    Value::String(text) => format!(
                        "the {interface} interface answered with an unexpected shape: a body that is not JSON (a proxy's or gateway's page?): {:?}",
                        text.chars().take(200).collect::<String>()
                    ),
                    _ => format!(
                        "the {interface} interface answered with an unexpected shape{at}: {e}"
                    ),
                };
                if write {
                    failure.outcome_unknown = true;
                    failure.message.push_str(&format!(
                        "; the service answered {status}, so it may have acted on the request: \
                         it was not retried, check before sending it again"
                    ));
                }
            }
            Err(Error::Api(Box::new(failure)))
        }
    }
}

/// A `success: false` answer's failure, with a message even when the service sent none.
fn refusal(mut failure: ApiFailure) -> ApiFailure {
    if failure.message.is_empty() {
        failure.message = match failure.body.get("error_code") {
            // The event-tracking interface says it with a code, and has no `success`.
            Some(code) if failure.body.get("success").is_none() => {
                format!("the service answered error_code {code}, without a message")
            }
            _ => "the service answered success: false, without a message".into(),
        };
    }
    failure
}

/// Declares an answer type: `success`/`message` plus the given fields, each defaulted; the
/// fields before a `;` are required (a list read's list: a 2xx without it is an unexpected
/// shape, never an empty result standing in for the real one).
#[macro_export]
macro_rules! envelope {
    ($name:ident { $($req:ident : $rty:ty),+ ; $($field:ident : $ty:ty),* $(,)? }) => {
        #[derive(serde::Deserialize, Debug)]
        pub struct $name {
            #[serde(default)]
            pub success: Option<bool>,
            $(pub $req: $rty,)+
            $(#[serde(default)] pub $field: $ty,)*
        }
        impl $crate::client::transport::Envelope for $name {
            fn success(&self) -> Option<bool> {
                self.success
            }
        }
    };
    ($name:ident { $($field:ident : $ty:ty),* $(,)? }) => {
        #[derive(serde::Deserialize, Debug, Default)]
        pub struct $name {
            #[serde(default)]
            pub success: Option<bool>,
            $(#[serde(default)] pub $field: $ty,)*
        }
        impl $crate::client::transport::Envelope for $name {
            fn success(&self) -> Option<bool> {
                self.success
            }
        }
    };
}

/// An answer that must carry `data`: a 2xx without it (or with `null`) is an unexpected
/// shape, raised as such, never an empty result standing in for the real one.
#[derive(Deserialize, Debug)]
pub struct Data<T> {
    #[serde(default)]
    pub success: Option<bool>,
    pub data: T,
}

impl<T> Envelope for Data<T> {
    fn success(&self) -> Option<bool> {
        self.success
    }
}

/// An answer whose content does not matter beyond success.
#[derive(Deserialize, Debug, Default)]
pub struct Ack {
    #[serde(default)]
    pub success: Option<bool>,
    #[serde(default)]
    pub message: Option<Value>,
}

impl Envelope for Ack {
    fn success(&self) -> Option<bool> {
        self.success
    }
}

//! What a call can end in besides its result. The glue hands each to Python as a plain
//! payload (its kind, message and fields), and `pushwire.errors` chooses the class.

use std::sync::Arc;

use serde_json::Value;

use crate::validate::Violation;

/// What a failure at the transport came from (reqwest's error, and below it hyper's or the
/// OS's), kept for [`std::error::Error::source`].
pub type Cause = Arc<dyn std::error::Error + Send + Sync>;

#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Error {
    /// Bad input, caught before anything was sent.
    Validation(Violation),
    /// The client was configured wrongly (no key, a bad URL, TLS that cannot be set up).
    Config(String),
    /// The caller stopped the call (its progress callback raised), before it finished.
    Cancelled(String),
    /// A failure inside pushwire, neither the caller's nor the service's (a worker thread
    /// gone, a task that panicked): a bug to report.
    Internal(String),
    /// The service answered with an error status, or 200 with `success: false`.
    Api(Box<ApiFailure>),
    /// The service could not be reached or the connection failed. `outcome_unknown` is true
    /// when a write may have been processed before the failure.
    Connection {
        message: String,
        outcome_unknown: bool,
        source: Option<Cause>,
    },
    /// The call ran out of its `timeout` (which bounds every attempt and wait together).
    Timeout {
        message: String,
        outcome_unknown: bool,
        source: Option<Cause>,
    },
    /// An answer's body was larger than `limit` (`max_response_size`): the connection was
    /// dropped, the body neither read to its end nor kept.
    TooLarge {
        message: String,
        outcome_unknown: bool,
        limit: u64,
    },
}

/// An error answer of the service.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiFailure {
    pub status: u16,
    pub message: String,
    /// The parsed body (a string when it was not JSON).
    pub body: Value,
    /// The events interface's `error.code`.
    pub code: Option<i64>,
    /// The events interface's `error.details`.
    pub details: Vec<Value>,
    /// Seconds, from `Retry-After`.
    pub retry_after: Option<f64>,
    /// A write answered with 500, 502 or 504: the service (or the one behind a gateway) may
    /// have acted on it before failing, so sending it again may do it twice.
    pub outcome_unknown: bool,
    /// The answer's headers as received, in order, a repeated name once per value (empty
    /// where the failure was not an answer's).
    pub headers: Vec<(String, String)>,
    /// A successful answer whose body the typed read could not take (a field missing, or
    /// not JSON): `with_raw_response` still returns that answer, and its `parse()` raises.
    pub unreadable: bool,
}

/// What stands in for the API key in a service's error text.
pub const REDACTED: &str = "[redacted]";

/// `value` with every string in it (keys of objects included) rid of `secret`.
fn redact_value(value: &mut Value, secret: &str) {
    match value {
        Value::String(s) if s.contains(secret) => *s = s.replace(secret, REDACTED),
        Value::Array(items) => items.iter_mut().for_each(|v| redact_value(v, secret)),
        Value::Object(map) if map.keys().any(|k| k.contains(secret)) => {
            let taken = std::mem::take(map);
            for (k, mut v) in taken {
                redact_value(&mut v, secret);
                map.insert(k.replace(secret, REDACTED), v);
            }
        }
        Value::Object(map) => map.values_mut().for_each(|v| redact_value(v, secret)),
        _ => {}
    }
}

/// `text` percent-decoded until nothing is left to decode (a key encoded twice), with
/// `secret` blanked in every spelling a URL or a form can carry it: as written, encoded
/// (once or more) and with its spaces as `+`; and whether it held any of them. An encoded
/// key would pass a search for the key, so what may show a URL (a redirect's message, its
/// `Location` header) shows it decoded.
pub(crate) fn decoded_without_secret(text: &str, secret: Option<&str>) -> (String, bool) {
    let spellings: Vec<String> = secret
        .filter(|s| !s.is_empty())
        .map(|s| vec![s.to_string(), s.replace(' ', "+")])
        .unwrap_or_default();
    let mut shown = text.to_string();
    let mut found = false;
    let mut blank = |shown: &mut String| {
        if spellings.iter().any(|s| shown.contains(s.as_str())) {
            found = true;
            for s in &spellings {
                *shown = shown.replace(s.as_str(), REDACTED);
            }
        }
    };
    // A few rounds at most; blanked at each, should decoding change a spelling of the key.
    for _ in 0..5 {
        blank(&mut shown);
        let decoded = percent_encoding::percent_decode_str(&shown)
            .decode_utf8_lossy()
            .into_owned();
        if decoded == shown {
            break;
        }
        shown = decoded;
    }
    blank(&mut shown);
    (shown, found)
}

/// A header's value rid of `secret` (see [`decoded_without_secret`]); None when it held no
/// spelling of it, and is kept as sent.
fn without_secret(text: &str, secret: &str) -> Option<String> {
    let (shown, found) = decoded_without_secret(text, Some(secret));
    found.then_some(shown)
}

impl ApiFailure {
    /// A successful answer (`status`) whose body the typed read could not take: `message`
    /// says why, `body` is what was read of it.
    pub fn unreadable(status: u16, message: String, body: Value) -> ApiFailure {
        ApiFailure {
            status,
            message,
            body,
            code: None,
            details: Vec::new(),
            retry_after: None,
            outcome_unknown: false,
            headers: Vec::new(),
            unreadable: true,
        }
    }

    /// Blanks `secret` (the API key) wherever the service echoed it: an error's message,
    /// body and details reach logs, tracebacks and error trackers.
    pub fn redact(&mut self, secret: &str) {
        if self.message.contains(secret) {
            self.message = self.message.replace(secret, REDACTED);
        }
        redact_value(&mut self.body, secret);
        self.details
            .iter_mut()
            .for_each(|v| redact_value(v, secret));
        for (_, value) in &mut self.headers {
            if let Some(redacted) = without_secret(value, secret) {
                *value = redacted;
            }
        }
    }
}

impl Error {
    /// Whether the service may have acted on the request that ended in this error.
    pub fn outcome_unknown(&self) -> bool {
        match self {
            Error::Connection {
                outcome_unknown, ..
            }
            | Error::Timeout {
                outcome_unknown, ..
            }
            | Error::TooLarge {
                outcome_unknown, ..
            } => *outcome_unknown,
            Error::Api(a) => a.outcome_unknown,
            Error::Validation(_) | Error::Config(_) | Error::Cancelled(_) | Error::Internal(_) => {
                false
            }
        }
    }

    pub fn validation(
        field: impl Into<String>,
        message: impl Into<crate::validate::Message>,
    ) -> Error {
        Error::Validation(Violation::new(field, message))
    }
}

impl From<Violation> for Error {
    fn from(v: Violation) -> Self {
        Error::Validation(v)
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Validation(v) => write!(f, "{v}"),
            Error::Config(m) | Error::Cancelled(m) | Error::Internal(m) => f.write_str(m),
            Error::Api(a) => write!(f, "{}: {}", a.status, a.message),
            Error::Connection { message, .. }
            | Error::Timeout { message, .. }
            | Error::TooLarge { message, .. } => f.write_str(message),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Connection { source, .. } | Error::Timeout { source, .. } => source
                .as_deref()
                .map(|e| e as &(dyn std::error::Error + 'static)),
            _ => None,
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;

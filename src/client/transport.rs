//! The one place that knows HTTP: base URLs of both interfaces, the `Api-Key` header,
//! timeouts, retries, error mapping and body encoding. Resource modules describe a call
//! ([`Call`]) and the shape of its answer; this module sends it.
//!
//! Retries (`max_retries`, exponential backoff with jitter, capped, `Retry-After` honoured),
//! all within one total deadline, `timeout`, that bounds attempts and waits together:
//!
//! | call kind                          | retried on                                        |
//! |------------------------------------|---------------------------------------------------|
//! | reads, idempotent writes           | connection errors, 408, 429, 5xx                  |
//! | writes that would repeat an effect | connect failures (nothing was sent), 429, 503 with |
//! |                                    | `Retry-After` (refused unprocessed); else the      |
//! |                                    | error says whether the outcome is unknown          |

use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, CONTENT_TYPE, RETRY_AFTER, USER_AGENT};
use reqwest::{Method, StatusCode, Url};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;

use super::error::{ApiFailure, Error, Result};

/// Which interface a call goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Iface {
    /// `{base_url}/apiv1`
    Main,
    /// `{events_url}/api/v1`
    Events,
}

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
    pub query: Vec<(&'static str, String)>,
    pub body: Body,
    pub idempotency: Idempotency,
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
        }
    }

    pub fn query(mut self, key: &'static str, value: Option<impl ToString>) -> Call {
        if let Some(v) = value {
            self.query.push((key, v.to_string()));
        }
        self
    }

    /// The path as the service sees it, with its interface's prefix (for logs and errors).
    pub fn shown_path(&self) -> String {
        match self.iface {
            Iface::Main => format!("/apiv1{}", self.path),
            Iface::Events => format!("/api/v1{}", self.path),
        }
    }

    pub fn on(mut self, iface: Iface) -> Call {
        self.iface = iface;
        self
    }
}

/// A client's connection slots, per process: a forked child starts with every slot free,
/// since the parent's calls in flight, which held some, do not exist there (they would be
/// held for ever, and the child's calls wait for them). Read without a lock, as a lock a
/// fork could catch held would hang the child.
pub struct Slots {
    n: usize,
    /// The process id the semaphore is for, and the semaphore.
    current: AtomicPtr<(u32, Arc<tokio::sync::Semaphore>)>,
}

impl Slots {
    pub fn new(n: usize) -> Slots {
        let first = Box::new((std::process::id(), Arc::new(tokio::sync::Semaphore::new(n))));
        Slots {
            n,
            current: AtomicPtr::new(Box::into_raw(first)),
        }
    }

    /// This process's semaphore (looked up when a transport is made, not per request).
    pub fn get(&self) -> Arc<tokio::sync::Semaphore> {
        let pid = std::process::id();
        loop {
            let seen = self.current.load(Ordering::Acquire);
            // SAFETY: `current` always points at a live value: the first is freed only on
            // drop, and a replaced one is never freed.
            let (owner, slots) = unsafe { &*seen };
            if *owner == pid {
                return slots.clone();
            }
            let fresh = Box::into_raw(Box::new((
                pid,
                Arc::new(tokio::sync::Semaphore::new(self.n)),
            )));
            match self
                .current
                .compare_exchange(seen, fresh, Ordering::AcqRel, Ordering::Acquire)
            {
                // The parent's semaphore is leaked, not freed: another thread of this
                // process may be reading it right now. Once per client per fork.
                // SAFETY: `fresh` was just made here and is now `current`.
                Ok(_) => return unsafe { &*fresh }.1.clone(),
                // SAFETY: `fresh` never became `current`, so nothing else has seen it.
                Err(_) => drop(unsafe { Box::from_raw(fresh) }),
            }
        }
    }
}

impl Drop for Slots {
    fn drop(&mut self) {
        // SAFETY: the last owner: nothing reads `current` any more.
        drop(unsafe { Box::from_raw(*self.current.get_mut()) });
    }
}

/// How a client is set up. Its `Debug` never shows the key.
#[derive(Clone)]
pub struct Config {
    pub api_key: String,
    /// Root of the main interface, without `/apiv1`.
    pub base_url: String,
    /// Root of the event-tracking interface, without `/api/v1`.
    pub events_url: String,
    /// Bounds a whole call, retries and waits included.
    pub timeout: Duration,
    pub max_retries: u32,
    /// The most bytes an answer's body may have (see [`DEFAULT_MAX_RESPONSE_SIZE`]).
    pub max_response_size: u64,
    pub default_headers: Vec<(String, String)>,
    /// Allows `http://` to a host other than loopback.
    pub allow_insecure: bool,
    /// First backoff wait; doubles per retry up to `backoff_max`.
    pub backoff_base: Duration,
    pub backoff_max: Duration,
    /// A PEM file of extra root certificates to trust (a corporate CA), besides the
    /// platform's.
    pub ca_bundle: Option<std::path::PathBuf>,
    /// A proxy for every request (`http://`, `https://` or `socks5://` URL). Without it, the
    /// `HTTPS_PROXY`/`HTTP_PROXY`/`NO_PROXY` environment applies, as for curl.
    pub proxy: Option<String>,
    /// The TLS settings of every pool made from this configuration ([`tls_config`]); built
    /// by each transport when `None`. When set, `ca_bundle` is not read again.
    pub tls: Option<rustls::ClientConfig>,
    /// Bounds the requests in flight at once over every pool made from this configuration
    /// (each is one connection): a call beyond it waits for a slot, within its `timeout`.
    /// Without it, a `gather` of thousands of calls opens thousands of sockets and runs out
    /// of file descriptors. `None` is no bound. Set with [`Config::with_max_connections`].
    pub slots: Option<Arc<Slots>>,
    pub max_connections: Option<usize>,
    /// Set by `close`: the pools made from this configuration are dropped at each thread's
    /// next look-up (their idle connections close).
    pub closed: Arc<AtomicBool>,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("api_key", &"[redacted]")
            .field("base_url", &self.base_url)
            .field("events_url", &self.events_url)
            .field("timeout", &self.timeout)
            .field("max_retries", &self.max_retries)
            .finish_non_exhaustive()
    }
}

impl Config {
    /// Bounds the requests in flight at once (see `slots`); `None` for no bound.
    pub fn with_max_connections(mut self, n: Option<usize>) -> Config {
        self.max_connections = n;
        self.slots = n.map(|n| Arc::new(Slots::new(n)));
        self
    }

    pub fn new(api_key: &str, base_url: &str, events_url: &str) -> Config {
        Config {
            api_key: api_key.to_string(),
            base_url: base_url.to_string(),
            events_url: events_url.to_string(),
            timeout: Duration::from_secs(30),
            max_retries: 2,
            max_response_size: DEFAULT_MAX_RESPONSE_SIZE,
            default_headers: Vec::new(),
            allow_insecure: false,
            backoff_base: Duration::from_millis(500),
            backoff_max: Duration::from_secs(8),
            ca_bundle: None,
            proxy: None,
            tls: None,
            slots: None,
            max_connections: None,
            closed: Arc::new(AtomicBool::new(false)),
        }
    }
}

/// The TLS settings of a client: the platform's roots (rustls-platform-verifier, as reqwest
/// sets up by itself), plus `ca_bundle`'s, ALPN for HTTP/2 and 1.1.
///
/// Built here rather than by reqwest because reqwest loads and parses the system's whole
/// certificate store for every client it builds (milliseconds of base64 decoding), and a
/// client has a pool per thread that uses it. Built once, the settings are shared: once per
/// process without `ca_bundle`, once per client with one.
pub fn tls_config(ca_bundle: Option<&std::path::Path>) -> Result<rustls::ClientConfig> {
    // The platform's roots, per value of the variables that move them (read by
    // rustls-native-certs): a process that changes them gets fresh settings.
    type Cached = Option<((Option<String>, Option<String>), rustls::ClientConfig)>;
    static PLATFORM: std::sync::Mutex<Cached> = std::sync::Mutex::new(None);
    let env_key = (
        std::env::var("SSL_CERT_FILE").ok(),
        std::env::var("SSL_CERT_DIR").ok(),
    );
    if ca_bundle.is_none() {
        let cached = PLATFORM.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((key, done)) = cached.as_ref() {
            if *key == env_key {
                return Ok(done.clone());
            }
        }
    }
    let mut extra = Vec::new();
    if let Some(path) = ca_bundle {
        use rustls::pki_types::pem::PemObject;
        use rustls::pki_types::CertificateDer;
        let pem = std::fs::read(path).map_err(|e| {
            Error::validation(
                "ca_bundle",
                format!("ca_bundle {} could not be read: {e}", path.display()),
            )
        })?;
        for cert in CertificateDer::pem_slice_iter(&pem) {
            extra.push(cert.map_err(|e| {
                Error::validation(
                    "ca_bundle",
                    format!("ca_bundle {} is not a PEM bundle: {e}", path.display()),
                )
            })?);
        }
        if extra.is_empty() {
            return Err(Error::validation(
                "ca_bundle",
                format!("ca_bundle {} holds no certificate", path.display()),
            ));
        }
    }
    let provider = rustls::crypto::CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| std::sync::Arc::new(rustls::crypto::aws_lc_rs::default_provider()));
    let tls_error = |e: rustls::Error| Error::Config(format!("TLS could not be set up: {e}"));
    let verifier = if extra.is_empty() {
        rustls_platform_verifier::Verifier::new(provider.clone())
    } else {
        rustls_platform_verifier::Verifier::new_with_extra_roots(extra, provider.clone())
    }
    .map_err(tls_error)?;
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(tls_error)?
        .dangerous() // only to install the platform verifier, which does verify
        .with_custom_certificate_verifier(std::sync::Arc::new(verifier))
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    if ca_bundle.is_none() {
        *PLATFORM.lock().unwrap_or_else(|e| e.into_inner()) = Some((env_key, tls.clone()));
    }
    Ok(tls)
}

/// The default bound on an answer's body: 64 MiB. The largest answers the API gives at the
/// spec's limits are about 1 MiB (`benches/largest_answer.py`: 500 campaigns of long fields
/// in one `triggers.list` page, 727 KiB; ten years of daily summary rows, 969 KiB), so the
/// bound is far from any real answer, and far below what an endless body from a broken
/// proxy would take before the deadline (gigabytes).
pub const DEFAULT_MAX_RESPONSE_SIZE: u64 = 64 << 20;

pub const USER_AGENT_VALUE: &str =
    concat!("pushwire-python/", env!("CARGO_PKG_VERSION"), " (rust)");

/// A client's HTTP side: one connection pool, both interfaces, and the limits its calls
/// run under. A [`with_limits`](Transport::with_limits) view shares the pool.
#[derive(Debug)]
pub struct Transport {
    shared: Arc<Shared>,
    limits: Limits,
}

/// A call's own limits, where they differ from its client's (`Client.with_options`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    pub timeout: Duration,
    pub max_retries: u32,
    pub max_response_size: u64,
}

/// How an attempt failed: the HTTP stack, or an answer larger than `max_response_size`.
#[derive(Debug)]
enum AttemptError {
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

/// What every view of a transport shares: the pool and the client's fixed settings.
#[derive(Debug)]
pub struct Shared {
    http: reqwest::Client,
    /// Parsed once: a request only sets its path and query on a copy (a whole parse per
    /// request ran the host through IDNA mapping, about 8% of a small request's CPU).
    main_root: Url,
    events_root: Option<Url>,
    /// The whole URL of the event endpoint, which a batch posts to thousands of times: a
    /// copy, not a path set on the root (a path parse per event).
    events_endpoint: Option<Url>,
    backoff_base: Duration,
    backoff_max: Duration,
    slots: Option<Arc<tokio::sync::Semaphore>>,
    max_connections: usize,
    /// The API key, to blank where an error answer echoes it; `None` for a key shorter than
    /// 8 characters, which is no secret (a test's `k1`) and would blank ordinary words.
    secret: Option<String>,
}

/// Whether `url`'s host is this machine (`localhost`, 127.0.0.0/8, `::1`).
fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// Checks a root URL and strips what users paste along with it (`/apiv1`, a trailing `/`).
fn root_url(name: &str, raw: &str, suffix: &str, allow_insecure: bool) -> Result<String> {
    let trimmed = raw.trim().trim_end_matches('/');
    let trimmed = trimmed.strip_suffix(suffix).unwrap_or(trimmed);
    let url = Url::parse(trimmed).map_err(|e| {
        Error::validation(name, format!("{name} is not a valid URL ({e}): {raw:?}"))
    })?;
    if url.query().is_some() || url.fragment().is_some() {
        return Err(Error::validation(
            name,
            format!("{name} must not carry a query or a fragment: {raw:?}"),
        ));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(Error::validation(
            name,
            format!("{name} must not carry credentials: pass the key as api_key="),
        ));
    }
    if url.host().is_none() {
        return Err(Error::validation(
            name,
            format!("{name} has no host: {raw:?}"),
        ));
    }
    let loopback = is_loopback(&url);
    match url.scheme() {
        "https" => {}
        "http" if loopback || allow_insecure => {}
        "http" => {
            return Err(Error::validation(
                name,
                format!(
                    "{name} uses plain http to a host that is not loopback; use https, or pass \
                 allow_insecure=True if you really mean it"
                ),
            ))
        }
        other => {
            return Err(Error::validation(
                name,
                format!("{name} must be http(s), not {other}"),
            ))
        }
    }
    Ok(trimmed.to_string())
}

/// The path of the event endpoint (4.14) under the events interface's root.
pub const EVENTS_PATH: &str = "/events";

/// `root` with `path` after its own.
fn url_of(root: &Url, path: &str) -> Url {
    let mut url = root.clone();
    let mut full = String::with_capacity(root.path().len() + path.len());
    full.push_str(root.path());
    full.push_str(path);
    url.set_path(&full);
    url
}

/// A proxy URL as an error may show it: what stands before its host's `@` blanked (a
/// password must not reach a log or a traceback).
fn without_credentials(raw: &str) -> String {
    // A scheme's `://` only before any `@` (one later may be in the query or the password).
    let start = match raw.find("://") {
        Some(i) if !raw[..i].contains('@') => i + 3,
        _ => 0,
    };
    match raw[start..].rfind('@') {
        Some(at) => format!("{}[redacted]{}", &raw[..start], &raw[start + at..]),
        None => raw.to_string(),
    }
}

/// A checked root (`root_url`) with its interface's prefix, as a `Url`.
fn parsed_root(root: &str) -> Result<Url> {
    Url::parse(root).map_err(|e| Error::Config(format!("{root:?} is not a valid URL: {e}")))
}

// The pool's fields read as the transport's own (`self.http`).
impl std::ops::Deref for Transport {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.shared
    }
}

impl Transport {
    pub fn new(cfg: &Config) -> Result<Transport> {
        if cfg.api_key.trim().is_empty() {
            return Err(Error::validation(
                "api_key",
                "no API key: pass api_key= or set PUSHWIRE_API_KEY",
            ));
        }
        let main = root_url("base_url", &cfg.base_url, "/apiv1", cfg.allow_insecure)?;
        // The events interface is optional: a client that never tracks events needs no URL.
        let events = if cfg.events_url.trim().is_empty() {
            None
        } else {
            Some(root_url(
                "events_url",
                &cfg.events_url,
                "/api/v1",
                cfg.allow_insecure,
            )?)
        };
        let mut headers = HeaderMap::new();
        let mut key = HeaderValue::from_str(cfg.api_key.trim()).map_err(|_| {
            Error::validation("api_key", "api_key holds characters a header cannot carry")
        })?;
        key.set_sensitive(true);
        headers.insert(HeaderName::from_static("api-key"), key);
        headers.insert(USER_AGENT, HeaderValue::from_static(USER_AGENT_VALUE));
        for (k, v) in &cfg.default_headers {
            let name = HeaderName::from_bytes(k.as_bytes()).map_err(|_| {
                Error::validation(
                    "default_headers",
                    format!("default_headers: bad header name {k:?}"),
                )
            })?;
            if matches!(name.as_str(), "api-key" | "api_key") {
                return Err(Error::validation(
                    "default_headers",
                    "default_headers must not carry the key: pass api_key=",
                ));
            }
            // Headers that frame the message or the connection are the HTTP stack's: a
            // `Content-Length` of its own would cut every body short.
            if matches!(
                name.as_str(),
                "content-length"
                    | "transfer-encoding"
                    | "host"
                    | "connection"
                    | "keep-alive"
                    | "te"
                    | "trailer"
                    | "upgrade"
                    | "proxy-connection"
            ) {
                return Err(Error::validation(
                    "default_headers",
                    format!(
                        "default_headers must not set {k}: the HTTP client sets it for each \
                         request"
                    ),
                ));
            }
            let value = HeaderValue::from_str(v).map_err(|_| {
                Error::validation(
                    "default_headers",
                    format!("default_headers: bad value for {k}"),
                )
            })?;
            headers.insert(name, value);
        }
        let mut tls = match &cfg.tls {
            Some(tls) => tls.clone(),
            None => tls_config(cfg.ca_bundle.as_deref())?,
        };
        // A session cache per pool, as reqwest keeps one per client: a clone would share the
        // original's (behind a lock a fork could catch held) with every pool and process.
        tls.resumption = rustls::client::Resumption::default();
        // Preconfigured TLS settings override reqwest's own TLS options (versions, ALPN):
        // set them in `tls_config`.
        let mut builder = reqwest::Client::builder().tls_backend_preconfigured(tls);
        if let Some(proxy) = &cfg.proxy {
            // Parsed here first: reqwest's own refusal says only "builder error". Without a
            // scheme (`10.0.0.1:3128`) it is http, as reqwest and curl read it.
            let raw = proxy.trim();
            let with_scheme = if raw.contains("://") {
                raw.to_string()
            } else {
                format!("http://{raw}")
            };
            let p = Url::parse(&with_scheme)
                .map_err(|e| e.to_string())
                .and_then(|url| reqwest::Proxy::all(url.as_str()).map_err(|e| e.to_string()))
                .map_err(|e| {
                    Error::validation(
                        "proxy",
                        format!(
                            "proxy is not a valid proxy URL ({e}): {:?}",
                            without_credentials(raw)
                        ),
                    )
                })?;
            builder = builder.proxy(p);
        } else if [Some(&main), events.as_ref()]
            .into_iter()
            .flatten()
            .all(|root| Url::parse(root).is_ok_and(|u| is_loopback(&u)))
        {
            // A service on this machine (the emulator, a tunnel) is not behind the
            // environment's HTTP_PROXY, which would be sent the key and fail to reach it.
            builder = builder.no_proxy();
        }
        let http = builder
            .default_headers(headers)
            // Each request's own deadline bounds its connect too (`attempt`): this only
            // keeps one hung connect from using up a long call's retries. Fixed, not the
            // client's timeout, as `with_options` views of the pool have their own.
            .connect_timeout(Duration::from_secs(10))
            .pool_idle_timeout(Duration::from_secs(60))
            .tcp_nodelay(true)
            // The service never redirects an API call. Following one would send the key
            // header (reqwest strips only `Authorization` and cookies on a cross-origin hop)
            // and the body to another host, or turn a broadcast into a GET whose answer
            // reads as a send; a 3xx is an error instead (`api_failure`).
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| Error::Config(format!("the HTTP client could not be built: {e}")))?;
        let events_root = events
            .map(|e| parsed_root(&format!("{e}/api/v1")))
            .transpose()?;
        let shared = Shared {
            http,
            main_root: parsed_root(&format!("{main}/apiv1"))?,
            events_endpoint: events_root.as_ref().map(|root| url_of(root, EVENTS_PATH)),
            events_root,
            backoff_base: cfg.backoff_base,
            backoff_max: cfg.backoff_max,
            slots: cfg.slots.as_ref().map(|s| s.get()),
            max_connections: cfg.max_connections.unwrap_or(0),
            secret: Some(cfg.api_key.trim().to_string()).filter(|k| k.chars().count() >= 8),
        };
        Ok(Transport {
            shared: Arc::new(shared),
            limits: Limits {
                timeout: cfg.timeout,
                max_retries: cfg.max_retries,
                max_response_size: cfg.max_response_size,
            },
        })
    }

    /// The same pool, its calls run under `limits` instead of the client's.
    pub fn with_limits(&self, limits: Limits) -> Transport {
        Transport {
            shared: self.shared.clone(),
            limits,
        }
    }

    /// How many requests of a batch asked to run `concurrency` at once may be in flight:
    /// never more than the client's connection slots, so that no item of the batch waits
    /// for a slot on its own deadline (and times out, perhaps after being sent).
    pub fn in_flight(&self, concurrency: usize) -> usize {
        match self.max_connections {
            0 => concurrency.max(1),
            n => concurrency.clamp(1, n),
        }
    }

    /// Sends `call` (with retries) and decodes a successful answer into `R`.
    pub async fn send<R: DeserializeOwned + Envelope>(&self, call: &Call) -> Result<R> {
        let (status, bytes) = self.send_raw(call).await?;
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

    /// Sends `call` with retries; the status and body of the first successful answer.
    pub async fn send_raw(&self, call: &Call) -> Result<(StatusCode, bytes::Bytes)> {
        if call.iface == Iface::Events && self.events_root.is_none() {
            return Err(Error::validation(
                "events_url",
                "no events_url: pass events_url= or set PUSHWIRE_EVENTS_URL to track events",
            ));
        }
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
                        })
                    }
                }
            }
        };
        let mut retries = 0u32;
        loop {
            let remaining = deadline.saturating_duration_since(Instant::now());
            if remaining.is_zero() {
                return Err(timeout_error(call, self.limits.timeout, false));
            }
            let outcome = self.attempt(call, remaining).await;
            let (err, wait_hint, retryable) = match outcome {
                Ok((status, _, body)) if status.is_success() => {
                    log_call(call, status.as_u16(), started, retries);
                    return Ok((status, body));
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
                    log::debug!(
                        target: "pushwire",
                        "{} {} failed after {:.1} ms: {}",
                        call.method,
                        call.shown_path(),
                        started.elapsed().as_secs_f64() * 1e3,
                        e
                    );
                    let retryable = match call.idempotency {
                        Idempotency::Safe => true,
                        Idempotency::Unsafe => not_sent,
                    };
                    let err = if e.is_timeout() {
                        timeout_error(call, self.limits.timeout, outcome_unknown)
                    } else {
                        Error::Connection {
                            message: connection_message(call, &e, outcome_unknown),
                            outcome_unknown,
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
            log::info!(
                target: "pushwire",
                "retrying {} {} in {:.0} ms (retry {} of {}): {}",
                call.method,
                call.shown_path(),
                wait.as_secs_f64() * 1e3,
                retries + 1,
                self.limits.max_retries,
                err
            );
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
                        })
                    }
                }
            }
            retries += 1;
        }
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

    async fn attempt(
        &self,
        call: &Call,
        remaining: Duration,
    ) -> std::result::Result<(StatusCode, HeaderMap, bytes::Bytes), AttemptError> {
        let root = match call.iface {
            Iface::Main => &self.main_root,
            Iface::Events => match &self.events_root {
                Some(root) => root,
                None => &self.main_root,
            },
        };
        let mut url = match &self.events_endpoint {
            Some(url) if call.iface == Iface::Events && call.path == EVENTS_PATH => url.clone(),
            _ => url_of(root, &call.path),
        };
        if !call.query.is_empty() {
            url.query_pairs_mut()
                .extend_pairs(call.query.iter().map(|(k, v)| (*k, v.as_str())));
        }
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
        let mut resp = req.send().await?;
        let status = resp.status();
        // Only a failure's headers are read (Retry-After): a success keeps none.
        let headers = if status.is_success() {
            HeaderMap::new()
        } else {
            resp.headers().clone()
        };
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

/// Lets the connections of the running (current-thread) runtime read what arrived while
/// nothing ran them: a blocking client's between its calls, or during a progress callback
/// that held its thread. A connection the service closed meanwhile (an idle keep-alive
/// timeout, often shorter than the pool's 60 s) still looks open to the pool, and a request
/// would be written into it and fail with its outcome unknown. Two turns: the first reads
/// the sockets' news and queues their connections, the second runs them, and a closed one
/// leaves the pool before a request takes a connection from it (0.7 us).
pub async fn catch_up_connections() {
    tokio::task::yield_now().await;
    tokio::task::yield_now().await;
}

fn log_call(call: &Call, status: u16, started: Instant, retries: u32) {
    // Checked first: the arguments (the shown path is a new string) are built before the
    // logger is asked, which a batch would pay for on every event with logging off.
    if !log::log_enabled!(target: "pushwire", log::Level::Debug) {
        return;
    }
    log::debug!(
        target: "pushwire",
        "{} {} -> {} in {:.1} ms ({} retries)",
        call.method,
        call.shown_path(),
        status,
        started.elapsed().as_secs_f64() * 1e3,
        retries
    );
}

fn timeout_error(call: &Call, timeout: Duration, outcome_unknown: bool) -> Error {
    let mut message = format!(
        "{} {} did not finish within the timeout of {:.1} s",
        call.method,
        call.shown_path(),
        timeout.as_secs_f64()
    );
    if outcome_unknown {
        message.push_str("; the service may have processed it, so it was not retried");
    }
    Error::Timeout {
        message,
        outcome_unknown,
    }
}

/// The error of an answer over `max_response_size`: a write's outcome is unknown, as its
/// answer was not read.
fn too_large(call: &Call, status: StatusCode, announced: Option<u64>, limit: u64) -> Error {
    let outcome_unknown = call.method != Method::GET;
    let what = match announced {
        Some(n) => format!("announced {n} bytes (Content-Length)"),
        None => "went past it".to_string(),
    };
    let mut message = format!(
        "{} {}: the answer ({status}) {what}, over max_response_size={limit} bytes; the \
         connection was dropped without reading the rest",
        call.method,
        call.shown_path(),
    );
    if outcome_unknown {
        message.push_str("; the service may have processed it, so it was not retried");
    }
    Error::TooLarge {
        message,
        outcome_unknown,
        limit,
    }
}

fn connection_message(call: &Call, e: &reqwest::Error, outcome_unknown: bool) -> String {
    // reqwest's error text carries the URL but never headers, so the key cannot leak here.
    let mut cause = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        cause.push_str(": ");
        cause.push_str(&s.to_string());
        source = s.source();
    }
    let mut message = format!("{} {} failed: {cause}", call.method, call.shown_path());
    if outcome_unknown {
        message.push_str(
            "; the connection failed after the request was sent, so the outcome is unknown \
             and it was not retried",
        );
    }
    message
}

/// `Retry-After` in seconds or as an HTTP date.
fn retry_after(headers: &HeaderMap) -> Option<f64> {
    let v = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(secs) = v.parse::<f64>() {
        return Some(secs.max(0.0));
    }
    let at = chrono::DateTime::parse_from_rfc2822(v).ok()?;
    let secs = (at.timestamp_millis() - chrono::Utc::now().timestamp_millis()) as f64 / 1e3;
    Some(secs.max(0.0))
}

/// The error an answer carries, whichever interface's shape it has.
fn api_failure(iface: Iface, status: StatusCode, headers: &HeaderMap, body: &[u8]) -> ApiFailure {
    let parsed: Value = serde_json::from_slice(body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()));
    let mut failure = failure_from_body(status.as_u16(), parsed);
    if failure.message.is_empty() {
        failure.message = status
            .canonical_reason()
            .unwrap_or("request failed")
            .to_string();
    }
    failure.retry_after = retry_after(headers);
    match iface {
        Iface::Events => with_events_code(failure),
        Iface::Main => failure,
    }
}

/// What a redirect is told as: its target, and that it was not followed. The target as a
/// log may show it: percent-decoded (an encoded key would pass a search for the key), the
/// key blanked, control characters dropped, at most 300 characters.
fn redirect_message(status: StatusCode, headers: &HeaderMap, secret: Option<&str>) -> String {
    let target = match headers.get(reqwest::header::LOCATION) {
        Some(v) => {
            let mut shown = String::from_utf8_lossy(v.as_bytes()).into_owned();
            // Until nothing is left to decode (a key encoded twice), a few rounds at most.
            for _ in 0..4 {
                let decoded = percent_encoding::percent_decode_str(&shown)
                    .decode_utf8_lossy()
                    .into_owned();
                if decoded == shown {
                    break;
                }
                shown = decoded;
            }
            if let Some(secret) = secret {
                // Also as a form encodes a space (`+`).
                for spelling in [secret.to_string(), secret.replace(' ', "+")] {
                    shown = shown.replace(&spelling, crate::client::error::REDACTED);
                }
            }
            let mut shown: String = shown.chars().filter(|c| !c.is_control()).collect();
            if let Some((cut, _)) = shown.char_indices().nth(300) {
                shown.truncate(cut);
                shown.push_str("...");
            }
            format!("to {shown}")
        }
        None => "with no Location".to_string(),
    };
    format!(
        "the server answered {status} {target}; the service never redirects an API call, so \
         pushwire does not follow it and nothing was sent there (check base_url and events_url)"
    )
}

fn failure_from_body(status: u16, body: Value) -> ApiFailure {
    let text = |v: Option<&Value>| -> Option<String> {
        match v? {
            Value::String(s) if !s.is_empty() => Some(s.clone()),
            Value::Null => None,
            Value::String(_) => None,
            other => Some(other.to_string()),
        }
    };
    let error = body.get("error");
    let message = text(body.get("message"))
        .or_else(|| text(error.and_then(|e| e.get("message"))))
        .or_else(|| error.filter(|e| e.is_string()).and_then(|e| text(Some(e))))
        .or_else(|| body.as_str().map(|s| s.chars().take(500).collect()))
        .unwrap_or_default();
    let code = error.and_then(|e| e.get("code")).and_then(code_of);
    let details = error
        .and_then(|e| e.get("details"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    ApiFailure {
        status,
        message,
        body,
        code,
        details,
        retry_after: None,
        outcome_unknown: false,
    }
}

/// An error code given as a number or as its text.
fn code_of(c: &Value) -> Option<i64> {
    c.as_i64()
        .or_else(|| c.as_str().and_then(|s| s.trim().parse().ok()))
}

/// The events interface's code of a failure whose `error` object has none: its top-level
/// `error_code`, when not 0 (the success code).
fn with_events_code(mut failure: ApiFailure) -> ApiFailure {
    if failure.code.is_none() {
        failure.code = failure
            .body
            .get("error_code")
            .and_then(code_of)
            .filter(|c| *c != 0);
    }
    failure
}

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

#[cfg(test)]
mod tests {
    use super::*;

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

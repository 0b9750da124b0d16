//! A client's HTTP side: the connection pool with its headers, proxy and redirect policy,
//! both interfaces' roots, and the limits its calls run under.

use crate::message;
use crate::validate::FIELD;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, USER_AGENT};
use reqwest::Url;

use crate::client::error::{Error, Result};

use super::call::Iface;
use super::config::Config;
use super::memo::SiteMemo;
use super::options::extra_header;
use super::tls::tls_config;
use super::urls::{is_loopback, parsed_root, root_url, url_of, without_credentials};
use crate::operations::EVENTS_TRACK;

pub const USER_AGENT_VALUE: &str =
    concat!("pushwire-python/", env!("CARGO_PKG_VERSION"), " (rust)");

/// A client's HTTP side: one connection pool, both interfaces, and the limits its calls
/// run under. A [`with_limits`](Transport::with_limits) view shares the pool.
#[derive(Debug)]
pub struct Transport {
    pub(super) shared: Arc<Shared>,
    pub(super) limits: Limits,
}

/// A call's own limits, where they differ from its client's (`Client.with_options`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    pub timeout: Duration,
    pub max_retries: u32,
    pub max_response_size: u64,
}

/// What every view of a transport shares: the pool and the client's fixed settings.
#[derive(Debug)]
pub struct Shared {
    pub(super) http: reqwest::Client,
    /// Parsed once: a request only sets its path and query on a copy (a whole parse per
    /// request ran the host through IDNA mapping, about 8% of a small request's CPU).
    pub(super) main_root: Url,
    pub(super) events_root: Option<Url>,
    /// The whole URL of the event endpoint, which a batch posts to thousands of times: a
    /// copy, not a path set on the root (a path parse per event).
    pub(super) events_endpoint: Option<Url>,
    pub(super) backoff_base: Duration,
    pub(super) backoff_max: Duration,
    pub(super) slots: Option<Arc<tokio::sync::Semaphore>>,
    pub(super) max_connections: usize,
    /// The API key, to blank where an error answer echoes it; `None` for a key shorter than
    /// 8 characters, which is no secret (a test's `k1`) and would blank ordinary words.
    pub(super) secret: Option<String>,
    /// Which site the client acts on, as a record kept on disk may name it: a SHA-256 of the
    /// main root and the API key (never the key), in hex.
    pub(super) site: String,
    pub(super) memo: Arc<SiteMemo>,
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
                message!["no API key: pass ", FIELD, "= or set PUSHWIRE_API_KEY"],
            ));
        }
        let main = root_url(
            "base_url",
            &cfg.base_url,
            Iface::Main.prefix(),
            cfg.allow_insecure,
        )?;
        // The events interface is optional: a client that never tracks events needs no URL.
        let events = if cfg.events_url.trim().is_empty() {
            None
        } else {
            Some(root_url(
                "events_url",
                &cfg.events_url,
                Iface::Events.prefix(),
                cfg.allow_insecure,
            )?)
        };
        let mut headers = HeaderMap::new();
        let mut key = HeaderValue::from_str(cfg.api_key.trim()).map_err(|_| {
            Error::validation(
                "api_key",
                message![FIELD, " holds characters a header cannot carry"],
            )
        })?;
        key.set_sensitive(true);
        headers.insert(HeaderName::from_static("api-key"), key);
        headers.insert(USER_AGENT, HeaderValue::from_static(USER_AGENT_VALUE));
        for (k, v) in &cfg.default_headers {
            let (name, value) = extra_header("default_headers", k, v)?;
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
                        message![
                            FIELD,
                            format!(" is not a valid URL ({e}): {:?}", without_credentials(raw))
                        ],
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
            .map(|e| parsed_root(&format!("{e}{}", Iface::Events.prefix())))
            .transpose()?;
        let main_root = parsed_root(&format!("{main}{}", Iface::Main.prefix()))?;
        let shared = Shared {
            http,
            // As parsed (the scheme and host lowercased, a default port left out), so that
            // two spellings of one root are one site.
            site: site_of(main_root.as_str(), cfg.api_key.trim()),
            main_root,
            events_endpoint: events_root
                .as_ref()
                .map(|root| url_of(root, EVENTS_TRACK.on_root())),
            events_root,
            backoff_base: cfg.backoff_base,
            backoff_max: cfg.backoff_max,
            slots: cfg.slots.as_ref().map(|s| s.get()),
            max_connections: cfg.max_connections.unwrap_or(0),
            secret: Some(cfg.api_key.trim().to_string()).filter(|k| k.chars().count() >= 8),
            memo: cfg.memo.clone(),
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

    /// The limits its calls run under.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The same pool, its calls run under `limits` instead of the client's.
    pub fn with_limits(&self, limits: Limits) -> Transport {
        Transport {
            shared: self.shared.clone(),
            limits,
        }
    }

    /// The site the client acts on (its main root and API key), as a SHA-256 in hex: what a
    /// bulk call's checkpoint names, so that one made against one site is refused on another.
    pub fn site(&self) -> &str {
        &self.site
    }

    /// What the client remembers of its site between calls.
    pub fn memo(&self) -> &SiteMemo {
        &self.memo
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
}

/// The SHA-256, in hex, of a main root and an API key, each length-prefixed.
fn site_of(root: &str, api_key: &str) -> String {
    use sha2::{Digest, Sha256};
    let mut digest = Sha256::new();
    for part in [root, api_key] {
        digest.update((part.len() as u64).to_le_bytes());
        digest.update(part.as_bytes());
    }
    digest
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
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

impl Transport {
    /// The path of `url` after its interface's root as the caller gave it (`{base_url}` or
    /// `{events_url}`), when `url` is on that root (scheme, host, port and the root's own
    /// path): the interface's prefix and what follows it, for a URL under `{base_url}`. None for any other place, which
    /// the key must not go to.
    pub fn path_on_root(&self, iface: Iface, url: &str) -> Option<String> {
        let root = match iface {
            Iface::Main => &self.main_root,
            Iface::Events => self.events_root.as_ref()?,
        };
        let prefix = iface.prefix();
        let url = Url::parse(url).ok()?;
        let same_origin = url.scheme() == root.scheme()
            && url.host_str() == root.host_str()
            && url.port_or_known_default() == root.port_or_known_default()
            && url.username().is_empty()
            && url.password().is_none();
        let base = root.path().strip_suffix(prefix)?;
        let rest = url.path().strip_prefix(base)?;
        (same_origin && rest.starts_with('/')).then(|| rest.to_string())
    }
}

//! How a client is set up: its key, roots, limits, TLS and proxy settings.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use super::memo::SiteMemo;
use super::slots::Slots;

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
    /// The TLS settings of every pool made from this configuration
    /// ([`tls_config`](super::tls_config)); built by each transport when `None`. When set,
    /// `ca_bundle` is not read again.
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
    /// What the client remembers of its site, shared by every pool made from this
    /// configuration.
    pub memo: Arc<SiteMemo>,
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
            memo: Arc::default(),
        }
    }
}

/// The default bound on an answer's body: 64 MiB. The largest answers the API gives at the
/// spec's limits are about 1 MiB (`benches/largest_answer.py`: 500 campaigns of long fields
/// in one `triggers.list` page, 727 KiB; ten years of daily summary rows, 969 KiB), so the
/// bound is far from any real answer, and far below what an endless body from a broken
/// proxy would take before the deadline (gigabytes).
pub const DEFAULT_MAX_RESPONSE_SIZE: u64 = 64 << 20;

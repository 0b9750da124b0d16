//! Serving: where and as whom ([`Config`]), the accept loop, and a running [`Server`] on its
//! own runtime.
//!
//! The two interfaces listen on two ports, since the spec gives the event-tracking one its
//! own base address. Connections are served by hand over hyper (not `axum::serve`) so that a
//! fault can cut a connection without answering, as a real network does.

use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::Request;
use axum::Router;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::{watch, Notify};
use tower::ServiceExt;

use super::emu::Emu;
use super::gate::{read_timeout, ConnKill};
use super::guard::{self, AllowedHosts};
use super::keys::key_problem;
use super::persist;
use super::router::{events_router, main_router, Documents};
use super::state::State;

/// Where and as whom the emulator serves, and where its state is kept.
#[derive(Debug, Clone)]
pub struct Config {
    /// The key of the default site; empty: the default key of the state read at start
    /// (`state_file`, `load_from`), or `test-key` when none is.
    pub api_key: String,
    pub host: IpAddr,
    /// 0 picks a free port.
    pub port: u16,
    pub events_port: u16,
    pub worker_threads: usize,
    /// Names a request's `Host` may carry besides addresses, loopback names and this
    /// machine's name (see `guard`).
    pub allowed_hosts: Vec<String>,
    /// When set, every `/_emulator/` route asks for it (see `guard::AdminToken`).
    pub admin_token: Option<String>,
    /// Where the state is kept across restarts: read at start if it exists (else written
    /// empty, so that a path that cannot be written fails the start), written on a clean
    /// stop, on demand (`/_emulator/save`) and every `save_every` if given.
    pub state_file: Option<PathBuf>,
    pub save_every: Option<Duration>,
    /// A state file to start from, never written to (`Emulator.load`).
    pub load_from: Option<PathBuf>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            // The state file's default key, or test-key.
            api_key: String::new(),
            host: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 0,
            events_port: 0,
            worker_threads: 1,
            allowed_hosts: Vec::new(),
            admin_token: None,
            state_file: None,
            save_every: None,
            load_from: None,
        }
    }
}

/// The key of the default site when neither the configuration nor a state file gives one.
pub const DEFAULT_KEY: &str = "test-key";

/// The emulator a configuration starts with: the state of its state file or the file it is
/// loaded from, or an empty one. A file refused is an error of kind `InvalidData`, and is
/// left as it was.
fn initial(config: &Config) -> io::Result<Emu> {
    let refused = |e: persist::StateFileError| {
        let kind = match &e {
            persist::StateFileError::Io { source, .. } => source.kind(),
            _ => io::ErrorKind::InvalidData,
        };
        io::Error::new(kind, e.to_string())
    };
    if config.save_every.is_some() && config.state_file.is_none() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "save_every needs a state file to save to",
        ));
    }
    // A year at most: a longer period would overflow the timer's deadline.
    if config
        .save_every
        .is_some_and(|d| d.is_zero() || d > Duration::from_secs(366 * 86_400))
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "save_every must be more than 0 seconds and at most a year",
        ));
    }
    if let Some(path) = &config.state_file {
        persist::clear_leftovers(path);
    }
    let source = match (&config.state_file, &config.load_from) {
        (Some(_), Some(_)) => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "give a state file or a file to load from, not both",
            ))
        }
        (Some(path), None) => match std::fs::metadata(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            _ => Some(path),
        },
        (None, from) => from.as_ref(),
    };
    let loaded = source
        .map(|p| persist::load(p))
        .transpose()
        .map_err(refused)?;
    let (state, saved_key) = match loaded {
        Some(l) => (l.state, Some(l.default_key)),
        None => (State::empty(), None),
    };
    let key = match (&*config.api_key, saved_key) {
        ("", Some(saved)) => saved,
        ("", None) => DEFAULT_KEY.to_string(),
        (given, _) => given.to_string(),
    };
    if let Some(problem) = key_problem(&key) {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, problem));
    }
    let emu = Emu::with_state(&key, state, config.state_file.clone());
    if let (Some(path), None) = (&config.state_file, source) {
        // A new state file, written now: a path that cannot be written fails here, not at
        // the first save.
        persist::save(&emu, path).map_err(refused)?;
    }
    Ok(emu)
}

/// What to say at start when the emulator listens beyond this machine (`--host 0.0.0.0`, or
/// an address of a network interface), so that nobody leaves one open without knowing.
pub fn exposure_notice(host: IpAddr, admin_token: bool) -> Option<String> {
    if host.is_loopback() {
        return None;
    }
    let guard = if admin_token {
        "the admin API and the inspector ask for the admin token"
    } else {
        "anyone who can reach it can drive the admin API and the inspector: \
         give --admin-token (or PUSHWIRE_ADMIN_TOKEN) to ask for a token"
    };
    Some(format!(
        "PUSHWIRE_NOTICE=listening on {host}, beyond this machine: other machines can reach \
         the emulator; {guard}"
    ))
}

/// Accepts connections until `shutdown` turns true. Each connection carries a [`ConnKill`]
/// that a `drop` fault fires to close it without an answer.
pub async fn serve(listener: TcpListener, app: Router, mut shutdown: watch::Receiver<bool>) {
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of descriptors and the like: back off instead of spinning.
                    log::warn!("emulator accept failed: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                    continue;
                }
            },
            _ = shutdown.changed() => return,
        };
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let mut conn_shutdown = shutdown.clone();
        tokio::spawn(async move {
            let kill = Arc::new(Notify::new());
            let conn_kill = ConnKill(kill.clone());
            let svc = hyper::service::service_fn(move |mut req: Request<hyper::body::Incoming>| {
                req.extensions_mut().insert(conn_kill.clone());
                app.clone().oneshot(req.map(axum::body::Body::new))
            });
            // A head that never arrives (an idle or half-sent connection) is given up after
            // the read timeout, so idle sockets cannot pile up until accept fails.
            let conn = hyper::server::conn::http1::Builder::new()
                .keep_alive(true)
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(read_timeout())
                .serve_connection(TokioIo::new(stream), svc);
            tokio::select! {
                _ = conn => {}
                _ = kill.notified() => {}
                _ = conn_shutdown.changed() => {}
            }
        });
    }
}

/// A running emulator on its own runtime; dropping it stops it.
pub struct Server {
    emu: Arc<Emu>,
    main_addr: SocketAddr,
    events_addr: SocketAddr,
    shutdown: watch::Sender<bool>,
    runtime: Option<tokio::runtime::Runtime>,
    /// The lock on the state file, let go of after the last save.
    holder: Option<persist::Holder>,
}

impl Server {
    /// Binds both ports (errors surface here, before anything is served) and starts serving.
    pub fn start(config: Config) -> io::Result<Server> {
        if let Some(problem) = config.admin_token.as_deref().and_then(guard::token_problem) {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, problem));
        }
        let main = std::net::TcpListener::bind((config.host, config.port))?;
        let events = std::net::TcpListener::bind((config.host, config.events_port))?;
        main.set_nonblocking(true)?;
        events.set_nonblocking(true)?;
        let main_addr = main.local_addr()?;
        let events_addr = events.local_addr()?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(config.worker_threads.max(1))
            .thread_name("pushwire-emulator")
            .enable_all()
            .build()?;
        // Taken before the file is read: a second emulator on it is refused before anything.
        let holder = config
            .state_file
            .as_deref()
            .map(persist::Holder::take)
            .transpose()?;
        let emu = Arc::new(initial(&config)?);
        let (shutdown, rx) = watch::channel(false);
        {
            let _guard = runtime.enter();
            let main = TcpListener::from_std(main)?;
            let events = TcpListener::from_std(events)?;
            let documents = Documents::new(
                &format!("http://{main_addr}"),
                &format!("http://{events_addr}"),
            );
            let hosts = Arc::new(AllowedHosts::new(&config.allowed_hosts));
            let checked = |router: Router| {
                router.layer(axum::middleware::from_fn_with_state(
                    hosts.clone(),
                    guard::check_host,
                ))
            };
            let token = config
                .admin_token
                .as_ref()
                .map(|t| Arc::new(guard::AdminToken(t.clone())));
            let main_app = checked(main_router(emu.clone(), documents).layer(
                axum::middleware::from_fn_with_state(token, guard::check_token),
            ));
            runtime.spawn(serve(main, main_app, rx.clone()));
            runtime.spawn(serve(
                events,
                checked(events_router(emu.clone())),
                rx.clone(),
            ));
            if let Some(every) = config.save_every {
                runtime.spawn(save_every(emu.clone(), every, rx));
            }
        }
        Ok(Server {
            emu,
            main_addr,
            events_addr,
            shutdown,
            runtime: Some(runtime),
            holder,
        })
    }

    pub fn emu(&self) -> &Arc<Emu> {
        &self.emu
    }

    pub fn main_addr(&self) -> SocketAddr {
        self.main_addr
    }

    pub fn events_addr(&self) -> SocketAddr {
        self.events_addr
    }

    /// The main interface's root, without `/apiv1`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.main_addr)
    }

    /// The event-tracking interface's root, without `/api/v1`.
    pub fn events_url(&self) -> String {
        format!("http://{}", self.events_addr)
    }

    /// Stops serving, then saves the state to its state file if it has one: what the
    /// save did, `None` when it has no file or had stopped already.
    pub fn stop(&mut self) -> Option<Result<persist::Saved, persist::StateFileError>> {
        let _ = self.shutdown.send(true);
        let rt = self.runtime.take()?;
        rt.shutdown_background();
        let path = self.emu.state_file.clone()?;
        let saved = persist::save_last(&self.emu, &path);
        // Free for the next emulator once the last save is on disk.
        self.holder = None;
        Some(saved)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(Err(e)) = self.stop() {
            // Nobody is left to return it to.
            eprintln!("pushwire emulator: the state was not saved: {e}");
        }
    }
}

/// Saves the state every `every` while anything changed, until `shutdown` turns true. A save
/// that fails is said on standard error and tried again at the next tick.
async fn save_every(emu: Arc<Emu>, every: Duration, mut shutdown: watch::Receiver<bool>) {
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticks.tick().await;
    loop {
        tokio::select! {
            _ = ticks.tick() => {}
            _ = shutdown.changed() => return,
        }
        let emu = emu.clone();
        let saved = tokio::task::spawn_blocking(move || persist::save_if_changed(&emu)).await;
        if let Ok(Some(Err(e))) = saved {
            eprintln!("pushwire emulator: the periodic save failed: {e}");
        }
    }
}

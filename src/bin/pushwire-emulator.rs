//! `pushwire-emulator`: the emulator as one binary, without Python, for any language's test
//! suite (as stripe-mock and Mailpit ship one). The same flags as `python -m
//! pushwire.emulator`; it prints the URLs and the key it serves, one `NAME=value` a line,
//! and stops cleanly on SIGINT or SIGTERM (or when standard input closes, with
//! `--exit-with-parent`).

use std::io::{Read, Write};
use std::net::IpAddr;
use std::process::ExitCode;

use pushwire::emulator::server::exposure_notice;
use pushwire::emulator::state::{key_problem, DEFAULT_RETENTION};
use pushwire::emulator::{openapi, Config, Server};

const USAGE: &str = "\
Usage: pushwire-emulator [OPTIONS]

Serve a local emulator of the push notification service.

Options:
  --host HOST          address to listen on (default 127.0.0.1)
  --port PORT          main interface (default 8900; 0: any free)
  --events-port PORT   event-tracking interface (default: port + 1, or any free when port is 0)
  --api-key KEY        key of the default site (default: $PUSHWIRE_API_KEY, else the state
                       file's, else test-key)
  --no-request-log     do not keep the request log
  --retention N        keep the most recent N requests and N events per site, the oldest
                       pruned first (default 10000; 0 keeps all). The service's own state
                       (subscribers, segments, campaigns, deliveries, analytics) is never pruned
  --exit-with-parent   stop when standard input closes
  --allowed-host NAME  also answer requests to NAME (repeatable; .example.com for it and
                       every name under it, * for any): addresses, localhost and this
                       machine's name are always answered
  --admin-token TOKEN  ask every /_emulator/ route (admin API, inspector) for TOKEN
                       (default: $PUSHWIRE_ADMIN_TOKEN)
  --state FILE         keep the whole state in FILE across restarts: read at start (a file
                       that is not a sound state file of this version is refused, and left
                       as it is), written on a clean stop, on POST /_emulator/save, and
                       periodically if asked
  --save-every SECONDS also save every SECONDS while anything changed (with --state)
  --print-openapi      print the service's OpenAPI 3.1 document, its servers at the host
                       and ports given, and exit
  --print-admin-openapi
                       print the admin API's OpenAPI 3.1 document and exit
  -h, --help           print this help
  -V, --version        print the version";

struct Args {
    host: String,
    port: u16,
    events_port: Option<u16>,
    /// None: the state file's default key, or test-key.
    api_key: Option<String>,
    request_log: bool,
    retention: usize,
    exit_with_parent: bool,
    allowed_hosts: Vec<String>,
    admin_token: Option<String>,
    state: Option<std::path::PathBuf>,
    save_every: Option<std::time::Duration>,
    /// Print a document instead of serving: the service's, or the admin API's.
    print: Option<Document>,
}

#[derive(Clone, Copy)]
enum Document {
    Service,
    Admin,
}

/// The environment's `name`, unless unset or empty.
fn set_in_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// The command line, or the message to exit with (help and version exit 0).
fn parse() -> Result<Args, (String, u8)> {
    use lexopt::prelude::*;
    let mut args = Args {
        host: "127.0.0.1".into(),
        port: 8900,
        events_port: None,
        api_key: set_in_env("PUSHWIRE_API_KEY"),
        request_log: true,
        retention: DEFAULT_RETENTION,
        exit_with_parent: false,
        allowed_hosts: Vec::new(),
        admin_token: set_in_env("PUSHWIRE_ADMIN_TOKEN"),
        state: None,
        save_every: None,
        print: None,
    };
    let bad = |e: lexopt::Error| (format!("pushwire-emulator: {e}\n\n{USAGE}"), 2);
    let mut parser = lexopt::Parser::from_env();
    while let Some(arg) = parser.next().map_err(bad)? {
        match arg {
            Long("host") => args.host = parser.value().map_err(bad)?.string().map_err(bad)?,
            Long("port") => args.port = parser.value().map_err(bad)?.parse().map_err(bad)?,
            Long("events-port") => {
                args.events_port = Some(parser.value().map_err(bad)?.parse().map_err(bad)?)
            }
            Long("api-key") => {
                args.api_key = Some(parser.value().map_err(bad)?.string().map_err(bad)?)
            }
            Long("no-request-log") => args.request_log = false,
            Long("retention") => {
                args.retention = parser.value().map_err(bad)?.parse().map_err(bad)?
            }
            Long("exit-with-parent") => args.exit_with_parent = true,
            Long("admin-token") => {
                args.admin_token = Some(parser.value().map_err(bad)?.string().map_err(bad)?)
            }
            Long("allowed-host") => args
                .allowed_hosts
                .push(parser.value().map_err(bad)?.string().map_err(bad)?),
            Long("state") => args.state = Some(parser.value().map_err(bad)?.into()),
            Long("save-every") => {
                let raw: String = parser.value().map_err(bad)?.string().map_err(bad)?;
                let every = raw
                    .parse::<f64>()
                    .ok()
                    .and_then(|s| std::time::Duration::try_from_secs_f64(s).ok())
                    .filter(|d| !d.is_zero())
                    .ok_or_else(|| {
                        (
                            format!("pushwire-emulator: --save-every takes seconds above 0, got {raw:?}"),
                            2,
                        )
                    })?;
                args.save_every = Some(every);
            }
            Long("print-openapi") => args.print = Some(Document::Service),
            Long("print-admin-openapi") => args.print = Some(Document::Admin),
            Short('h') | Long("help") => return Err((USAGE.to_string(), 0)),
            Short('V') | Long("version") => {
                return Err((
                    format!("pushwire-emulator {}", env!("CARGO_PKG_VERSION")),
                    0,
                ))
            }
            _ => return Err(bad(arg.unexpected())),
        }
    }
    Ok(args)
}

/// What stops the emulator: SIGINT or SIGTERM, or standard input closing (with
/// `--exit-with-parent`). Listening starts when it is made, before anything is printed, so a
/// parent that signals as soon as it reads the URLs always gets a clean stop.
struct Stop {
    runtime: tokio::runtime::Runtime,
    #[cfg(unix)]
    signals: [tokio::signal::unix::Signal; 2],
    closed: Option<tokio::sync::oneshot::Receiver<()>>,
}

impl Stop {
    fn listen(stdin: bool) -> std::io::Result<Stop> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        #[cfg(unix)]
        let signals = {
            use tokio::signal::unix::{signal, SignalKind};
            let _inside = runtime.enter();
            [
                signal(SignalKind::interrupt())?,
                signal(SignalKind::terminate())?,
            ]
        };
        let closed = stdin.then(|| {
            let (tx, rx) = tokio::sync::oneshot::channel::<()>();
            // A thread: reading a pipe to its end is blocking work.
            std::thread::spawn(move || {
                let mut sink = [0u8; 4096];
                let mut input = std::io::stdin().lock();
                while matches!(input.read(&mut sink), Ok(n) if n > 0) {}
                let _ = tx.send(());
            });
            rx
        });
        Ok(Stop {
            runtime,
            #[cfg(unix)]
            signals,
            closed,
        })
    }

    fn wait(self) {
        let Stop {
            runtime,
            #[cfg(unix)]
            mut signals,
            closed,
        } = self;
        runtime.block_on(async move {
            let closed = async {
                match closed {
                    Some(rx) => {
                        let _ = rx.await;
                    }
                    None => std::future::pending().await,
                }
            };
            #[cfg(unix)]
            {
                let [interrupt, terminate] = &mut signals;
                tokio::select! {
                    _ = interrupt.recv() => {}
                    _ = terminate.recv() => {}
                    _ = closed => {}
                }
            }
            #[cfg(not(unix))]
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = closed => {}
            }
        });
    }
}

/// A line on standard output; a parent that closed its end is no error (it is going away).
fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}").and_then(|()| out.flush());
}

/// A refused setting, said on standard output too, where a parent reads the URLs (as
/// `python -m pushwire.emulator` says it).
fn refuse(message: &str) -> ExitCode {
    say(&format!("PUSHWIRE_REFUSED={message}"));
    eprintln!("pushwire-emulator: {message}");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(args) => args,
        Err((message, 0)) => {
            say(&message);
            return ExitCode::SUCCESS;
        }
        Err((message, code)) => {
            eprintln!("{message}");
            return ExitCode::from(code);
        }
    };
    // Given, it must be a key (empty is the configuration's "the state file's").
    if let Some(problem) = args.api_key.as_deref().and_then(key_problem) {
        return refuse(problem);
    }
    let Ok(host) = args.host.parse::<IpAddr>() else {
        return refuse(&format!("host must be an IP address, got {:?}", args.host));
    };
    let events_port = match args.events_port {
        Some(p) => p,
        None if args.port == 0 => 0,
        None => match args.port.checked_add(1) {
            Some(p) => p,
            None => return refuse("--port 65535 leaves no port after it: give --events-port"),
        },
    };
    if let Some(document) = args.print {
        let base_url = format!("http://{}", std::net::SocketAddr::new(host, args.port));
        let events_url = format!("http://{}", std::net::SocketAddr::new(host, events_port));
        let doc = match document {
            Document::Service => openapi::document(&base_url, &events_url),
            Document::Admin => openapi::admin_document(&base_url),
        };
        let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
        say(&text);
        return ExitCode::SUCCESS;
    }
    let stop = match Stop::listen(args.exit_with_parent) {
        Ok(stop) => stop,
        Err(e) => return refuse(&format!("signals could not be watched: {e}")),
    };
    let config = Config {
        api_key: args.api_key.clone().unwrap_or_default(),
        host,
        port: args.port,
        events_port,
        worker_threads: 2,
        allowed_hosts: args.allowed_hosts.clone(),
        admin_token: args.admin_token.clone(),
        state_file: args.state.clone(),
        save_every: args.save_every,
        load_from: None,
    };
    let mut server = match Server::start(config) {
        Ok(server) => server,
        Err(e) => return refuse(&e.to_string()),
    };
    let emu = server.emu();
    emu.record_requests
        .store(args.request_log, std::sync::atomic::Ordering::Relaxed);
    emu.set_retention(args.retention);
    say(&format!(
        "PUSHWIRE_BASE_URL={}\nPUSHWIRE_EVENTS_URL={}\nPUSHWIRE_API_KEY={}\n\
         PUSHWIRE_UI_URL={}/_emulator/ui",
        server.base_url(),
        server.events_url(),
        emu.default_key,
        server.base_url()
    ));
    if let Some(path) = &emu.state_file {
        say(&format!("PUSHWIRE_STATE={}", path.display()));
    }
    if let Some(notice) = exposure_notice(host, args.admin_token.is_some()) {
        say(&notice);
    }
    say("serving; Ctrl-C to stop");
    stop.wait();
    let saved = server.stop();
    match saved {
        Some(Ok(saved)) => say(&format!("PUSHWIRE_SAVED={}", saved.path.display())),
        Some(Err(e)) => {
            eprintln!("pushwire-emulator: {e}");
            say("stopped");
            return ExitCode::FAILURE;
        }
        None => {}
    }
    say("stopped");
    ExitCode::SUCCESS
}

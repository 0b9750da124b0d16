//! `pushwire-emulator`: the emulator as one binary, without Python, for any language's test
//! suite (as stripe-mock and Mailpit ship one). The same flags as `python -m
//! pushwire.emulator`; it prints the URLs and the key it serves, one `NAME=value` a line,
//! and stops cleanly on SIGINT or SIGTERM (or when standard input closes, with
//! `--exit-with-parent`).

use std::io::{Read, Write};
use std::net::IpAddr;
use std::process::ExitCode;

use pushwire::emulator::state::DEFAULT_RETENTION;
use pushwire::emulator::{Config, Server};

const USAGE: &str = "\
Usage: pushwire-emulator [OPTIONS]

Serve a local emulator of the push notification service.

Options:
  --host HOST          address to listen on (default 127.0.0.1)
  --port PORT          main interface (default 8900; 0: any free)
  --events-port PORT   event-tracking interface (default: port + 1, or any free when port is 0)
  --api-key KEY        key of the default site (default: $PUSHWIRE_API_KEY or test-key)
  --no-request-log     do not keep the request log
  --retention N        keep the most recent N requests and N events per site, the oldest
                       pruned first (default 10000; 0 keeps all). The service's own state
                       (subscribers, segments, campaigns, deliveries, analytics) is never pruned
  --exit-with-parent   stop when standard input closes
  -h, --help           print this help
  -V, --version        print the version";

struct Args {
    host: IpAddr,
    port: u16,
    events_port: Option<u16>,
    api_key: String,
    request_log: bool,
    retention: usize,
    exit_with_parent: bool,
}

/// The command line, or the message to exit with (help and version exit 0).
fn parse() -> Result<Args, (String, u8)> {
    use lexopt::prelude::*;
    let mut args = Args {
        host: IpAddr::from([127, 0, 0, 1]),
        port: 8900,
        events_port: None,
        api_key: std::env::var("PUSHWIRE_API_KEY").unwrap_or_else(|_| "test-key".into()),
        request_log: true,
        retention: DEFAULT_RETENTION,
        exit_with_parent: false,
    };
    let bad = |e: lexopt::Error| (format!("pushwire-emulator: {e}\n\n{USAGE}"), 2);
    let mut parser = lexopt::Parser::from_env();
    while let Some(arg) = parser.next().map_err(bad)? {
        match arg {
            Long("host") => {
                let raw: String = parser.value().map_err(bad)?.string().map_err(bad)?;
                args.host = raw.parse().map_err(|_| {
                    (
                        format!("pushwire-emulator: --host must be an IP address, got {raw:?}"),
                        2,
                    )
                })?;
            }
            Long("port") => args.port = parser.value().map_err(bad)?.parse().map_err(bad)?,
            Long("events-port") => {
                args.events_port = Some(parser.value().map_err(bad)?.parse().map_err(bad)?)
            }
            Long("api-key") => args.api_key = parser.value().map_err(bad)?.string().map_err(bad)?,
            Long("no-request-log") => args.request_log = false,
            Long("retention") => {
                args.retention = parser.value().map_err(bad)?.parse().map_err(bad)?
            }
            Long("exit-with-parent") => args.exit_with_parent = true,
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

/// Waits for SIGINT or SIGTERM, or for standard input to close when `stdin` is set.
fn wait_for_stop(stdin: bool) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let (closed_tx, closed_rx) = tokio::sync::oneshot::channel::<()>();
        if stdin {
            // A thread: reading a pipe to its end is blocking work.
            std::thread::spawn(move || {
                let mut sink = [0u8; 4096];
                let mut input = std::io::stdin().lock();
                while matches!(input.read(&mut sink), Ok(n) if n > 0) {}
                let _ = closed_tx.send(());
            });
        } else {
            std::mem::forget(closed_tx);
        }
        #[cfg(unix)]
        let terminate = async {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut s) => {
                    s.recv().await;
                }
                Err(_) => std::future::pending().await,
            }
        };
        #[cfg(not(unix))]
        let terminate = std::future::pending::<()>();
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = terminate => {}
            _ = closed_rx => {}
        }
        Ok(())
    })
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(args) => args,
        Err((message, code)) => {
            if code == 0 {
                println!("{message}");
            } else {
                eprintln!("{message}");
            }
            return ExitCode::from(code);
        }
    };
    let events_port = args.events_port.unwrap_or(if args.port == 0 {
        0
    } else {
        args.port.saturating_add(1)
    });
    let config = Config {
        api_key: args.api_key.clone(),
        host: args.host,
        port: args.port,
        events_port,
        worker_threads: 2,
    };
    let mut server = match Server::start(config) {
        Ok(server) => server,
        Err(e) => {
            // A refused setting is said on standard output too, where a parent reads the
            // URLs (as `python -m pushwire.emulator` says it).
            println!("PUSHWIRE_REFUSED={e}");
            eprintln!("pushwire-emulator: {e}");
            return ExitCode::from(2);
        }
    };
    let emu = server.emu();
    emu.record_requests
        .store(args.request_log, std::sync::atomic::Ordering::Relaxed);
    emu.set_retention(args.retention);
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "PUSHWIRE_BASE_URL={}", server.base_url());
    let _ = writeln!(out, "PUSHWIRE_EVENTS_URL={}", server.events_url());
    let _ = writeln!(out, "PUSHWIRE_API_KEY={}", args.api_key);
    let _ = writeln!(out, "serving; Ctrl-C to stop");
    let _ = out.flush();
    drop(out);
    let waited = wait_for_stop(args.exit_with_parent);
    server.stop();
    match waited {
        Ok(()) => {
            println!("stopped");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("pushwire-emulator: {e}");
            ExitCode::FAILURE
        }
    }
}

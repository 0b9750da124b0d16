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
//!
//! One file per concern: `call` (what a resource describes), `config`, `tls`, `urls` and
//! `pool` (a client's HTTP side and its setup), `slots` (the bound on requests in flight),
//! `retry` (attempts within the deadline), `read` (one attempt, its answer within its cap),
//! `failure` (how a failed call is told), `envelope` (decoding a successful answer) and
//! `options` (what one call adds to its request: extra headers, query and body, and the raw
//! answer kept for `with_raw_response`).

mod call;
mod config;
mod envelope;
mod failure;
mod memo;
mod observe;
mod options;
mod pool;
mod read;
mod retry;
mod slots;
mod tls;
mod urls;

pub use call::{Body, Call, Idempotency, Iface};
pub use config::{Config, DEFAULT_MAX_RESPONSE_SIZE};
pub use envelope::{decode, Ack, Data, Envelope};
pub use memo::SiteMemo;
pub use observe::{Attempt, Ended, Observed, Observer};
pub use options::{emit_log, extra_header, form_of, CallOptions, RawAnswer};
pub use pool::{catch_up_connections, Limits, Shared, Transport, USER_AGENT_VALUE};
pub use slots::Slots;
pub use tls::tls_config;

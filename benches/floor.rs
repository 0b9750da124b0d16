//! Case 1's floors below the Python call: sequential `GET /apiv1/segments` round trips from
//! Rust alone, on a current-thread runtime with the same short spin as the extension's
//! blocking calls (`src/bindings/busy_poll.rs`), against an emulator running in its own process.
//!
//! - `reqwest alone`: one bare `reqwest` GET and a `serde_json::Value` parse per call;
//! - `pushwire core`: `client::segments::list`, the core's typed call (validation, the
//!   connection slot, retries and deadline, the typed decode), with no Python.
//!
//! What the Python call adds is the difference between `pushwire core` and the extension's
//! `Client.segments.list()` (measured by `benches/profile.py`, which runs this).
//!
//!     cargo run --release --example floor -- BASE_URL API_KEY [CALLS]
//!
//! Prints one line per floor: `name<TAB>median us/call<TAB>each run's us/call, comma-separated`.

use std::future::Future;
use std::time::{Duration, Instant};

use pushwire::client::{segments, Config, Transport};
use pushwire::model::SegmentsQuery;

/// Runs `make()`'s future `n` times in a row, each polled with the extension's spin (no
/// parking while the answer is on its way), and returns microseconds per call.
fn timed<F: Future<Output = ()>>(
    rt: &tokio::runtime::Runtime,
    n: usize,
    mut make: impl FnMut() -> F,
) -> f64 {
    let started = Instant::now();
    for _ in 0..n {
        rt.block_on(async {
            let fut = make();
            tokio::pin!(fut);
            loop {
                tokio::select! {
                    biased;
                    () = &mut fut => return,
                    () = tokio::task::yield_now() => {}
                }
            }
        });
    }
    started.elapsed().as_secs_f64() / n as f64 * 1e6
}

fn median(mut runs: Vec<f64>) -> f64 {
    runs.sort_by(f64::total_cmp);
    runs[runs.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(base_url), Some(key)) = (args.next(), args.next()) else {
        eprintln!("usage: floor BASE_URL API_KEY [CALLS]");
        std::process::exit(2);
    };
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(5000);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let url = format!("{}/apiv1/segments", base_url.trim_end_matches('/'));
    let http = reqwest::Client::builder()
        .tcp_nodelay(true)
        .build()
        .expect("reqwest client");
    let bare = || {
        let (http, url, key) = (&http, &url, &key);
        async move {
            let resp = http
                .get(url.as_str())
                .header("api-key", key.as_str())
                .timeout(Duration::from_secs(30))
                .send()
                .await
                .expect("the emulator answers");
            let body = resp.bytes().await.expect("a body");
            let v: serde_json::Value = serde_json::from_slice(&body).expect("JSON");
            std::hint::black_box(v);
        }
    };
    // The Python client's defaults (max_connections=100 is its slot bound).
    let config = Config::new(&key, &base_url, "").with_max_connections(Some(100));
    let transport = Transport::new(&config).expect("transport");
    let core = || {
        let t = &transport;
        async move {
            let list = segments::list(t, &SegmentsQuery::default())
                .await
                .expect("the emulator answers");
            std::hint::black_box(list);
        }
    };
    // Warm-up: connections opened, code paged in.
    timed(&rt, n / 10, bare);
    timed(&rt, n / 10, core);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    // Alternating, so the machine's drift hits both alike.
    for _ in 0..5 {
        a.push(timed(&rt, n, bare));
        b.push(timed(&rt, n, core));
    }
    for (name, runs) in [("reqwest alone", a), ("pushwire core", b)] {
        let each: Vec<String> = runs.iter().map(|r| format!("{r:.1}")).collect();
        println!("{name}\t{:.1}\t{}", median(runs.clone()), each.join(","));
    }
}

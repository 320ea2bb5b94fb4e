//! Webhook delivery throughput, measured side by side with its ceiling in one run: a bare loop
//! that signs and POSTs the same bodies to the same local receiver with the same transport and
//! concurrency, but no outbox. Then the real dispatcher (claim, open secret, sign, send, record)
//! on SQLite, on PostgreSQL, and two dispatchers sharing one PostgreSQL database. Loopback only.
//!
//! And the store's side alone: the dispatcher's own store calls (claim, prepare, record) with
//! no network, on one thread for SQLite (one writer) and `--store-workers` threads (4) for
//! PostgreSQL. On one machine the dispatcher does both kinds of work on the same cores, so it
//! can go no faster than `1 / (1/loop + 1/store alone)`; each round prints the dispatcher's
//! rate over that bound too.
//!
//! `cargo bench -p pay-server --bench webhooks [-- --rounds 3 --deliveries 5000]`; PostgreSQL
//! from `PAY_TEST_POSTGRES_URL` (skipped with a line when unset; a failure when
//! `PAY_REQUIRE_ALL_TESTS=1`).
//!
//! `-- --smoke` (CI, with `cargo bench --profile dev`): one round of 200 deliveries, to show the
//! benchmark still works; its figures mean nothing. Every run checks that it measured: every
//! send answered 2xx, every queued delivery attempted once, the receiver got exactly the requests
//! sent, no rate is zero; a failed check panics (non-zero exit).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use actix_web::{web, App, HttpResponse, HttpServer};
use futures_util::StreamExt;
use pay_domain::app::Pay;
use pay_domain::kernel::secret::Secret;
use pay_domain::webhooks::ports::WebhookSigner;
use pay_domain::webhooks::OutboundRequest;
use pay_server::{build_dispatcher, build_pay, open_store, Config};
use pay_store::testing::TestDb;
use pay_webhooks::{HmacSigner, HttpTransport, TransportConfig};

const CONCURRENCY: usize = 32;

#[path = "support/args.rs"]
mod args;
#[path = "support/outbox.rs"]
mod outbox;
use args::{arg, flag};
use outbox::{analyze, measured, median, Tenant};

/// A local receiver answering 204 after `delay` (zero: at once).
fn start_receiver(count: Arc<AtomicU64>, delay: std::time::Duration) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = HttpServer::new(move || {
        let count = count.clone();
        App::new().default_service(web::to(move |_body: web::Bytes| {
            count.fetch_add(1, Ordering::Relaxed);
            async move {
                if !delay.is_zero() {
                    actix_rt::time::sleep(delay).await;
                }
                HttpResponse::NoContent().finish()
            }
        }))
    })
    .workers(1)
    .listen(listener)
    .unwrap()
    .run();
    actix_rt::spawn(server);
    format!("http://127.0.0.1:{port}/hook")
}

/// The ceiling: sign and POST `n` bodies, `in_flight` at a time (1: a plain loop).
async fn bare_loop(url: &str, n: usize, body: &str, in_flight: usize) -> f64 {
    let transport = HttpTransport::new(TransportConfig {
        allow_private: true,
        ..TransportConfig::default()
    })
    .unwrap();
    let secret = vec![Secret::new(
        "whsec_benchbenchbenchbenchbenchbenchbenchbenchben",
    )];
    let start = Instant::now();
    futures_util::stream::iter(0..n)
        .for_each_concurrent(in_flight, |i| {
            let transport = &transport;
            let secret = &secret;
            async move {
                let t = time::OffsetDateTime::now_utc().unix_timestamp();
                let id = uuid::Uuid::from_u128(i as u128);
                let req = OutboundRequest {
                    delivery_id: id,
                    url: url.to_owned(),
                    headers: vec![
                        ("content-type".into(), "application/json".into()),
                        ("user-agent".into(), "Pay-Webhooks/1.0".into()),
                        ("x-pay-delivery-id".into(), id.to_string()),
                        ("x-pay-attempt".into(), "1".into()),
                        (
                            "x-pay-signature".into(),
                            HmacSigner.signature_header(secret, t, body.as_bytes()),
                        ),
                    ],
                    body: body.to_owned(),
                    attempt: 1,
                };
                let out = transport.send(&req).await;
                assert!(out.is_success(), "{out:?}");
            }
        })
        .await;
    measured(
        "sign-and-POST loop",
        n as f64 / start.elapsed().as_secs_f64(),
    )
}

/// Queues `n` deliveries spread over `endpoints` tenants whose callbacks are all `url` (one
/// endpoint each: a company's URL), interleaved as many merchants' events arrive.
async fn queue(pay: &Pay, db_url: &str, url: &str, n: usize, endpoints: usize) {
    let pay = pay.clone();
    let url = url.to_owned();
    tokio::task::spawn_blocking(move || {
        let tenants: Vec<Tenant> = (0..endpoints).map(|_| Tenant::new(&pay, &url)).collect();
        for i in 0..n {
            tenants[i % endpoints].event(&pay);
        }
    })
    .await
    .unwrap();
    analyze(db_url);
}

/// The dispatcher(s) draining `n` queued deliveries (see `queue`); deliveries per second.
async fn dispatch(db_url: &str, url: &str, n: usize, dispatchers: usize, endpoints: usize) -> f64 {
    let mut config = Config::for_database(db_url);
    config.allow_private_targets = true;
    let pays: Vec<_> = (0..dispatchers)
        .map(|_| build_pay(&config, open_store(&config).unwrap()).unwrap())
        .collect();
    queue(&pays[0], db_url, url, n, endpoints).await;
    let ds: Vec<_> = pays
        .into_iter()
        .map(|p| build_dispatcher(&config, p).unwrap())
        .collect();
    let start = Instant::now();
    let done = futures_util::future::join_all(ds.iter().map(|d| d.drain())).await;
    let elapsed = start.elapsed().as_secs_f64();
    let total: usize = done.into_iter().map(|r| r.unwrap()).sum();
    assert_eq!(total, n, "every delivery attempted once");
    measured("dispatcher", n as f64 / elapsed)
}

/// The dispatcher's own store work with no network: claim a share of one endpoint
/// (`ENDPOINT_HELD`), prepare each signed request, record a 204 for each in one transaction,
/// until nothing is due; `workers` threads at once (claims skip each other's rows, as two
/// dispatchers' do). Deliveries per second.
async fn store_alone(db_url: &str, url: &str, n: usize, workers: usize) -> f64 {
    let config = Config::for_database(db_url);
    let pay = build_pay(&config, open_store(&config).unwrap()).unwrap();
    queue(&pay, db_url, url, n, 1).await;
    let start = Instant::now();
    let handles: Vec<_> = (0..workers)
        .map(|_| {
            let pay = pay.clone();
            tokio::task::spawn_blocking(move || record_all(&pay))
        })
        .collect();
    let mut done = 0;
    for h in handles {
        done += h.await.unwrap();
    }
    let elapsed = start.elapsed().as_secs_f64();
    assert_eq!(done, n, "every delivery recorded once");
    measured("store alone", n as f64 / elapsed)
}

/// `store_alone`'s loop on one thread; how many deliveries it recorded.
fn record_all(pay: &Pay) -> usize {
    use pay_domain::webhooks::{AttemptOutcome, ENDPOINT_HELD};
    let hooks = pay.webhooks();
    let mut done = 0;
    loop {
        let claimed = hooks.claim_due_deliveries(ENDPOINT_HELD).unwrap();
        if claimed.is_empty() {
            break;
        }
        let prepared = hooks.prepare_attempts(&claimed);
        let made: Vec<_> = claimed
            .into_iter()
            .zip(prepared)
            .map(|(d, p)| {
                assert!(p.is_ok(), "prepared");
                let answered = AttemptOutcome {
                    status: Some(204),
                    duration_ms: 0,
                    error: None,
                    response_excerpt: None,
                    retry_after: None,
                };
                (d, answered)
            })
            .collect();
        let k = made.len();
        assert_eq!(hooks.record_attempts(made).unwrap().recorded, k);
        done += k;
    }
    done
}

/// The rate of doing both the network's work (at `net`/s alone) and the store's (at `store`/s
/// alone) for each delivery, when the two share the same cores: `1 / (1/net + 1/store)`.
fn shared(net: f64, store: f64) -> f64 {
    1.0 / (1.0 / net + 1.0 / store)
}

fn main() {
    let smoke = flag("--smoke");
    let rounds = arg("--rounds", if smoke { 1 } else { 3 });
    let n = arg("--deliveries", if smoke { 200 } else { 5000 });
    let delay_ms = arg("--delay-ms", 0);
    let store_workers = arg("--store-workers", 4).max(1);
    if delay_ms > 0 {
        return slow_receiver(smoke, rounds, n, delay_ms);
    }
    actix_rt::System::new().block_on(async move {
        // One endpoint: its share of sends in flight is the loop's 32.
        let endpoints = 1;
        let count = Arc::new(AtomicU64::new(0));
        let url = start_receiver(count.clone(), std::time::Duration::ZERO);
        let body = serde_json::json!({"type": "pay.webhook.test", "paymentLink": {"amount": "12.50", "note": "x".repeat(600)}}).to_string();
        let mut ceiling_r = Vec::new();
        let mut sequential_r = Vec::new();
        let mut pg1_seq_r = Vec::new();
        let (mut sqlite_r, mut pg1_r, mut pg2_r) = (Vec::new(), Vec::new(), Vec::new());
        let (mut sqlite_store_r, mut sqlite_shared_r) = (Vec::new(), Vec::new());
        let (mut pg_store_r, mut pg_shared_r) = (Vec::new(), Vec::new());
        let pg_available = std::env::var("PAY_TEST_POSTGRES_URL").is_ok();
        if !pg_available {
            assert!(
                !pay_store::testing::require_all_tests(),
                "PAY_REQUIRE_ALL_TESTS=1 but PAY_TEST_POSTGRES_URL is not set: the PostgreSQL \
                 rounds cannot run"
            );
            eprintln!("SKIP: PostgreSQL rounds (set PAY_TEST_POSTGRES_URL)");
        }
        // Requests the receiver must have got: two bare loops and one SQLite dispatcher per
        // round, and two PostgreSQL runs (one dispatcher, two dispatchers) when available.
        let per_round = if pg_available { 5 } else { 3 };
        for round in 1..=rounds {
            let sequential = bare_loop(&url, n, &body, 1).await;
            sequential_r.push(sequential);
            let ceiling = bare_loop(&url, n, &body, CONCURRENCY).await;
            ceiling_r.push(ceiling);
            let db = TestDb::sqlite();
            let s = dispatch(&db.url, &url, n, 1, endpoints).await;
            sqlite_r.push(s / ceiling);
            let db = TestDb::sqlite();
            // One thread: SQLite has one writer.
            let s_store = store_alone(&db.url, &url, n, 1).await;
            sqlite_store_r.push(s_store / ceiling);
            sqlite_shared_r.push(s / shared(ceiling, s_store));
            let mut line = format!(
                "round {round}: plain loop {sequential:.0}/s, {CONCURRENCY} in flight {ceiling:.0}/s, \
                 sqlite {s:.0}/s (store alone {s_store:.0}/s; {:.2} of both on shared cores)",
                s / shared(ceiling, s_store)
            );
            if pg_available {
                let db = TestDb::postgres().unwrap();
                let one = dispatch(&db.url, &url, n, 1, endpoints).await;
                let db = TestDb::postgres().unwrap();
                let two = dispatch(&db.url, &url, n, 2, endpoints).await;
                let db = TestDb::postgres().unwrap();
                let p_store = store_alone(&db.url, &url, n, store_workers).await;
                pg1_r.push(one / ceiling);
                pg1_seq_r.push(one / sequential);
                pg2_r.push(two / one);
                pg_store_r.push(p_store / ceiling);
                pg_shared_r.push(one / shared(ceiling, p_store));
                line += &format!(
                    ", postgres one {one:.0}/s, two {two:.0}/s (store alone {p_store:.0}/s; \
                     {:.2} of both on shared cores)",
                    one / shared(ceiling, p_store)
                );
            }
            println!("{line}");
        }
        println!("median plain sign-and-POST loop (one in flight): {:.0}/s", median(sequential_r));
        println!("median sign-and-POST with {CONCURRENCY} in flight: {:.0}/s", median(ceiling_r.clone()));
        println!("median SQLite dispatcher / {CONCURRENCY} in flight: {:.2}", median(sqlite_r));
        println!("median SQLite store alone / {CONCURRENCY} in flight: {:.2}", median(sqlite_store_r));
        println!("median SQLite dispatcher / both on shared cores: {:.2}", median(sqlite_shared_r));
        if !pg1_r.is_empty() {
            println!("median PostgreSQL one dispatcher / plain loop: {:.2}", median(pg1_seq_r));
            println!("median PostgreSQL one dispatcher / {CONCURRENCY} in flight: {:.2}", median(pg1_r));
            println!("median PostgreSQL store alone / {CONCURRENCY} in flight: {:.2}", median(pg_store_r));
            println!("median PostgreSQL one dispatcher / both on shared cores: {:.2}", median(pg_shared_r));
            println!("median PostgreSQL two dispatchers / one: {:.2}", median(pg2_r));
        }
        let got = count.load(Ordering::Relaxed);
        println!("receiver got {got} requests");
        assert_eq!(
            got,
            (per_round * rounds * n) as u64,
            "the receiver got every request sent, once"
        );
        if smoke {
            println!("smoke run ok: every figure measured, no errors");
        }
    });
}

/// `--delay-ms D`: a receiver answering after D ms. A dispatcher can then go no faster than its
/// sends in flight allow (`in flight / latency`); the figure is its rate over that bound, and two
/// dispatchers on one PostgreSQL database over one. The deliveries go to `--endpoints E`
/// companies (16 by default) sharing the receiver, so that the bound is the dispatcher's own
/// `IN_FLIGHT`, not one endpoint's share.
fn slow_receiver(smoke: bool, rounds: usize, n: usize, delay_ms: usize) {
    use pay_domain::webhooks::ENDPOINT_IN_FLIGHT;
    use pay_server::dispatcher::IN_FLIGHT;
    let endpoints = arg("--endpoints", 16).max(1);
    let delay = std::time::Duration::from_millis(delay_ms as u64);
    let in_flight = IN_FLIGHT.min(endpoints * ENDPOINT_IN_FLIGHT);
    let bound = in_flight as f64 / delay.as_secs_f64();
    println!(
        "{endpoints} endpoints, each at most {ENDPOINT_IN_FLIGHT} in flight; a dispatcher at \
         most {IN_FLIGHT}"
    );
    actix_rt::System::new().block_on(async move {
        let count = Arc::new(AtomicU64::new(0));
        let url = start_receiver(count.clone(), delay);
        let pg_available = std::env::var("PAY_TEST_POSTGRES_URL").is_ok();
        if !pg_available {
            assert!(
                !pay_store::testing::require_all_tests(),
                "PAY_REQUIRE_ALL_TESTS=1 but PAY_TEST_POSTGRES_URL is not set"
            );
            eprintln!("SKIP: PostgreSQL rounds (set PAY_TEST_POSTGRES_URL)");
        }
        let (mut sqlite_r, mut pg1_r, mut pg2_r) = (Vec::new(), Vec::new(), Vec::new());
        let mut sent = 0;
        for round in 1..=rounds {
            let db = TestDb::sqlite();
            let s = dispatch(&db.url, &url, n, 1, endpoints).await;
            sqlite_r.push(s / bound);
            sent += n;
            let mut line = format!(
                "round {round}: receiver answers after {delay_ms} ms; bound {in_flight} in flight / \
                 latency = {bound:.0}/s; sqlite {s:.0}/s ({:.2})",
                s / bound
            );
            if pg_available {
                let db = TestDb::postgres().unwrap();
                let one = dispatch(&db.url, &url, n, 1, endpoints).await;
                let db = TestDb::postgres().unwrap();
                let two = dispatch(&db.url, &url, n, 2, endpoints).await;
                sent += 2 * n;
                pg1_r.push(one / bound);
                pg2_r.push(two / one);
                line += &format!(
                    ", postgres one {one:.0}/s ({:.2}), two {two:.0}/s (two/one {:.2})",
                    one / bound,
                    two / one
                );
            }
            println!("{line}");
        }
        println!("median SQLite dispatcher / (in flight / latency): {:.2}", median(sqlite_r));
        if !pg1_r.is_empty() {
            println!("median PostgreSQL one dispatcher / (in flight / latency): {:.2}", median(pg1_r));
            println!("median PostgreSQL two dispatchers / one: {:.2}", median(pg2_r));
        }
        let got = count.load(Ordering::Relaxed);
        println!("receiver got {got} requests");
        assert_eq!(got, sent as u64, "the receiver got every request sent, once");
        if smoke {
            println!("smoke run ok: every figure measured, no errors");
        }
    });
}

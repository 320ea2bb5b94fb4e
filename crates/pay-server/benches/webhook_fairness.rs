//! Per-endpoint fairness: one merchant's endpoint hangs (its receiver never answers; every
//! send waits for the dispatcher's 15 s timeout) with 1,000 deliveries queued ahead of another
//! merchant's, whose receiver answers after `--delay-ms` (50). Measured per round, side by side:
//!
//! - the other merchant's backlog (`--deliveries`, 2,000) drained alone, and behind the hanging
//!   queue: its throughput with the hang over without (target >= 0.9);
//! - events of the other merchant queued one by one at `--rate` per second for `--secs`
//!   seconds behind the hanging queue: each delay from queued (its event committed) to
//!   delivered (the receiver got it), p50 and p99 (target p99 < 1 s);
//! - the most sends the hanging endpoint held at once (its share, 32).
//!
//! On SQLite, then PostgreSQL (`PAY_TEST_POSTGRES_URL`; skipped with a line when unset, a
//! failure when `PAY_REQUIRE_ALL_TESTS=1`). `cargo bench -p pay-server --bench
//! webhook_fairness [-- --rounds 3]`; `-- --smoke` (CI, `--profile dev`): one short round that
//! checks every figure was measured: every delivery of the other merchant arrived, once.
//! Loopback only.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use pay_server::{build_dispatcher, build_pay, open_store, Config};
use pay_store::testing::TestDb;

#[path = "support/args.rs"]
mod args;
#[path = "support/outbox.rs"]
mod outbox;
use args::{arg, flag};
use outbox::{analyze, measured, median, Tenant};

/// When each delivery first arrived, by delivery id.
type Arrivals = Arc<Mutex<HashMap<String, Instant>>>;

/// The other merchant's receiver: notes each delivery's arrival, answers 204 after `delay`.
fn start_receiver(arrivals: Arrivals, delay: Duration) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = HttpServer::new(move || {
        let arrivals = arrivals.clone();
        App::new().default_service(web::to(move |req: HttpRequest| {
            let id = req
                .headers()
                .get("x-pay-delivery-id")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_owned();
            arrivals
                .lock()
                .unwrap()
                .entry(id)
                .or_insert_with(Instant::now);
            async move {
                actix_rt::time::sleep(delay).await;
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

/// The hanging merchant's receiver: holds every request for a minute (the dispatcher gives up
/// at 15 s); counts the requests it holds and the most it held at once.
fn start_hanging() -> (String, Arc<AtomicUsize>) {
    let held = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let m = most.clone();
    let server = HttpServer::new(move || {
        let (held, most) = (held.clone(), m.clone());
        App::new().default_service(web::to(move || {
            let (held, most) = (held.clone(), most.clone());
            async move {
                let now = held.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                actix_rt::time::sleep(Duration::from_secs(60)).await;
                held.fetch_sub(1, Ordering::SeqCst);
                HttpResponse::NoContent().finish()
            }
        }))
    })
    .workers(1)
    .max_connections(100_000)
    .listen(listener)
    .unwrap()
    .run();
    actix_rt::spawn(server);
    (format!("http://127.0.0.1:{port}/hook"), most)
}

/// A dispatcher over a fresh service on `db_url`, with the hanging merchant's `hanging`
/// deliveries queued (none: alone), and the other merchant's tenant.
async fn setup(
    db_url: &str,
    hanging: usize,
    other_url: &str,
) -> (pay_domain::app::Pay, Tenant, Arc<AtomicUsize>) {
    let mut config = Config::for_database(db_url);
    config.allow_private_targets = true;
    let pay = build_pay(&config, open_store(&config).unwrap()).unwrap();
    let (hang_url, most) = start_hanging();
    let p = pay.clone();
    let other_url = other_url.to_owned();
    let other = tokio::task::spawn_blocking(move || {
        if hanging > 0 {
            let stuck = Tenant::new(&p, &hang_url);
            for _ in 0..hanging {
                stuck.event(&p);
            }
        }
        Tenant::new(&p, &other_url)
    })
    .await
    .unwrap();
    analyze(db_url);
    let dispatcher = build_dispatcher(&config, pay.clone()).unwrap();
    actix_rt::spawn(dispatcher.run());
    (pay, other, most)
}

/// Waits until every id in `ids` arrived (at most `limit`).
async fn arrived_all(arrivals: &Arrivals, ids: &[String], limit: Duration) -> Instant {
    let deadline = Instant::now() + limit;
    loop {
        {
            let got = arrivals.lock().unwrap();
            if ids.iter().all(|id| got.contains_key(id)) {
                return ids.iter().map(|id| got[id]).max().unwrap();
            }
        }
        assert!(
            Instant::now() < deadline,
            "deliveries did not all arrive within {limit:?}"
        );
        actix_rt::time::sleep(Duration::from_millis(5)).await;
    }
}

/// The other merchant's backlog of `n`, queued behind `hanging` stuck deliveries, drained:
/// deliveries per second, and the most the hanging endpoint held.
async fn backlog(db_url: &str, hanging: usize, n: usize, delay: Duration) -> (f64, usize) {
    let arrivals: Arrivals = Arc::default();
    let url = start_receiver(arrivals.clone(), delay);
    let mut config = Config::for_database(db_url);
    config.allow_private_targets = true;
    // Queue first, then start the dispatcher: the clock starts with it.
    let pay = build_pay(&config, open_store(&config).unwrap()).unwrap();
    let (hang_url, most) = start_hanging();
    let p = pay.clone();
    let ids: Vec<String> = tokio::task::spawn_blocking(move || {
        if hanging > 0 {
            let stuck = Tenant::new(&p, &hang_url);
            for _ in 0..hanging {
                stuck.event(&p);
            }
        }
        let other = Tenant::new(&p, &url);
        (0..n)
            .map(|_| other.event(&p).hyphenated().to_string())
            .collect()
    })
    .await
    .unwrap();
    analyze(db_url);
    let dispatcher = build_dispatcher(&config, pay).unwrap();
    let start = Instant::now();
    let running = actix_rt::spawn(dispatcher.run());
    let last = arrived_all(&arrivals, &ids, Duration::from_secs(600)).await;
    running.abort();
    let rate = measured(
        "other merchant's backlog",
        n as f64 / (last - start).as_secs_f64(),
    );
    (rate, most.load(Ordering::SeqCst))
}

/// The other merchant's events queued at `rate`/s for `secs` behind `hanging` stuck ones:
/// each one's delay from queued to delivered, sorted (ms).
async fn trickle(
    db_url: &str,
    hanging: usize,
    rate: usize,
    secs: usize,
    delay: Duration,
) -> Vec<f64> {
    let arrivals: Arrivals = Arc::default();
    let url = start_receiver(arrivals.clone(), delay);
    let (pay, other, _) = setup(db_url, hanging, &url).await;
    let other = Arc::new(other);
    let mut queued: Vec<(String, Instant)> = Vec::new();
    let every = Duration::from_secs_f64(1.0 / rate as f64);
    let start = Instant::now();
    for i in 0..rate * secs {
        let due = start + every * i as u32;
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            actix_rt::time::sleep(wait).await;
        }
        let (p, o) = (pay.clone(), other.clone());
        let id = tokio::task::spawn_blocking(move || o.event(&p))
            .await
            .unwrap();
        queued.push((id.hyphenated().to_string(), Instant::now()));
    }
    let ids: Vec<String> = queued.iter().map(|(id, _)| id.clone()).collect();
    arrived_all(&arrivals, &ids, Duration::from_secs(120)).await;
    let got = arrivals.lock().unwrap();
    let mut delays: Vec<f64> = queued
        .iter()
        .map(|(id, at)| got[id].saturating_duration_since(*at).as_secs_f64() * 1000.0)
        .collect();
    delays.sort_by(|a, b| a.partial_cmp(b).unwrap());
    delays
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

fn main() {
    let smoke = flag("--smoke");
    let rounds = arg("--rounds", if smoke { 1 } else { 3 });
    let n = arg("--deliveries", if smoke { 100 } else { 2000 });
    let hanging = arg("--hanging", if smoke { 40 } else { 1000 });
    let rate = arg("--rate", if smoke { 20 } else { 100 });
    let secs = arg("--secs", if smoke { 1 } else { 5 });
    let delay = Duration::from_millis(arg("--delay-ms", 50) as u64);
    let pg_available = std::env::var("PAY_TEST_POSTGRES_URL").is_ok();
    if !pg_available {
        assert!(
            !pay_store::testing::require_all_tests(),
            "PAY_REQUIRE_ALL_TESTS=1 but PAY_TEST_POSTGRES_URL is not set"
        );
        eprintln!("SKIP: PostgreSQL rounds (set PAY_TEST_POSTGRES_URL)");
    }
    println!(
        "one endpoint hangs with {hanging} deliveries queued first; the other merchant's \
         receiver answers after {} ms",
        delay.as_millis()
    );
    actix_rt::System::new().block_on(async move {
        for backend in ["sqlite", "postgres"] {
            if backend == "postgres" && !pg_available {
                continue;
            }
            let db = || match backend {
                "sqlite" => TestDb::sqlite(),
                _ => TestDb::postgres().unwrap(),
            };
            let (mut ratios, mut p99s) = (Vec::new(), Vec::new());
            for round in 1..=rounds {
                let d = db();
                let (alone, _) = backlog(&d.url, 0, n, delay).await;
                let d = db();
                let (beside, most) = backlog(&d.url, hanging, n, delay).await;
                let d = db();
                let delays = trickle(&d.url, hanging, rate, secs, delay).await;
                let (p50, p99) = (percentile(&delays, 0.5), percentile(&delays, 0.99));
                assert_eq!(delays.len(), rate * secs, "every trickled event arrived");
                assert!(
                    most > 0 && most <= pay_domain::webhooks::ENDPOINT_IN_FLIGHT,
                    "the hanging endpoint held {most} sends at once"
                );
                ratios.push(beside / alone);
                p99s.push(p99);
                println!(
                    "{backend} round {round}: other merchant's {n} alone {alone:.0}/s, behind \
                     the hanging queue {beside:.0}/s ({:.2}); hanging endpoint held at most \
                     {most} sends; {} trickled events delayed p50 {p50:.0} ms, p99 {p99:.0} ms",
                    beside / alone,
                    delays.len()
                );
            }
            println!(
                "median {backend}: other merchant's throughput beside a hanging endpoint / \
                 alone {:.2}; p99 delay queued -> delivered {:.0} ms",
                median(ratios),
                median(p99s)
            );
        }
        if smoke {
            println!("smoke run ok: every figure measured, every delivery arrived");
        }
    });
}

//! The webhook outbox survives `kill -9`: the real binary is killed while it is sending 100
//! queued deliveries to a slow receiver (some answered, some held by the receiver, the rest
//! waiting), then restarted on the same database. Every delivery arrives at least once, and a
//! delivery that arrives twice carries the same `x-pay-delivery-id` and the same body both
//! times: at-least-once, never a new id. Runs on SQLite and on PostgreSQL
//! (`PAY_TEST_POSTGRES_URL`; a missing server fails under `PAY_REQUIRE_ALL_TESTS=1`).
//!
//! The claims of the killed process come back when their lease runs out: the server runs with
//! `PAY_WEBHOOK_LEASE_SECS` at a few seconds instead of the default minute.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pay_store::testing::TestDb;
use serde_json::{json, Value};

#[path = "support/process.rs"]
mod process;

use process::*;
/// A fixed key sealing the callback secret (PostgreSQL requires one; SQLite uses it as well).
const ENCRYPTION_KEY: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
const DELIVERIES: usize = 100;
/// The receiver's handler threads, and how long each holds a request before answering: about
/// 160 answers a second, so 100 deliveries take most of a second to drain.
const RECEIVER_THREADS: usize = 16;
const HOLD: Duration = Duration::from_millis(100);
/// Killed once this many answers were written.
const KILL_AFTER_ANSWERS: usize = 20;
/// The claim lease of the servers under test (seconds): their sends time out after 2 s.
const LEASE_SECS: u64 = 8;
const PASSWORD: &str = "crash password 1";
const EMAIL: &str = "crash@crash.example";

/// One request as the receiver read it.
#[derive(Debug, Clone)]
struct Arrival {
    delivery_id: String,
    attempt: String,
    body: String,
}

/// A local webhook receiver: `RECEIVER_THREADS` threads each take one connection at a time,
/// read the request, record it, hold it for `HOLD`, then answer 200 and close.
struct Receiver {
    url: String,
    arrivals: Arc<Mutex<Vec<Arrival>>>,
    answered: Arc<AtomicUsize>,
}

impl Receiver {
    fn start() -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!(
            "http://127.0.0.1:{}/hook",
            listener.local_addr().unwrap().port()
        );
        let arrivals = Arc::new(Mutex::new(Vec::new()));
        let answered = Arc::new(AtomicUsize::new(0));
        for _ in 0..RECEIVER_THREADS {
            let listener = listener.try_clone().unwrap();
            let arrivals = arrivals.clone();
            let answered = answered.clone();
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    let Ok(mut stream) = stream else { continue };
                    let Some(arrival) = read_request(&stream) else {
                        continue;
                    };
                    arrivals.lock().unwrap().push(arrival);
                    std::thread::sleep(HOLD);
                    if stream
                        .write_all(
                            b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok",
                        )
                        .is_ok()
                    {
                        answered.fetch_add(1, Ordering::SeqCst);
                    }
                }
            });
        }
        Receiver {
            url,
            arrivals,
            answered,
        }
    }

    fn arrivals(&self) -> Vec<Arrival> {
        self.arrivals.lock().unwrap().clone()
    }

    fn distinct(&self) -> HashSet<String> {
        self.arrivals().into_iter().map(|a| a.delivery_id).collect()
    }
}

/// Reads one HTTP/1.1 request (head, then `content-length` bytes of body).
fn read_request(stream: &std::net::TcpStream) -> Option<Arrival> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut headers = HashMap::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if line == "\r\n" {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_owned());
        }
    }
    let len: usize = headers.get("content-length")?.parse().ok()?;
    let mut body = vec![0u8; len];
    reader.read_exact(&mut body).ok()?;
    Some(Arrival {
        delivery_id: headers.get("x-pay-delivery-id")?.clone(),
        attempt: headers.get("x-pay-attempt").cloned().unwrap_or_default(),
        body: String::from_utf8(body).ok()?,
    })
}

/// The environment every command of one test shares.
fn command(db_url: &str) -> Command {
    let mut c = Command::new(BIN);
    c.env_remove("PAY_BASE_URL")
        .env_remove("PAY_PUBLIC_PAY_URL")
        .env_remove("PAY_SMTP_URL")
        .env_remove("PAY_ENCRYPTION_KEYS_OLD")
        .env("PAY_DATABASE_URL", db_url)
        .env("PAY_ENCRYPTION_KEY", ENCRYPTION_KEY)
        .env("PAY_DEMO", "false")
        .env("PAY_WEBHOOK_ALLOW_PRIVATE_TARGETS", "true")
        .env("PAY_WEBHOOK_LEASE_SECS", LEASE_SECS.to_string())
        .env("PAY_LOG", "warn");
    c
}

/// A server on `db_url`, with or without its dispatcher.
fn serve(db_url: &str, dispatcher: bool) -> Server {
    let mut c = command(db_url);
    c.env("PAY_DISPATCHER", dispatcher.to_string());
    Server::spawn(c)
}

/// Bootstraps a company, points its payment callback at `hook` and queues `DELIVERIES` test
/// events with the dispatcher off; returns the queued delivery ids and the API key.
fn queue_deliveries(db_url: &str, hook: &str) -> (HashSet<String>, [(String, String); 2]) {
    let boot = command(db_url)
        .args([
            "admin",
            "bootstrap",
            "--company",
            "Crash Shop",
            "--email",
            EMAIL,
        ])
        .env("PAY_BOOTSTRAP_PASSWORD", PASSWORD)
        .output()
        .unwrap();
    assert!(
        boot.status.success(),
        "{}",
        String::from_utf8_lossy(&boot.stderr)
    );
    let creds: Value = serde_json::from_slice(&boot.stdout).unwrap();
    let company = creds["companyId"].as_str().unwrap().to_owned();
    let key = [
        (
            "x-svc-key-id".to_owned(),
            creds["keyId"].as_str().unwrap().to_owned(),
        ),
        (
            "x-svc-key-secret".to_owned(),
            creds["keySecret"].as_str().unwrap().to_owned(),
        ),
    ];
    let k: Vec<(&str, &str)> = key.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();

    let s = serve(db_url, false);
    set_payment_callback(&s.base, EMAIL, PASSWORD, &company, hook);
    let (st, link, _) = call(
        "POST",
        &format!("{}/api/partner/v1/pay/payment-links", s.base),
        &k,
        Some(json!({"amount": "5"})),
    );
    assert_eq!(st, 201, "{link}");
    let mut ids = HashSet::new();
    for _ in 0..DELIVERIES {
        let (st, queued, _) = call(
            "POST",
            &format!("{}/api/partner/v1/pay/webhook-requests/test", s.base),
            &k,
            Some(json!({"paymentLinkUid": link["uid"]})),
        );
        assert_eq!(st, 202, "{queued}");
        ids.insert(queued["data"][0]["id"].as_str().unwrap().to_owned());
    }
    assert_eq!(ids.len(), DELIVERIES);
    s.stop();
    (ids, key)
}

fn crash_mid_dispatch_then_restart(label: &str, db_url: &str) {
    let receiver = Receiver::start();
    let (queued, key) = queue_deliveries(db_url, &receiver.url);
    let k: Vec<(&str, &str)> = key.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    assert!(receiver.arrivals().is_empty(), "nothing sent yet");

    // Second run, dispatcher on: killed with SIGKILL once the receiver answered a few.
    let s = serve(db_url, true);
    let mid = wait_until(Duration::from_secs(30), || {
        receiver.answered.load(Ordering::SeqCst) >= KILL_AFTER_ANSWERS
    });
    let log = s.log();
    s.kill9();
    assert!(mid, "the dispatcher never got going; log:\n{log}");
    let killed_at = Instant::now();
    let answered_at_kill = receiver.answered.load(Ordering::SeqCst);
    let arrived_at_kill = receiver.distinct().len();
    assert!(
        arrived_at_kill < DELIVERIES,
        "killed mid-dispatch: {arrived_at_kill} of {DELIVERIES} had arrived"
    );
    // What the dead process had already written to its sockets still reaches the receiver.
    std::thread::sleep(HOLD * 3);
    let arrived_before_restart = receiver.distinct().len();

    // Third run on the same database: the killed process's claims run out and every delivery
    // is sent.
    let s = serve(db_url, true);
    let all = wait_until(Duration::from_secs(LEASE_SECS + 30), || {
        queued.is_subset(&receiver.distinct())
    });
    let missing: Vec<String> = queued.difference(&receiver.distinct()).cloned().collect();
    assert!(
        all,
        "{} deliveries never arrived after the restart: {missing:?}; log:\n{}",
        missing.len(),
        s.log()
    );
    let resent_after = killed_at.elapsed();
    // The delivery log agrees: the same 100 deliveries (no new ones), all succeeded.
    let mut log = Value::Null;
    let settled = wait_until(Duration::from_secs(20), || {
        log = call(
            "GET",
            &format!("{}/api/partner/v1/pay/webhook-requests?limit=200", s.base),
            &k,
            None,
        )
        .1;
        log["data"]
            .as_array()
            .is_some_and(|d| d.iter().all(|r| r["status"] == "succeeded"))
    });
    assert!(settled, "{log}");
    let logged: HashSet<String> = log["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        logged, queued,
        "the log holds exactly the queued deliveries"
    );
    std::thread::sleep(HOLD * 3);
    s.stop();

    // At least once, and a repeat is the same delivery: same id, same body.
    let arrivals = receiver.arrivals();
    let mut first: HashMap<&str, &Arrival> = HashMap::new();
    for a in &arrivals {
        assert!(
            queued.contains(&a.delivery_id),
            "an arrival with an id that was never queued: {}",
            a.delivery_id
        );
        let body: Value = serde_json::from_str(&a.body).unwrap();
        assert_eq!(body["deliveryId"], a.delivery_id.as_str(), "{}", a.body);
        match first.get(a.delivery_id.as_str()) {
            None => {
                first.insert(&a.delivery_id, a);
            }
            Some(f) => assert_eq!(f.body, a.body, "a duplicate with another body"),
        }
    }
    assert_eq!(first.len(), DELIVERIES, "every delivery arrived");
    let duplicates = arrivals.len() - DELIVERIES;
    assert!(
        duplicates > 0,
        "the kill fell between send and record for some deliveries, so some repeat"
    );
    let attempts: HashSet<&str> = arrivals.iter().map(|a| a.attempt.as_str()).collect();
    println!(
        "crash test ({label}): {DELIVERIES} queued; killed with {answered_at_kill} answered and \
         {arrived_at_kill} arrived; {arrived_before_restart} arrived before the restart; after \
         the restart all {DELIVERIES} arrived ({} requests in all, {duplicates} duplicates, each \
         with its first arrival's x-pay-delivery-id and body; x-pay-attempt values {attempts:?}); \
         the last arrived {:.1} s after the kill (lease {LEASE_SECS} s)",
        arrivals.len(),
        resent_after.as_secs_f64(),
    );
}

#[test]
fn kill_9_mid_dispatch_then_restart_delivers_everything_at_least_once_on_sqlite() {
    let db = TestDb::sqlite();
    crash_mid_dispatch_then_restart("sqlite", &db.url);
}

#[test]
fn kill_9_mid_dispatch_then_restart_delivers_everything_at_least_once_on_postgres() {
    let Some(db) = TestDb::postgres() else {
        return;
    };
    crash_mid_dispatch_then_restart("postgres", &db.url);
}

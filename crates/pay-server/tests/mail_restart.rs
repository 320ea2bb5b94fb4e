//! The mail outbox as an operator runs it: a request mail queued while `PAY_SMTP_URL` is unset
//! stays in the outbox (the log names its id and link, never the address), and is sent after a
//! restart with SMTP configured, to a real SMTP server (Python's aiosmtpd).

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

#[path = "support/smtp_sink.rs"]
mod smtp_sink;

const BIN: &str = env!("CARGO_BIN_EXE_pay-server");
const PAYER: &str = "restart-payer@example.com";

struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn collect(r: impl Read + Send + 'static) -> Arc<Mutex<String>> {
    let buf = Arc::new(Mutex::new(String::new()));
    let b = buf.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(r).lines().map_while(Result::ok) {
            let mut s = b.lock().unwrap();
            s.push_str(&line);
            s.push('\n');
        }
    });
    buf
}

/// A running `pay-server` whose log (stderr) is collected.
struct Server {
    child: Child,
    base: String,
    log: Arc<Mutex<String>>,
}

impl Server {
    fn start(dir: &TempDir, env: &[(&str, &str)]) -> Server {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut child = Command::new(BIN)
            .env_remove("PAY_SMTP_URL")
            .env_remove("PAY_MAIL_FROM")
            .env_remove("PAY_BASE_URL")
            .env_remove("PAY_DISPATCHER")
            .envs(env.iter().copied())
            .env(
                "PAY_DATABASE_URL",
                format!("sqlite://{}", dir.0.join("pay.db").display()),
            )
            .env("PAY_LISTEN", format!("127.0.0.1:{port}"))
            .env("PAY_PUBLIC_PAY_URL", "https://pay.restart.example")
            .env("PAY_DEMO", "false")
            .env("PAY_LOG", "info")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let log = collect(child.stderr.take().unwrap());
        let s = Server {
            child,
            base: format!("http://127.0.0.1:{port}"),
            log,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if http("GET", &format!("{}/readyz", s.base), &[], None).0 == 200 {
                return s;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("server did not become ready; log:\n{}", s.log());
    }

    fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// Waits until the log contains `needle`.
    fn wait_log(&self, needle: &str) -> bool {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if self.log().contains(needle) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    }

    /// SIGINT (graceful), then the whole log.
    fn stop(mut self) -> String {
        let _ = Command::new("kill")
            .arg("-INT")
            .arg(self.child.id().to_string())
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline && self.child.try_wait().unwrap().is_none() {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        std::thread::sleep(Duration::from_millis(100));
        self.log()
    }
}

/// A tiny blocking HTTP client: status (0 when unreachable) and JSON body.
fn http(method: &str, url: &str, headers: &[(&str, &str)], body: Option<Value>) -> (u16, Value) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut rb = reqwest::Client::new().request(method.parse().unwrap(), url);
        for (k, v) in headers {
            rb = rb.header(*k, *v);
        }
        if let Some(b) = body {
            rb = rb.json(&b);
        }
        let Ok(res) = rb.send().await else {
            return (0, Value::Null);
        };
        let status = res.status().as_u16();
        let text = res.text().await.unwrap_or_default();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    })
}

#[test]
fn a_mail_queued_without_smtp_is_sent_after_a_restart_with_smtp() {
    let dir =
        TempDir(std::env::temp_dir().join(format!("pay-mail-{}", uuid::Uuid::new_v4().simple())));
    std::fs::create_dir_all(&dir.0).unwrap();
    let boot = Command::new(BIN)
        .args([
            "admin",
            "bootstrap",
            "--company",
            "Restart Shop",
            "--email",
            "owner@restart.example",
        ])
        .env(
            "PAY_DATABASE_URL",
            format!("sqlite://{}", dir.0.join("pay.db").display()),
        )
        .env("PAY_BOOTSTRAP_PASSWORD", "restart password 1")
        .env("PAY_LOG", "warn")
        .output()
        .unwrap();
    assert!(
        boot.status.success(),
        "{}",
        String::from_utf8_lossy(&boot.stderr)
    );
    let creds: Value = serde_json::from_slice(&boot.stdout).unwrap();
    let key_id = creds["keyId"].as_str().unwrap().to_owned();
    let key_secret = creds["keySecret"].as_str().unwrap().to_owned();
    let key = [
        ("x-svc-key-id", key_id.as_str()),
        ("x-svc-key-secret", key_secret.as_str()),
    ];

    // First run: no PAY_SMTP_URL. The request is accepted and the mail stays queued.
    let s = Server::start(&dir, &[]);
    let (st, link) = http(
        "POST",
        &format!("{}/api/partner/v1/pay/payment-links", s.base),
        &key,
        Some(json!({"amount": "7", "title": "Restart order", "customerEmail": PAYER})),
    );
    assert_eq!(st, 201, "{link}");
    let uid = link["uid"].as_str().unwrap().to_owned();
    let (st, sent) = http(
        "POST",
        &format!(
            "{}/api/partner/v1/pay/payment-links/{uid}/send-request-email",
            s.base
        ),
        &key,
        None,
    );
    assert_eq!(st, 202, "{sent}");
    assert_eq!(sent, json!({"ok": true, "email": PAYER}));
    assert!(
        s.wait_log(&format!("link_uid={uid}")),
        "the queued mail is logged; log:\n{}",
        s.log()
    );
    let first = s.stop();
    let queued: Vec<&str> = first
        .lines()
        .filter(|l| l.contains("not sent: PAY_SMTP_URL is not set"))
        .collect();
    assert_eq!(queued.len(), 1, "one line per queued mail; log:\n{first}");
    assert!(queued[0].contains("mail_id="), "{}", queued[0]);

    let Some(sink) = smtp_sink::SmtpSink::start() else {
        return;
    };
    // Second run, SMTP configured: the queued mail is sent at once.
    let s = Server::start(
        &dir,
        &[
            ("PAY_SMTP_URL", sink.url().as_str()),
            ("PAY_MAIL_FROM", "Restart Shop <pay@restart.example>"),
        ],
    );
    let got = sink.wait_for(1, Duration::from_secs(20));
    assert_eq!(got.len(), 1, "the queued mail arrives; log:\n{}", s.log());
    let m = &got[0];
    assert_eq!(m["rcpt_tos"], json!([PAYER]));
    assert_eq!(m["mail_from"], "pay@restart.example");
    assert_eq!(
        m["subject"],
        "Payment request from Restart Shop: Restart order (7 USDC)"
    );
    let url = format!("https://pay.restart.example/pay/{uid}");
    assert!(m["text"].as_str().unwrap().contains(&url));
    assert!(m["html"].as_str().unwrap().contains(&url));
    assert!(s.wait_log("mail sent"), "log:\n{}", s.log());
    let second = s.stop();
    assert_eq!(sink.messages().len(), 1, "sent once");

    // Neither run logged the address or the mail's text.
    for log in [&first, &second] {
        assert!(!log.contains(PAYER), "the address reached the log:\n{log}");
        assert!(
            !log.contains("Restart order"),
            "the subject reached the log"
        );
    }
}

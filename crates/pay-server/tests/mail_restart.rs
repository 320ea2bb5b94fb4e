//! The mail outbox as an operator runs it: a request mail queued while `PAY_SMTP_URL` is unset
//! stays in the outbox (the log names its id and link, never the address), and is sent after a
//! restart with SMTP configured, to a real SMTP server (Python's aiosmtpd).

use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

#[path = "support/smtp_sink.rs"]
mod smtp_sink;

#[path = "support/process.rs"]
mod process;

use process::*;
const PAYER: &str = "restart-payer@example.com";

/// A server on the test's SQLite database, with `env` added and no SMTP unless given.
fn serve(dir: &TempDir, env: &[(&str, &str)]) -> Server {
    let mut command = Command::new(BIN);
    command
        .env_remove("PAY_SMTP_URL")
        .env_remove("PAY_MAIL_FROM")
        .env_remove("PAY_BASE_URL")
        .env_remove("PAY_DISPATCHER")
        .envs(env.iter().copied())
        .env("PAY_DATABASE_URL", dir.db_url())
        .env("PAY_PUBLIC_PAY_URL", "https://pay.restart.example")
        .env("PAY_DEMO", "false")
        .env("PAY_LOG", "info");
    Server::spawn(command)
}

#[test]
fn a_mail_queued_without_smtp_is_sent_after_a_restart_with_smtp() {
    let dir = TempDir::new();
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
    let s = serve(&dir, &[]);
    let (st, link, _) = call(
        "POST",
        &format!("{}/api/partner/v1/pay/payment-links", s.base),
        &key,
        Some(json!({"amount": "7", "title": "Restart order", "customerEmail": PAYER})),
    );
    assert_eq!(st, 201, "{link}");
    let uid = link["uid"].as_str().unwrap().to_owned();
    let (st, sent, _) = call(
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
    let (_, first) = s.stop();
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
    let s = serve(
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
    let (_, second) = s.stop();
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

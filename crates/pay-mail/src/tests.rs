//! The adapter against a scripted SMTP server on loopback: what is sent (envelope, headers, both
//! parts) and how each kind of failure is classified. The end-to-end test against a real
//! server (Python's aiosmtpd) is in `pay-server`'s tests.

use std::sync::{Arc, Mutex};

use pay_domain::kernel::ids::{CompanyId, LinkUid, PaymentLinkId};
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::mail::{MailId, MailKind, MailStatus};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

use super::*;

fn mail(to: &str) -> OutgoingMail {
    OutgoingMail {
        id: MailId(uuid::Uuid::from_u128(
            0x0192_f0c4_1a2b_7c3d_8e4f_0123_4567_89ab,
        )),
        company_id: CompanyId(uuid::Uuid::from_u128(2)),
        link_id: PaymentLinkId(uuid::Uuid::from_u128(3)),
        link_uid: LinkUid::parse("AbCdEfGhIjKlMnOpQrStUv").unwrap(),
        kind: MailKind::PaymentRequest,
        to: to.into(),
        subject: "Payment request from Café Ünïcode (12.50 USD)".into(),
        text_body: "Pay here: https://pay.example/pay/AbCdEfGhIjKlMnOpQrStUv\n".into(),
        html_body: "<p><a href=\"https://pay.example/pay/AbCdEfGhIjKlMnOpQrStUv\">Pay</a></p>"
            .into(),
        status: MailStatus::Pending,
        attempts: 0,
        next_attempt_at: None,
        last_attempt_at: None,
        last_error: None,
        created_at: Timestamp::from_unix_millis(0).unwrap(),
        sent_at: None,
    }
}

#[test]
fn smtp_urls() {
    for (url, security, loopback) in [
        ("smtp://127.0.0.1:2525", "smtp", true),
        ("smtp://localhost", "smtp", true),
        ("smtp://[::1]:25", "smtp", true),
        ("smtp://relay.internal.example:25", "smtp", false),
        ("smtp://u:p@127.0.0.1:2525", "smtp", true),
        (
            "smtp://u:p@smtp.example.com:587?tls=required",
            "smtp+starttls",
            false,
        ),
        (
            "smtp://smtp.example.com?tls=opportunistic",
            "smtp+opportunistic",
            false,
        ),
        ("smtps://u:p%40ss@smtp.example.com", "smtps", false),
    ] {
        let e = parse_smtp_url(url).unwrap_or_else(|e| panic!("{url}: {e}"));
        assert_eq!((e.security, e.loopback), (security, loopback), "{url}");
        assert!(!e.to_string().contains("p@ss") && !e.to_string().contains(":p@"));
    }
    for bad in [
        "",
        "127.0.0.1:25",
        "http://smtp.example.com",
        "smtp://",
        "smtp://smtp.example.com?tls=maybe",
        // A password in clear over the network.
        "smtp://user:secret@smtp.example.com:25",
    ] {
        let e = parse_smtp_url(bad).expect_err(bad);
        assert!(!e.to_string().contains("secret"), "{e}");
    }
}

#[test]
fn from_addresses() {
    let m = parse_from("Pay <no-reply@localhost>").unwrap();
    assert_eq!(m.email.to_string(), "no-reply@localhost");
    assert_eq!(m.name.as_deref(), Some("Pay"));
    assert!(parse_from("billing@shop.example").is_ok());
    for bad in ["", "not an address", "Pay <>", "a@b@c"] {
        assert!(parse_from(bad).is_err(), "{bad}");
    }
}

#[test]
fn debug_never_shows_the_password() {
    let m = SmtpMailer::new(
        "smtps://user:hunter2@smtp.example.com",
        "Shop <pay@shop.example>",
    )
    .unwrap();
    let d = format!("{m:?}");
    assert!(d.contains("smtps://smtp.example.com"), "{d}");
    assert!(!d.contains("hunter2") && !d.contains("user"), "{d}");
}

#[test]
fn the_message_has_both_parts_and_a_stable_id() {
    let m = SmtpMailer::new("smtp://127.0.0.1:2525", "Shop <pay@shop.example>").unwrap();
    let raw =
        String::from_utf8(m.message(&mail("payer@example.com")).unwrap().formatted()).unwrap();
    assert!(raw.contains("From: Shop <pay@shop.example>\r\n"), "{raw}");
    assert!(raw.contains("To: payer@example.com\r\n"), "{raw}");
    assert!(raw.contains("Message-ID: <0192f0c4-1a2b-7c3d-8e4f-0123456789ab@shop.example>\r\n"));
    // Non-ASCII subjects are encoded words.
    assert!(
        raw.contains("Subject: Payment request from =?utf-8?b?"),
        "{raw}"
    );
    assert!(raw.contains("multipart/alternative"));
    assert!(raw.contains("Content-Type: text/plain; charset=utf-8"));
    assert!(raw.contains("Content-Type: text/html; charset=utf-8"));
    assert!(raw.contains("https://pay.example/pay/AbCdEfGhIjKlMnOpQrStUv"));
    assert!(m.message(&mail("not an address")).is_err());
}

/// What the scripted server answers to RCPT TO, and what it received.
#[derive(Default)]
struct Seen {
    commands: Vec<String>,
    data: String,
}

/// A one-connection-at-a-time SMTP server on loopback that answers `rcpt_reply` to RCPT TO.
async fn scripted_server(rcpt_reply: &'static str) -> (String, Arc<Mutex<Seen>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("smtp://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let seen = Arc::new(Mutex::new(Seen::default()));
    let s = seen.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (r, mut w) = stream.into_split();
            let mut lines = BufReader::new(r).lines();
            w.write_all(b"220 scripted ESMTP\r\n").await.unwrap();
            let mut in_data = false;
            while let Ok(Some(line)) = lines.next_line().await {
                if in_data {
                    if line == "." {
                        in_data = false;
                        w.write_all(b"250 queued\r\n").await.unwrap();
                    } else {
                        let mut seen = s.lock().unwrap();
                        seen.data.push_str(&line);
                        seen.data.push('\n');
                    }
                    continue;
                }
                s.lock().unwrap().commands.push(line.clone());
                let verb = line.split(' ').next().unwrap_or("").to_ascii_uppercase();
                let reply: &[u8] = match verb.as_str() {
                    "EHLO" | "HELO" => b"250 scripted\r\n",
                    "MAIL" | "RSET" | "NOOP" => b"250 ok\r\n",
                    "RCPT" => rcpt_reply.as_bytes(),
                    "DATA" => {
                        in_data = true;
                        b"354 go on\r\n"
                    }
                    "QUIT" => {
                        let _ = w.write_all(b"221 bye\r\n").await;
                        break;
                    }
                    _ => b"500 what\r\n",
                };
                if w.write_all(reply).await.is_err() {
                    break;
                }
            }
        }
    });
    (url, seen)
}

#[tokio::test]
async fn an_accepted_mail_is_sent() {
    let (url, seen) = scripted_server("250 ok\r\n").await;
    let m = SmtpMailer::new(&url, "Shop <pay@shop.example>").unwrap();
    assert_eq!(m.send(&mail("payer@example.com")).await, SendOutcome::Sent);
    let seen = seen.lock().unwrap();
    assert!(seen
        .commands
        .iter()
        .any(|c| c == "MAIL FROM:<pay@shop.example>"));
    assert!(seen
        .commands
        .iter()
        .any(|c| c == "RCPT TO:<payer@example.com>"));
    assert!(seen.data.contains("multipart/alternative"), "{}", seen.data);
}

#[tokio::test]
async fn a_5xx_refusal_is_permanent() {
    let (url, _) = scripted_server("550 5.1.1 <payer@example.com>: no such user\r\n").await;
    let m = SmtpMailer::new(&url, "pay@shop.example").unwrap();
    match m.send(&mail("payer@example.com")).await {
        SendOutcome::Permanent(e) => assert!(e.contains("550"), "{e}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_4xx_answer_is_transient() {
    let (url, _) = scripted_server("451 4.7.1 greylisted, try later\r\n").await;
    let m = SmtpMailer::new(&url, "pay@shop.example").unwrap();
    match m.send(&mail("payer@example.com")).await {
        SendOutcome::Transient(e) => assert!(e.contains("451"), "{e}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn an_unreachable_server_is_transient() {
    // A port that was free a moment ago: nothing listens there now.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let m = SmtpMailer::new(&format!("smtp://127.0.0.1:{port}"), "pay@shop.example").unwrap();
    assert!(matches!(
        m.send(&mail("payer@example.com")).await,
        SendOutcome::Transient(_)
    ));
}

#[tokio::test]
async fn an_unusable_address_is_permanent_without_a_connection() {
    let m = SmtpMailer::new("smtp://127.0.0.1:9", "pay@shop.example").unwrap();
    assert!(matches!(
        m.send(&mail("no address")).await,
        SendOutcome::Permanent(_)
    ));
}

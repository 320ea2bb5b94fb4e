//! `send-request-email` over HTTP: the default and explicit address, the body rules, the
//! link's state, credentials and tenancy, the row in the outbox; and the mailer end to end
//! against a real SMTP server (Python's aiosmtpd).

use pay_domain::mail::MailStore;
use std::time::Duration;

use pay_domain::kernel::ids::{CompanyId, LinkUid};
use pay_domain::kernel::secret::Secret;
use pay_domain::mail::{MailStatus, OutgoingMail};
use pay_server::Mailer;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, read, Tenant, TestApp};
use crate::on_both_backends;

#[path = "../support/smtp_sink.rs"]
pub(crate) mod smtp_sink;

const LINKS: &str = "/api/partner/v1/pay/payment-links";
pub(crate) const PAYER: &str = "payer@example.com";

fn path(uid: &str) -> String {
    format!("{LINKS}/{uid}/send-request-email")
}

pub(crate) async fn link(app: &TestApp, body: Value) -> String {
    app.create_link(body).await["uid"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The outbox rows of one of the tenant's links, newest first.
async fn outbox(app: &TestApp, t: &Tenant, uid: &str) -> Vec<OutgoingMail> {
    let store = app.store.clone();
    let company = CompanyId::parse(&t.company_id).unwrap();
    let uid = LinkUid::parse(uid).unwrap();
    tokio::task::spawn_blocking(move || store.link_mails(company, &uid))
        .await
        .unwrap()
        .unwrap()
}

pub(crate) async fn post(
    app: &TestApp,
    uid: &str,
    body: Option<Value>,
) -> (reqwest::StatusCode, Value) {
    let rb = app.req(Method::POST, &path(uid));
    let rb = match body {
        Some(b) => rb.json(&b),
        None => rb,
    };
    read(rb.send().await.unwrap()).await
}

async fn default_and_explicit_addresses(app: TestApp) {
    let uid = link(
        &app,
        json!({"amount": "12.50", "fiatCurrency": "USD", "customerEmail": PAYER}),
    )
    .await;
    // No body at all, an empty JSON body, `{}`, `null` and `{"email": null}`: the default.
    let empty_json = app
        .req(Method::POST, &path(&uid))
        .header("content-type", "application/json")
        .body("");
    for got in [
        post(&app, &uid, None).await,
        read(empty_json.send().await.unwrap()).await,
        post(&app, &uid, Some(json!({}))).await,
        post(&app, &uid, Some(Value::Null)).await,
        post(&app, &uid, Some(json!({"email": null}))).await,
    ] {
        assert_eq!(got.0, 202, "{}", got.1);
        assert_eq!(got.1, json!({"ok": true, "email": PAYER}));
    }
    // An explicit address wins, trimmed, its domain in lower case.
    let got = post(
        &app,
        &uid,
        Some(json!({"email": "  Other.Person@Example.ORG "})),
    )
    .await;
    assert_eq!(got.0, 202, "{}", got.1);
    assert_eq!(
        got.1,
        json!({"ok": true, "email": "Other.Person@example.org"})
    );

    // Each request queued one mail; none was sent (no mailer ran).
    let rows = outbox(&app, &app.t, &uid).await;
    assert_eq!(rows.len(), 6);
    assert_eq!(rows[0].to, "Other.Person@example.org");
    assert!(rows[1..].iter().all(|m| m.to == PAYER));
    let url = format!("https://pay.test.example/pay/{uid}");
    for m in &rows {
        assert_eq!(m.status, MailStatus::Pending);
        assert_eq!(m.attempts, 0);
        assert_eq!(m.link_uid.as_str(), uid);
        assert_eq!(m.subject, "Payment request from Acme Goods (12.50 USD)");
        assert!(m.text_body.contains(&url), "{}", m.text_body);
        assert!(m.html_body.contains(&format!("href=\"{url}\"")));
    }
}

async fn address_and_body_rules(app: TestApp) {
    let bare = link(&app, json!({"amount": "1"})).await;
    for body in [None, Some(json!({})), Some(json!({"email": null}))] {
        let got = post(&app, &bare, body).await;
        assert_error(&got, 400, "missing_email", Some("email"));
    }
    let uid = link(&app, json!({"amount": "1", "customerEmail": PAYER})).await;
    let long = format!("{}@example.com", "a".repeat(250));
    for bad in [
        json!({"email": ""}),
        json!({"email": "not-an-email"}),
        json!({"email": "a@b"}),
        json!({"email": "a@example.com\r\nBcc: x@evil.example"}),
        json!({"email": "x@example.com, y@example.com"}),
        json!({"email": long}),
        json!({"email": 5}),
        json!({"email": ["a@example.com"]}),
    ] {
        let got = post(&app, &uid, Some(bad.clone())).await;
        assert_error(&got, 400, "validation_failed", Some("email"));
    }
    let got = post(
        &app,
        &uid,
        Some(json!({"email": PAYER, "cc": "x@example.com"})),
    )
    .await;
    assert_error(&got, 400, "unknown_field", Some("cc"));
    let got = post(&app, &uid, Some(json!([PAYER]))).await;
    assert_error(&got, 400, "invalid_json", None);
    let got = read(
        app.req(Method::POST, &path(&uid))
            .header("content-type", "application/json")
            .body("{\"email\":")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 400, "invalid_json", None);
    let got = read(
        app.req(Method::POST, &path(&uid))
            .header("content-type", "text/plain")
            .body(PAYER)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 415, "unsupported_media_type", None);
    let got = read(
        app.req(Method::POST, &path(&uid))
            .header("content-type", "application/json")
            .body(format!("{{\"email\": \"{}\"}}", "a".repeat(70 * 1024)))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 413, "payload_too_large", None);
    // Another method on the path is 405.
    let got = read(app.req(Method::GET, &path(&uid)).send().await.unwrap()).await;
    assert_eq!(got.0, 405);
    assert!(outbox(&app, &app.t, &uid).await.is_empty());
    assert!(outbox(&app, &app.t, &bare).await.is_empty());
}

async fn set_status(app: &TestApp, uid: &str, status: &str) {
    let got = read(
        app.req(Method::PATCH, &format!("{LINKS}/{uid}"))
            .json(&json!({ "status": status }))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 200, "{}", got.1);
}

async fn links_that_are_not_active_are_a_conflict(app: TestApp) {
    let paused = link(&app, json!({"amount": "1", "customerEmail": PAYER})).await;
    set_status(&app, &paused, "paused").await;
    let archived = link(&app, json!({"amount": "1", "customerEmail": PAYER})).await;
    set_status(&app, &archived, "archived").await;
    let expiring = link(
        &app,
        json!({"amount": "1", "customerEmail": PAYER, "expirationTime": "15m"}),
    )
    .await;
    app.clock.advance_secs(15 * 60);
    for uid in [&paused, &archived, &expiring] {
        let got = post(&app, uid, None).await;
        assert_error(&got, 409, "link_not_active", None);
        assert!(outbox(&app, &app.t, uid).await.is_empty());
    }
    // Back to active: accepted again.
    set_status(&app, &paused, "active").await;
    assert_eq!(post(&app, &paused, None).await.0, 202);
}

async fn credentials_and_tenancy(app: TestApp) {
    let uid = link(&app, json!({"amount": "1", "customerEmail": PAYER})).await;
    let p = path(&uid);
    let send = |rb: reqwest::RequestBuilder| async move { read(rb.send().await.unwrap()).await };

    assert_error(
        &send(app.anon(Method::POST, &p)).await,
        401,
        "unauthorized",
        None,
    );
    assert_error(
        &send(
            app.anon(Method::POST, &p)
                .header("x-svc-key-id", &app.t.key_id),
        )
        .await,
        401,
        "unauthorized",
        None,
    );
    let wrong = app
        .anon(Method::POST, &p)
        .header("x-svc-key-id", &app.t.key_id)
        .header(
            "x-svc-key-secret",
            "mksec_wrongwrongwrongwrongwrongwrongwrongwrong",
        );
    assert_error(&send(wrong).await, 401, "invalid_credentials", None);
    // A bearer token (no OAuth token can be valid yet) is refused as one.
    assert_error(
        &send(
            app.anon(Method::POST, &p)
                .header("authorization", "Bearer abc"),
        )
        .await,
        401,
        "invalid_credentials",
        None,
    );
    // Credentials come before the body: a bad body without them is still a 401.
    assert_error(
        &send(app.anon(Method::POST, &p).json(&json!({"nope": 1}))).await,
        401,
        "unauthorized",
        None,
    );

    // A member may read links but not send them; an owner's session needs its CSRF token.
    let (email, password) = app.add_member(&app.t, "member").await;
    let member = app.login(&email, &password).await;
    assert_error(
        &send(app.in_session(&member, Method::POST, &p)).await,
        403,
        "forbidden",
        None,
    );
    let owner = app.login_owner(&app.t).await;
    assert_error(
        &send(app.in_session_no_csrf(&owner, Method::POST, &p)).await,
        403,
        "forbidden",
        None,
    );
    let got = send(app.in_session(&owner, Method::POST, &p)).await;
    assert_eq!(got.0, 202, "{}", got.1);

    // Another company's link, and an unknown one, are not found.
    let other = app.new_tenant("Other Co").await;
    assert_error(
        &send(app.as_tenant(&other, Method::POST, &p)).await,
        404,
        "not_found",
        None,
    );
    assert_error(
        &send(app.req(Method::POST, &path("ZZZZZZZZZZZZZZZZZZZZZZ"))).await,
        404,
        "not_found",
        None,
    );
    // Only the owner's request was queued, for this company.
    assert_eq!(outbox(&app, &app.t, &uid).await.len(), 1);
    assert!(outbox(&app, &other, &uid).await.is_empty());
}

async fn smtp_end_to_end(app: TestApp) {
    let uid = link(
        &app,
        json!({
            "amount": "12.50",
            "fiatCurrency": "USD",
            "title": "Order <42> & co",
            "customerEmail": PAYER
        }),
    )
    .await;
    assert_eq!(post(&app, &uid, None).await.0, 202);

    // Without SMTP the mailer reports the mail once and leaves it pending.
    let idle = Mailer::new(app.pay.clone(), None);
    assert!(!idle.sends());
    assert_eq!(idle.drain().await.unwrap(), 1);
    assert_eq!(
        idle.drain().await.unwrap(),
        0,
        "each queued mail is reported once"
    );
    let rows = outbox(&app, &app.t, &uid).await;
    assert_eq!((rows[0].status, rows[0].attempts), (MailStatus::Pending, 0));

    let Some(sink) = smtp_sink::SmtpSink::start() else {
        return;
    };
    let mut config = app.config.clone();
    config.smtp_url = Some(Secret::new(sink.url()));
    config.mail_from = "Acme Pay <pay@acme.example>".into();
    let mailer = Mailer::from_config(&config, app.pay.clone()).unwrap();
    assert!(mailer.sends());
    assert_eq!(mailer.drain().await.unwrap(), 1);
    let got = sink.wait_for(1, Duration::from_secs(5));
    assert_eq!(got.len(), 1, "one message arrived");
    let m = &got[0];
    assert_eq!(m["mail_from"], "pay@acme.example");
    assert_eq!(m["rcpt_tos"], json!([PAYER]));
    assert_eq!(m["from"], "Acme Pay <pay@acme.example>");
    assert_eq!(m["to"], PAYER);
    assert_eq!(
        m["subject"],
        "Payment request from Acme Goods: Order <42> & co (12.50 USD)"
    );
    assert_eq!(m["content_type"], "multipart/alternative");
    let url = format!("https://pay.test.example/pay/{uid}");
    let text = m["text"].as_str().expect("a text/plain part");
    assert!(text.contains(&format!("Pay here: {url}")), "{text}");
    assert!(text.contains("Order <42> & co"));
    let html = m["html"].as_str().expect("a text/html part");
    assert!(html.contains(&format!("href=\"{url}\"")), "{html}");
    assert!(html.contains("Order &lt;42&gt; &amp; co"), "{html}");
    assert!(!html.contains("<img"));
    let row = &outbox(&app, &app.t, &uid).await[0];
    assert_eq!(
        m["message_id"],
        format!("<{}@acme.example>", row.id),
        "Message-ID from the mail id"
    );
    assert_eq!(row.status, MailStatus::Sent);
    assert_eq!(row.attempts, 1);
    assert!(row.sent_at.is_some() && row.next_attempt_at.is_none());
    // Nothing is due any more, and nothing more arrives.
    assert_eq!(mailer.drain().await.unwrap(), 0);
    assert_eq!(sink.messages().len(), 1);
}

/// A mail server that is down: the attempt fails, the mail waits for its retry.
async fn an_unreachable_server_is_retried_later(app: TestApp) {
    let uid = link(&app, json!({"amount": "1", "customerEmail": PAYER})).await;
    assert_eq!(post(&app, &uid, None).await.0, 202);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut config = app.config.clone();
    config.smtp_url = Some(Secret::new(format!("smtp://127.0.0.1:{port}")));
    let mailer = Mailer::from_config(&config, app.pay.clone()).unwrap();
    assert_eq!(mailer.drain().await.unwrap(), 1);
    let row = &outbox(&app, &app.t, &uid).await[0];
    assert_eq!((row.status, row.attempts), (MailStatus::Pending, 1));
    assert!(row.last_error.is_some());
    assert!(!row.last_error.as_deref().unwrap().contains(PAYER));
    // Not due again before the first retry delay (one minute).
    assert_eq!(mailer.drain().await.unwrap(), 0);
    app.clock.advance_secs(60);
    assert_eq!(mailer.drain().await.unwrap(), 1);
    assert_eq!(outbox(&app, &app.t, &uid).await[0].attempts, 2);
}

on_both_backends!(
    default_and_explicit_addresses,
    address_and_body_rules,
    links_that_are_not_active_are_a_conflict,
    credentials_and_tenancy,
    smtp_end_to_end,
    an_unreachable_server_is_retried_later,
);

//! Webhooks through real HTTP with a real local receiver: callback settings, signed deliveries
//! (checked by our verifier and by the Python `stripe` package), attempt numbers, retries on a
//! controlled clock, final failure, rotation, resend, the log's filters and its tenancy, and
//! two dispatchers sharing one database.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use pay_domain::kernel::ids::LinkUid;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, read, Session, TestApp};
use crate::on_both_backends;

/// One request the receiver got.
#[derive(Debug, Clone)]
pub struct Received {
    pub headers: HashMap<String, String>,
    pub body: String,
}

/// A local webhook endpoint that records requests and answers with queued statuses (200 when
/// the queue is empty).
#[derive(Clone)]
pub struct Receiver {
    pub url: String,
    pub got: Arc<Mutex<Vec<Received>>>,
    pub answers: Arc<Mutex<VecDeque<u16>>>,
}

impl Receiver {
    pub fn start() -> Receiver {
        let got = Arc::new(Mutex::new(Vec::new()));
        let answers = Arc::new(Mutex::new(VecDeque::new()));
        let (g, a) = (got.clone(), answers.clone());
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = HttpServer::new(move || {
            let (g, a) = (g.clone(), a.clone());
            App::new().default_service(web::to(move |req: HttpRequest, body: web::Bytes| {
                let (g, a) = (g.clone(), a.clone());
                async move {
                    let headers = req
                        .headers()
                        .iter()
                        .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap_or("").to_owned()))
                        .collect();
                    g.lock().unwrap().push(Received {
                        headers,
                        body: String::from_utf8_lossy(&body).into_owned(),
                    });
                    let status = a.lock().unwrap().pop_front().unwrap_or(200);
                    HttpResponse::build(actix_web::http::StatusCode::from_u16(status).unwrap())
                        .body("ok")
                }
            }))
        })
        .workers(1)
        .listen(listener)
        .unwrap()
        .run();
        actix_rt::spawn(server);
        Receiver {
            url: format!("http://127.0.0.1:{port}/hooks"),
            got,
            answers,
        }
    }

    pub fn always(&self, status: u16, times: usize) {
        let mut a = self.answers.lock().unwrap();
        for _ in 0..times {
            a.push_back(status);
        }
    }

    pub fn received(&self) -> Vec<Received> {
        self.got.lock().unwrap().clone()
    }
}

fn callback_path(company: &str) -> String {
    format!("/api/partner/v1/companies/{company}/payment-callback")
}

/// Sets the main tenant's payment callback (the first save); returns the signing secret.
pub async fn set_callback(app: &TestApp, s: &Session, url: &str) -> String {
    put_callback_of(app, &app.t.company_id, s, url).await["signingSecret"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Saves `company`'s payment callback in session `s` (the first save, which shows the signing
/// secret, or a change, which does not); returns the answer's body.
pub async fn put_callback_of(app: &TestApp, company: &str, s: &Session, url: &str) -> Value {
    let got = read(
        app.in_session(s, Method::PUT, &callback_path(company))
            .json(&json!({ "url": url }))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 200, "{}", got.1);
    got.1
}

pub async fn test_event(app: &TestApp, uid: &str) -> Value {
    test_event_as(app, &app.t, uid).await
}

/// A test event of tenant `t`'s link; its first delivery.
pub async fn test_event_as(app: &TestApp, t: &crate::helpers::Tenant, uid: &str) -> Value {
    let got = read(
        app.as_tenant(t, Method::POST, "/api/partner/v1/pay/webhook-requests/test")
            .json(&json!({ "paymentLinkUid": uid }))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 202, "{}", got.1);
    got.1["data"][0].clone()
}

/// Verifies with the independent implementation in the Python `stripe` package.
fn stripe_verifies(payload: &str, header: &str, secret: &str) -> Option<bool> {
    let probe = std::process::Command::new("python3")
        .args(["-c", "import stripe"])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        if std::env::var("PAY_REQUIRE_ALL_TESTS").as_deref() == Ok("1") {
            panic!("the Python stripe package is required (pip install stripe)");
        }
        eprintln!("SKIP: stripe signature check (pip install stripe to run it)");
        return None;
    }
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys, stripe\nstripe.WebhookSignature.verify_header(sys.argv[1], sys.argv[2], sys.argv[3], 300)",
            payload,
            header,
            secret,
        ])
        .output()
        .unwrap();
    Some(out.status.success())
}

/// Each request the receiver got, in arrival order, with its JSON body, every signature
/// checked against `secret`.
pub fn verified_bodies(rx: &Receiver, secret: &str) -> Vec<(Received, Value)> {
    rx.received()
        .into_iter()
        .map(|r| {
            pay_webhooks::verify(
                secret,
                &r.headers["x-pay-signature"],
                r.body.as_bytes(),
                now_secs(),
                300,
            )
            .expect("a valid signature");
            let b: Value = serde_json::from_str(&r.body).unwrap();
            (r, b)
        })
        .collect()
}

/// A delivery as tenant `t`'s log shows it.
pub async fn logged_as(app: &TestApp, t: &crate::helpers::Tenant, id: &str) -> Value {
    let got = read(
        app.as_tenant(
            t,
            Method::GET,
            &format!("/api/partner/v1/pay/webhook-requests/{id}"),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(got.0, 200, "{}", got.1);
    got.1
}

pub fn now_secs() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

async fn log(app: &TestApp, query: &str) -> (reqwest::StatusCode, Value) {
    read(
        app.req(
            Method::GET,
            &format!("/api/partner/v1/pay/webhook-requests{query}"),
        )
        .send()
        .await
        .unwrap(),
    )
    .await
}

async fn callback_settings(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let path = callback_path(&app.t.company_id);
    let got = read(app.in_session(&s, Method::GET, &path).send().await.unwrap()).await;
    assert_eq!(
        got.1,
        json!({"url": null, "secretLast4": null, "secretCreatedAt": null})
    );
    let secret = set_callback(&app, &s, "https://hooks.shop.example/pay").await;
    assert!(
        secret.starts_with("whsec_") && secret.len() == 49,
        "{secret}"
    );
    let got = read(app.in_session(&s, Method::GET, &path).send().await.unwrap()).await;
    assert_eq!(got.1["url"], "https://hooks.shop.example/pay");
    assert_eq!(got.1["secretLast4"], &secret[secret.len() - 4..]);
    assert!(got.1.get("signingSecret").is_none());
    assert!(
        !got.1.to_string().contains(&secret),
        "reads never reveal the secret"
    );
    // A new URL keeps the secret and returns none.
    let got = read(
        app.in_session(&s, Method::PUT, &path)
            .json(&json!({"url": "https://hooks.shop.example/v2"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.1["secretLast4"], &secret[secret.len() - 4..]);
    assert!(got.1.get("signingSecret").is_none());
    // Rotation issues a new one, once.
    let got = read(
        app.in_session(&s, Method::POST, &format!("{path}/rotate-secret"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 200);
    let rotated = got.1["signingSecret"].as_str().unwrap();
    assert_ne!(rotated, secret);
    // Validation, strictness, permissions and tenancy.
    for (body, code, field) in [
        (
            json!({"url": "https://u:p@hooks.shop.example/"}),
            "validation_failed",
            "url",
        ),
        (json!({"url": "not a url"}), "validation_failed", "url"),
        (json!({"url": 5}), "validation_failed", "url"),
        (json!({}), "validation_failed", "url"),
        (
            json!({"url": "https://x.example", "secret": "mine"}),
            "unknown_field",
            "secret",
        ),
    ] {
        assert_error(
            &read(
                app.in_session(&s, Method::PUT, &path)
                    .json(&body)
                    .send()
                    .await
                    .unwrap(),
            )
            .await,
            400,
            code,
            Some(field),
        );
    }
    let got = read(
        app.in_session_no_csrf(&s, Method::PUT, &path)
            .json(&json!({"url": "https://x.example"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 403, "forbidden", None);
    let (email, pw) = app.add_member(&app.t, "member").await;
    let m = app.login(&email, &pw).await;
    for (method, p) in [
        (Method::GET, path.clone()),
        (Method::POST, format!("{path}/rotate-secret")),
    ] {
        assert_error(
            &read(app.in_session(&m, method, &p).send().await.unwrap()).await,
            403,
            "forbidden",
            None,
        );
    }
    let other = app.new_tenant("Other Co").await;
    let theirs = callback_path(&other.company_id);
    assert_error(
        &read(
            app.in_session(&s, Method::GET, &theirs)
                .send()
                .await
                .unwrap(),
        )
        .await,
        403,
        "forbidden",
        None,
    );
    assert_error(
        &read(app.req(Method::GET, &path).send().await.unwrap()).await,
        401,
        "unauthorized",
        None,
    );
    // The legacy shared callback has the same shape; rotating an unset one is 404.
    let legacy = format!(
        "/api/partner/v1/companies/{}/legacy-callback",
        app.t.company_id
    );
    let got = read(
        app.in_session(&s, Method::POST, &format!("{legacy}/rotate-secret"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 404, "not_found", None);
    let got = read(
        app.in_session(&s, Method::PUT, &legacy)
            .json(&json!({"url": "https://legacy.shop.example/"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert!(got.1["signingSecret"]
        .as_str()
        .unwrap()
        .starts_with("whsec_"));
}

async fn a_signed_delivery_with_the_spec_headers(app: TestApp) {
    let rx = Receiver::start();
    let s = app.login_owner(&app.t).await;
    let secret = set_callback(&app, &s, &rx.url).await;
    let link = app
        .create_link(json!({"amount": "12.50", "orderId": "order-77"}))
        .await;
    let uid = link["uid"].as_str().unwrap();
    let d = test_event(&app, uid).await;
    assert_eq!(
        (d["status"].as_str(), d["attempts"].as_u64()),
        (Some("pending"), Some(0))
    );
    assert!(rx.received().is_empty(), "nothing is sent inline");
    // A business clock far ahead does not leak into the signature timestamp.
    app.clock.advance_secs(3 * 86_400);
    assert_eq!(app.dispatcher.run_once().await.unwrap(), 1);
    let got = rx.received();
    assert_eq!(got.len(), 1);
    let r = &got[0];
    assert_eq!(r.headers["content-type"], "application/json");
    assert_eq!(r.headers["user-agent"], "Pay-Webhooks/1.0");
    assert_eq!(r.headers["x-pay-delivery-id"], d["id"].as_str().unwrap());
    assert_eq!(
        r.headers["x-pay-delivery-group-id"],
        d["groupId"].as_str().unwrap()
    );
    assert_eq!(r.headers["x-pay-delivery-origin"], "event");
    assert_eq!(r.headers["x-pay-event"], "test");
    assert_eq!(r.headers["x-pay-attempt"], "1");
    let sig = &r.headers["x-pay-signature"];
    let t: i64 = sig
        .split(',')
        .next()
        .unwrap()
        .strip_prefix("t=")
        .unwrap()
        .parse()
        .unwrap();
    assert!((now_secs() - t).abs() <= 5, "t is real time: {t}");
    pay_webhooks::verify(&secret, sig, r.body.as_bytes(), now_secs(), 300).expect("our verifier");
    assert!(pay_webhooks::verify("whsec_wrong", sig, r.body.as_bytes(), now_secs(), 300).is_err());
    if let Some(ok) = stripe_verifies(&r.body, sig, &secret) {
        assert!(ok, "the stripe package verifies our signature");
    }
    let body: Value = serde_json::from_str(&r.body).unwrap();
    assert_eq!(body["deliveryId"], d["id"]);
    assert_eq!(body["type"], "pay.webhook.test");
    assert_eq!(body["sequence"], 1);
    assert_eq!(body["paymentLink"]["uid"], uid);
    assert_eq!(body["paymentLink"]["merchantOrderId"], "order-77");
    assert_eq!(body["paymentLink"]["amount"], "12.50");
    // The log shows the success.
    let got = log(&app, "").await;
    let e = &got.1["data"][0];
    assert_eq!(
        (e["status"].as_str(), e["attempts"].as_u64()),
        (Some("succeeded"), Some(1))
    );
    assert_eq!(e["lastResponseStatus"], 200);
    assert_eq!(e["nextAttemptAt"], Value::Null);
    assert_eq!(e["paymentLinkUid"], uid);
    // A second event of the same link carries the next sequence number.
    test_event(&app, uid).await;
    app.dispatcher.run_once().await.unwrap();
    let second: Value = serde_json::from_str(&rx.received()[1].body).unwrap();
    assert_eq!(second["sequence"], 2);
}

async fn retries_every_five_minutes_then_fails(app: TestApp) {
    let rx = Receiver::start();
    rx.always(500, 100);
    let s = app.login_owner(&app.t).await;
    let secret = set_callback(&app, &s, &rx.url).await;
    let link = app.create_link(json!({"amount": "1"})).await;
    let d = test_event(&app, link["uid"].as_str().unwrap()).await;
    let id = d["id"].as_str().unwrap().to_owned();
    for attempt in 1..=11u64 {
        assert_eq!(
            app.dispatcher.run_once().await.unwrap(),
            1,
            "attempt {attempt} is due"
        );
        // Not due again until five minutes later.
        assert_eq!(app.dispatcher.run_once().await.unwrap(), 0);
        app.clock.advance_secs(299);
        assert_eq!(
            app.dispatcher.run_once().await.unwrap(),
            0,
            "not before 5 minutes"
        );
        app.clock.advance_secs(1);
    }
    let got = rx.received();
    assert_eq!(got.len(), 11, "the first attempt and ten retries");
    for (i, r) in got.iter().enumerate() {
        assert_eq!(r.headers["x-pay-attempt"], (i + 1).to_string());
        assert_eq!(r.headers["x-pay-delivery-id"], id);
        // Each attempt is signed afresh and verifies now.
        pay_webhooks::verify(
            &secret,
            &r.headers["x-pay-signature"],
            r.body.as_bytes(),
            now_secs(),
            300,
        )
        .unwrap();
    }
    app.clock.advance_secs(3600);
    assert_eq!(
        app.dispatcher.run_once().await.unwrap(),
        0,
        "failed is final"
    );
    let detail = read(
        app.req(
            Method::GET,
            &format!("/api/partner/v1/pay/webhook-requests/{id}"),
        )
        .send()
        .await
        .unwrap(),
    )
    .await
    .1;
    assert_eq!(
        (detail["status"].as_str(), detail["attempts"].as_u64()),
        (Some("failed"), Some(11))
    );
    assert_eq!(detail["lastResponseStatus"], 500);
    let history = detail["attemptHistory"].as_array().unwrap();
    assert_eq!(history.len(), 11);
    for (i, a) in history.iter().enumerate() {
        assert_eq!(a["number"], i as u64 + 1);
        assert_eq!(a["responseStatus"], 500);
        assert_eq!(a["responseExcerpt"], "ok");
    }
    let failed = log(&app, "?deliveryStatus=failed").await.1;
    assert_eq!(failed["data"].as_array().unwrap().len(), 1);
}

async fn a_redirect_is_a_failure_and_not_followed(app: TestApp) {
    let rx = Receiver::start();
    let s = app.login_owner(&app.t).await;
    set_callback(&app, &s, &rx.url).await;
    let link = app.create_link(json!({"amount": "1"})).await;
    rx.always(302, 1);
    test_event(&app, link["uid"].as_str().unwrap()).await;
    app.dispatcher.run_once().await.unwrap();
    let e = log(&app, "").await.1["data"][0].clone();
    assert_eq!(
        (e["status"].as_str(), e["lastResponseStatus"].as_u64()),
        (Some("retrying"), Some(302))
    );
    app.clock.advance_secs(300);
    app.dispatcher.run_once().await.unwrap();
    let e = log(&app, "").await.1["data"][0].clone();
    assert_eq!(
        (e["status"].as_str(), e["attempts"].as_u64()),
        (Some("succeeded"), Some(2))
    );
}

async fn rotation_signs_with_both_secrets(app: TestApp) {
    let rx = Receiver::start();
    let s = app.login_owner(&app.t).await;
    let old = set_callback(&app, &s, &rx.url).await;
    let new = read(
        app.in_session(
            &s,
            Method::POST,
            &format!("{}/rotate-secret", callback_path(&app.t.company_id)),
        )
        .send()
        .await
        .unwrap(),
    )
    .await
    .1["signingSecret"]
        .as_str()
        .unwrap()
        .to_owned();
    let link = app.create_link(json!({"amount": "1"})).await;
    test_event(&app, link["uid"].as_str().unwrap()).await;
    app.dispatcher.run_once().await.unwrap();
    let r = rx.received()[0].clone();
    let sig = &r.headers["x-pay-signature"];
    assert_eq!(sig.matches("v1=").count(), 2, "{sig}");
    for secret in [&old, &new] {
        pay_webhooks::verify(secret, sig, r.body.as_bytes(), now_secs(), 300).unwrap();
    }
    // After the 24 h grace only the new secret signs.
    app.clock.advance_secs(86_401);
    test_event(&app, link["uid"].as_str().unwrap()).await;
    app.dispatcher.run_once().await.unwrap();
    let r = rx.received()[1].clone();
    let sig = &r.headers["x-pay-signature"];
    assert_eq!(sig.matches("v1=").count(), 1);
    pay_webhooks::verify(&new, sig, r.body.as_bytes(), now_secs(), 300).unwrap();
    assert!(pay_webhooks::verify(&old, sig, r.body.as_bytes(), now_secs(), 300).is_err());
}

async fn resend_filters_and_tenancy(app: TestApp) {
    let rx = Receiver::start();
    let s = app.login_owner(&app.t).await;
    set_callback(&app, &s, &rx.url).await;
    let a = app
        .create_link(json!({"amount": "1", "orderId": "ord-a"}))
        .await;
    let b = app
        .create_link(json!({"amount": "2", "orderId": "ord-b"}))
        .await;
    let (ua, ub) = (a["uid"].as_str().unwrap(), b["uid"].as_str().unwrap());
    let da = test_event(&app, ua).await;
    test_event(&app, ub).await;
    app.dispatcher.run_once().await.unwrap();
    // Resend: a new delivery in the same group, origin manual.
    let got = read(
        app.req(
            Method::POST,
            &format!(
                "/api/partner/v1/pay/webhook-requests/{}/resend",
                da["id"].as_str().unwrap()
            ),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(got.0, 202, "{}", got.1);
    let re = got.1;
    assert_ne!(re["id"], da["id"]);
    assert_eq!(re["groupId"], da["groupId"]);
    assert_eq!(
        (re["origin"].as_str(), re["status"].as_str()),
        (Some("manual"), Some("pending"))
    );
    app.dispatcher.run_once().await.unwrap();
    let last = rx.received().last().unwrap().clone();
    assert_eq!(last.headers["x-pay-delivery-origin"], "manual");
    assert_eq!(
        last.headers["x-pay-delivery-id"],
        re["id"].as_str().unwrap()
    );
    let body: Value = serde_json::from_str(&last.body).unwrap();
    assert_eq!(body["deliveryId"], re["id"]);
    // Filters.
    let uids = |v: &Value| -> Vec<String> {
        v["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["paymentLinkUid"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(uids(&log(&app, "").await.1).len(), 3);
    assert_eq!(uids(&log(&app, "?limit=1").await.1).len(), 1);
    assert_eq!(
        uids(&log(&app, &format!("?paymentLinkUid={ua}")).await.1),
        vec![ua, ua]
    );
    assert_eq!(uids(&log(&app, "?search=ord-b").await.1), vec![ub]);
    assert_eq!(
        uids(
            &log(&app, &format!("?search={}", re["id"].as_str().unwrap()))
                .await
                .1
        ),
        vec![ua]
    );
    assert_eq!(
        uids(&log(&app, "?deliveryStatus=succeeded").await.1).len(),
        3
    );
    assert_eq!(uids(&log(&app, "?deliveryStatus=failed").await.1).len(), 0);
    for (q, code, field) in [
        ("?limit=0", "validation_failed", "limit"),
        ("?limit=201", "validation_failed", "limit"),
        (
            "?deliveryStatus=done",
            "validation_failed",
            "deliveryStatus",
        ),
        ("?status=failed", "unknown_field", "status"),
    ] {
        assert_error(&log(&app, q).await, 400, code, Some(field));
    }
    // Another company sees none of it and cannot resend or read it.
    let other = app.new_tenant("Other Co").await;
    let theirs = read(
        app.as_tenant(&other, Method::GET, "/api/partner/v1/pay/webhook-requests")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(theirs.1, json!({"data": []}));
    let id = da["id"].as_str().unwrap();
    for (m, p) in [
        (
            Method::GET,
            format!("/api/partner/v1/pay/webhook-requests/{id}"),
        ),
        (
            Method::POST,
            format!("/api/partner/v1/pay/webhook-requests/{id}/resend"),
        ),
    ] {
        assert_error(
            &read(app.as_tenant(&other, m, &p).send().await.unwrap()).await,
            404,
            "not_found",
            None,
        );
    }
    let got = read(
        app.as_tenant(
            &other,
            Method::POST,
            "/api/partner/v1/pay/webhook-requests/test",
        )
        .json(&json!({"paymentLinkUid": ua}))
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_error(&got, 404, "not_found", None);
    // No callback configured: a clear 400.
    let theirs_link = read(
        app.as_tenant(&other, Method::POST, "/api/partner/v1/pay/payment-links")
            .json(&json!({"amount": "1"}))
            .send()
            .await
            .unwrap(),
    )
    .await
    .1;
    let got = read(
        app.as_tenant(
            &other,
            Method::POST,
            "/api/partner/v1/pay/webhook-requests/test",
        )
        .json(&json!({"paymentLinkUid": theirs_link["uid"]}))
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_error(&got, 400, "validation_failed", Some("paymentLinkUid"));
    // Credentials.
    assert_error(
        &read(
            app.anon(Method::GET, "/api/partner/v1/pay/webhook-requests")
                .send()
                .await
                .unwrap(),
        )
        .await,
        401,
        "unauthorized",
        None,
    );
    let wrong = app
        .anon(Method::GET, "/api/partner/v1/pay/webhook-requests")
        .header("x-svc-key-id", &app.t.key_id)
        .header("x-svc-key-secret", "mksec_nope");
    assert_error(
        &read(wrong.send().await.unwrap()).await,
        401,
        "invalid_credentials",
        None,
    );
}

async fn two_dispatchers_deliver_each_event_once(app: TestApp) {
    let rx = Receiver::start();
    let s = app.login_owner(&app.t).await;
    set_callback(&app, &s, &rx.url).await;
    let link = app.create_link(json!({"amount": "1"})).await;
    let uid = LinkUid::parse(link["uid"].as_str().unwrap()).unwrap();
    let n = 1000;
    let pay = app.pay.clone();
    let (kid, ksec) = (app.t.key_id.clone(), app.t.key_secret.clone());
    tokio::task::spawn_blocking(move || {
        let p = pay
            .tenancy()
            .authenticate_api_key(Some(&kid), Some(&ksec))
            .unwrap();
        for _ in 0..n {
            pay.webhooks().send_test_event(&p, &uid).unwrap();
        }
    })
    .await
    .unwrap();
    // A second "server": its own store pool and service on the same database.
    let store = pay_server::open_store(&app.config).unwrap();
    let pay2 = pay_server::build_pay_with_clock(&app.config, store, app.clock.clone()).unwrap();
    let second = pay_server::build_dispatcher(&app.config, pay2).unwrap();
    let (a, b) = futures_util::future::join(app.dispatcher.drain(), second.drain()).await;
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a + b, n, "every delivery attempted once ({a} + {b})");
    let got = rx.received();
    let mut ids: Vec<String> = got
        .iter()
        .map(|r| r.headers["x-pay-delivery-id"].clone())
        .collect();
    assert_eq!(ids.len(), n);
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), n, "no duplicate");
    let succeeded = log(&app, "?deliveryStatus=succeeded&limit=200").await.1;
    assert_eq!(succeeded["data"].as_array().unwrap().len(), 200);
    let pending = log(&app, "?deliveryStatus=pending").await.1;
    assert_eq!(pending["data"].as_array().unwrap().len(), 0, "no loss");
}

async fn webhook_routes_check_credentials_and_permissions(app: TestApp) {
    let rx = Receiver::start();
    let s = app.login_owner(&app.t).await;
    set_callback(&app, &s, &rx.url).await;
    let link = app.create_link(json!({"amount": "1"})).await;
    let uid = link["uid"].as_str().unwrap().to_owned();
    let d = test_event(&app, &uid).await;
    let id = d["id"].as_str().unwrap().to_owned();
    let routes: Vec<(Method, String, Option<Value>, bool)> = vec![
        (
            Method::GET,
            "/api/partner/v1/pay/webhook-requests".into(),
            None,
            false,
        ),
        (
            Method::GET,
            format!("/api/partner/v1/pay/webhook-requests/{id}"),
            None,
            false,
        ),
        (
            Method::POST,
            format!("/api/partner/v1/pay/webhook-requests/{id}/resend"),
            None,
            true,
        ),
        (
            Method::POST,
            "/api/partner/v1/pay/webhook-requests/test".into(),
            Some(json!({"paymentLinkUid": uid})),
            true,
        ),
    ];
    let send = |rb: reqwest::RequestBuilder, body: &Option<Value>| {
        let rb = match body {
            Some(b) => rb.json(b),
            None => rb,
        };
        rb.send()
    };
    let (email, pw) = app.add_member(&app.t, "member").await;
    let member = app.login(&email, &pw).await;
    for (m, path, body, writes) in &routes {
        for rb in [
            app.anon(m.clone(), path),
            app.anon(m.clone(), path)
                .header("x-svc-key-id", &app.t.key_id),
            app.anon(m.clone(), path)
                .header("x-svc-key-secret", &app.t.key_secret),
        ] {
            assert_error(
                &read(send(rb, body).await.unwrap()).await,
                401,
                "unauthorized",
                None,
            );
        }
        for rb in [
            app.anon(m.clone(), path)
                .header("x-svc-key-id", &app.t.key_id)
                .header(
                    "x-svc-key-secret",
                    "mksec_wrongwrongwrongwrongwrongwrongwrongwrong",
                ),
            app.anon(m.clone(), path)
                .header("authorization", "Bearer abc"),
        ] {
            assert_error(
                &read(send(rb, body).await.unwrap()).await,
                401,
                "invalid_credentials",
                None,
            );
        }
        let got = read(
            send(app.in_session(&member, m.clone(), path), body)
                .await
                .unwrap(),
        )
        .await;
        if *writes {
            assert_error(&got, 403, "forbidden", None);
            let got = read(
                send(app.in_session_no_csrf(&s, m.clone(), path), body)
                    .await
                    .unwrap(),
            )
            .await;
            assert_error(&got, 403, "forbidden", None);
        } else {
            assert_eq!(got.0, 200, "members read {path}: {}", got.1);
        }
        let got = read(
            send(app.in_session(&s, m.clone(), path), body)
                .await
                .unwrap(),
        )
        .await;
        assert!(
            got.0.is_success(),
            "the owner's session: {m} {path}: {}",
            got.1
        );
    }
    // A disabled key is refused on every webhook route.
    let keys = format!(
        "/api/partner/v1/companies/{}/integrations",
        app.t.company_id
    );
    let partner = read(app.in_session(&s, Method::GET, &keys).send().await.unwrap())
        .await
        .1["data"][0]["partner_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let off = app
        .in_session(&s, Method::PATCH, &format!("{keys}/{partner}"))
        .json(&json!({"enabled": false}))
        .send()
        .await
        .unwrap();
    assert_eq!(off.status(), 200);
    for (m, path, body, _) in &routes {
        let got = read(send(app.req(m.clone(), path), body).await.unwrap()).await;
        assert_error(&got, 401, "invalid_credentials", None);
    }
}

on_both_backends!(
    webhook_routes_check_credentials_and_permissions,
    callback_settings,
    a_signed_delivery_with_the_spec_headers,
    retries_every_five_minutes_then_fails,
    a_redirect_is_a_failure_and_not_followed,
    rotation_signs_with_both_secrets,
    resend_filters_and_tenancy,
    two_dispatchers_deliver_each_event_once,
);

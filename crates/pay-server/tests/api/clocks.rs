//! Per-company test clocks and the rate limits over HTTP: one company's clock moves only its
//! own links and sessions, is stored (another instance reads it), never releases a security
//! window; the gateway form and request e-mails are throttled; a start on a link that takes
//! no payment is refused before it is counted.

use pay_domain::kernel::ratelimit::RateLimits;
use reqwest::header::CONTENT_TYPE;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::{assert_error, read, spawn_limited, Backend, Tenant, TestApp};
use crate::on_both_backends;

const CLOCK: &str = "/api/partner/v1/pay/sandbox/clock";
const ETH: &str = "eip155:1/slip44:60";

fn instant(v: &Value) -> i64 {
    let t = time::OffsetDateTime::parse(
        v["now"].as_str().unwrap(),
        &time::format_description::well_known::Rfc3339,
    )
    .unwrap();
    (t.unix_timestamp_nanos() / 1_000_000) as i64
}

async fn clock_of(app: &TestApp, t: &Tenant) -> i64 {
    let got = read(app.as_tenant(t, Method::GET, CLOCK).send().await.unwrap()).await;
    assert_eq!(got.0, 200, "{}", got.1);
    instant(&got.1)
}

async fn advance(app: &TestApp, t: &Tenant, secs: i64) -> (StatusCode, Value) {
    read(
        app.as_tenant(t, Method::POST, CLOCK)
            .json(&json!({ "advanceSeconds": secs }))
            .send()
            .await
            .unwrap(),
    )
    .await
}

async fn quote_of(app: &TestApp, t: &Tenant) -> (String, String) {
    let l = read(
        app.as_tenant(t, Method::POST, "/api/partner/v1/pay/payment-links")
            .json(&json!({"amount": "10", "skipQuoteAcceptance": false}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(l.0, 201, "{}", l.1);
    let uid = l.1["uid"].as_str().unwrap().to_owned();
    let s = app.start_session(&uid, ETH).await;
    (uid, s["id"].as_str().unwrap().to_owned())
}

async fn session_status(app: &TestApp, uid: &str, id: &str) -> String {
    let got = read(
        app.anon(
            Method::GET,
            &format!("/api/public/checkout/{uid}/sessions/{id}"),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(got.0, 200, "{}", got.1);
    got.1["status"].as_str().unwrap().to_owned()
}

async fn each_company_moves_only_its_own_clock(app: TestApp) {
    let one = app.t.clone();
    let two = app.new_tenant("Beta Ltd").await;
    let owner = app.login_owner(&one).await;
    let (uid, sid) = quote_of(&app, &one).await;
    let real = clock_of(&app, &one).await;
    assert!((clock_of(&app, &two).await - real).abs() < 5_000);

    // Company two runs half a day ahead.
    let got = advance(&app, &two, 43_300).await;
    assert_eq!(got.0, 200, "{}", got.1);
    let two_now = instant(&got.1);
    assert!(two_now - real >= 43_300_000, "{two_now} vs {real}");
    assert!((clock_of(&app, &two).await - two_now).abs() < 5_000);
    // Company one's clock, quote, link and browser session are untouched.
    assert!(clock_of(&app, &one).await - real < 5_000);
    assert_eq!(session_status(&app, &uid, &sid).await, "quote");
    let detail = read(
        app.as_tenant(
            &one,
            Method::GET,
            &format!("/api/partner/v1/pay/payment-links/{uid}"),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(detail.1["status"], "active", "{}", detail.1);
    let companies = app
        .in_session(&owner, Method::GET, "/api/partner/v1/companies")
        .send()
        .await
        .unwrap();
    assert_eq!(companies.status(), 200, "still signed in");

    // Company one's own move expires its quote (ten minutes).
    assert_eq!(advance(&app, &one, 601).await.0, 200);
    assert_eq!(session_status(&app, &uid, &sid).await, "expired");
}

async fn another_instance_reads_the_stored_clock(app: TestApp) {
    let got = advance(&app, &app.t, 3_600).await;
    assert_eq!(got.0, 200, "{}", got.1);
    let moved = instant(&got.1);
    // A second service on the same database (another instance, a worker, or this one after a
    // restart): nothing of the clock lives in the first one's memory.
    let store = pay_server::open_store(&app.config).unwrap();
    let pay2 = pay_server::build_pay_with_clock(&app.config, store, app.clock.clone()).unwrap();
    let (key, secret) = (app.t.key_id.clone(), app.t.key_secret.clone());
    let now2 = tokio::task::spawn_blocking(move || {
        let p = pay2
            .tenancy()
            .authenticate_api_key(Some(&key), Some(&secret))
            .unwrap();
        pay2.sandbox().test_clock_now(&p).unwrap()
    })
    .await
    .unwrap();
    assert!(
        (now2.unix_millis() - moved).abs() < 5_000,
        "{now2:?} vs {moved}"
    );
    assert!(now2.unix_millis() - app.pay.now().unix_millis() >= 3_599_000);
}

async fn a_moved_clock_releases_no_security_window(app: TestApp) {
    let login = |password: &str| {
        app.anon(Method::POST, "/auth/login")
            .json(&json!({"email": app.t.email, "password": password}))
            .send()
    };
    for _ in 0..10 {
        assert_eq!(login("wrong password!!").await.unwrap().status(), 401);
    }
    assert_eq!(login("wrong password!!").await.unwrap().status(), 429);
    let anonymous = || {
        app.anon(Method::POST, "/api/public/anonymous-payment-links")
            .json(&json!({"amount": "5", "settlement": {"priorities": [
                {"asset": ETH, "address": "0x52908400098527886E0F7030069857D2E4169EE7"}]}}))
            .send()
    };
    for _ in 0..30 {
        let res = anonymous().await.unwrap();
        assert_eq!(res.status(), 201, "{:?}", res.text().await);
    }
    assert_eq!(anonymous().await.unwrap().status(), 429);
    // Three moves past the login window (what let 30 more guesses through before).
    for _ in 0..3 {
        assert_eq!(advance(&app, &app.t, 901).await.0, 200);
        assert_eq!(login(&app.t.password).await.unwrap().status(), 429);
        assert_eq!(anonymous().await.unwrap().status(), 429);
    }
}

async fn moving_the_clock_needs_the_settings_permission(app: TestApp) {
    let (email, password) = app.add_member(&app.t, "member").await;
    let member = app.login(&email, &password).await;
    let got = read(
        app.in_session(&member, Method::POST, CLOCK)
            .json(&json!({"advanceSeconds": 60}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 403, "forbidden", None);
    let owner = app.login_owner(&app.t).await;
    let got = read(
        app.in_session(&owner, Method::POST, CLOCK)
            .json(&json!({"advanceSeconds": 60}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 200, "{}", got.1);
    // At most ten years ahead in all.
    for _ in 0..9 {
        assert_eq!(advance(&app, &app.t, 366 * 86_400).await.0, 200);
    }
    assert_error(
        &advance(&app, &app.t, 366 * 86_400).await,
        400,
        "validation_failed",
        Some("advanceSeconds"),
    );
}

async fn starts_on_a_stopped_link_are_not_counted(app: TestApp) {
    let l = app.create_link(json!({"amount": "10"})).await;
    let uid = l["uid"].as_str().unwrap().to_owned();
    let status = |s: &'static str| {
        app.req(
            Method::PATCH,
            &format!("/api/partner/v1/pay/payment-links/{uid}"),
        )
        .json(&json!({ "status": s }))
        .send()
    };
    assert_eq!(status("paused").await.unwrap().status(), 200);
    let start = || {
        app.anon(
            Method::POST,
            &format!("/api/public/checkout/{uid}/sessions"),
        )
        .json(&json!({ "payAsset": ETH }))
        .send()
    };
    for _ in 0..70 {
        let got = read(start().await.unwrap()).await;
        assert_error(&got, 409, "link_not_active", None);
    }
    assert_eq!(status("active").await.unwrap().status(), 200);
    // None of the 70 refusals counted: the minute's 60 starts are all there.
    for _ in 0..60 {
        assert_eq!(start().await.unwrap().status(), 201);
    }
    assert_eq!(start().await.unwrap().status(), 429);
}

on_both_backends!(
    each_company_moves_only_its_own_clock,
    another_instance_reads_the_stored_clock,
    a_moved_clock_releases_no_security_window,
    moving_the_clock_needs_the_settings_permission,
    starts_on_a_stopped_link_are_not_counted,
);

// ----- throttles with the real default limits -----

async fn gateway_posts_are_throttled(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let got = read(
        app.in_session(
            &s,
            Method::POST,
            &format!(
                "/api/partner/v1/companies/{}/integrations",
                app.t.company_id
            ),
        )
        .json(&json!({"name": "Shop form", "appSlug": "pay",
                      "allowedOrigins": ["https://shop.example"]}))
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(got.0, 201, "{}", got.1);
    let key = got.1["integration"]["form_key_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let limits = RateLimits::default();
    let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
    let mut retry_after = None;
    for _ in 0..250 {
        let res = app
            .anon(Method::POST, &format!("/gateway/pay/{key}"))
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header("origin", "https://shop.example")
            .body("amount=5&title=spam")
            .send()
            .await
            .unwrap();
        let status = res.status().as_u16();
        *statuses.entry(status).or_default() += 1;
        if status == 429 {
            retry_after = res.headers().get("retry-after").cloned();
            let html = res.text().await.unwrap();
            assert!(html.contains("rate_limited"), "{html}");
        }
    }
    let allowed = limits.gateway_per_address.max as usize;
    assert_eq!(statuses.get(&303), Some(&allowed), "{statuses:?}");
    assert_eq!(statuses.get(&429), Some(&(250 - allowed)), "{statuses:?}");
    assert_eq!(retry_after.unwrap(), "60");
    // The merchant's list holds only what got through.
    let list = read(
        app.req(Method::GET, "/api/partner/v1/pay/payment-links")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(list.1["data"].as_array().unwrap().len(), allowed);
}

async fn request_emails_are_throttled(app: TestApp) {
    let limits = RateLimits::default();
    let send = |uid: String, to: &'static str| {
        app.req(
            Method::POST,
            &format!("/api/partner/v1/pay/payment-links/{uid}/send-request-email"),
        )
        .json(&json!({ "email": to }))
        .send()
    };
    let new_link = || async {
        app.create_link(json!({"amount": "10"})).await["uid"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    // Per link.
    let uid = new_link().await;
    for i in 0..limits.request_email_per_link.max {
        let to = ["a@example.com", "b@example.com", "c@example.com"][i as usize % 3];
        assert_eq!(send(uid.clone(), to).await.unwrap().status(), 202);
    }
    let res = send(uid.clone(), "d@example.com").await.unwrap();
    assert_eq!(res.headers()["retry-after"], "3600");
    assert_error(&read(res).await, 429, "rate_limited", None);
    // Per recipient, across links (case does not make another recipient).
    let mut sent = 0;
    loop {
        let uid = new_link().await;
        let to = if sent % 2 == 0 {
            "victim@example.com"
        } else {
            "Victim@Example.com"
        };
        let status = send(uid, to).await.unwrap().status();
        if status == 429 {
            break;
        }
        assert_eq!(status, 202);
        sent += 1;
        assert!(sent <= 40, "never throttled");
    }
    assert_eq!(sent, limits.mail_per_recipient.max);
}

macro_rules! with_default_limits {
    ($($f:ident),* $(,)?) => {$(
        mod $f {
            #[actix_rt::test]
            async fn sqlite() {
                if let Some(app) = super::spawn_limited(super::Backend::Sqlite, Default::default()).await {
                    super::$f(app).await;
                }
            }
            #[actix_rt::test]
            async fn postgres() {
                if let Some(app) = super::spawn_limited(super::Backend::Postgres, Default::default()).await {
                    super::$f(app).await;
                }
            }
        }
    )*};
}

with_default_limits!(gateway_posts_are_throttled, request_emails_are_throttled);

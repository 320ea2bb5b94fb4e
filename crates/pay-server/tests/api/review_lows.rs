//! The low findings of the second security review (docs/security.md): adding the vendor role
//! to a contact changes none of its fields without `pay:customers:write`; failed sign-ins are
//! capped per client address across accounts, and the `/signin` 429 page says when to come
//! back; erasing a grant's webhook secret erases it from the stored idempotent answers too; and
//! bidirectional control characters never reach a name a page or a mail shows.

use pay_domain::kernel::ratelimit::RateLimits;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, read, spawn_limited, Backend, TestApp};
use crate::oauth_support::{access_token, code_for, exchange, register};
use crate::on_both_backends;

const CUSTOMERS: &str = "/api/partner/v1/pay/customers";
const OUTGOING: &str = "/api/partner/v1/pay/sandbox/wallet-activity/outgoing";
const EXPENSE: &str = "/api/partner/v1/pay/bookkeeping/expenses/from-activity";
const SUB: &str = "/api/partner/v1/pay/webhook-subscriptions/current";
const BASE_USDC: &str = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";

async fn bearer(app: &TestApp, token: &str, m: Method, path: &str, body: Value) -> (u16, Value) {
    let (s, v) = read(
        app.anon(m, path)
            .bearer_auth(token)
            .json(&body)
            .send()
            .await
            .unwrap(),
    )
    .await;
    (s.as_u16(), v)
}

async fn customer(app: &TestApp, email: &str) -> Value {
    let (_, list) = read(app.req(Method::GET, CUSTOMERS).send().await.unwrap()).await;
    list["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["email"] == email)
        .cloned()
        .unwrap_or(Value::Null)
}

/// An expense saved for a new outgoing transfer, its counterparty a new vendor by e-mail.
async fn save_with_vendor(app: &TestApp, token: &str, digit: char, vendor: Value) -> (u16, Value) {
    let (s, out) = read(
        app.req(Method::POST, OUTGOING)
            .json(&json!({
                "chain": "eip155:8453",
                "txHash": format!("0x{}", digit.to_string().repeat(64)),
                "logIndex": 0,
                "asset": BASE_USDC,
                "amount": "10",
                "toAddress": "0x8ba1f109551bD432803012645Ac136ddd64DBA72",
            }))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(s, 201, "{out}");
    bearer(
        app,
        token,
        Method::POST,
        EXPENSE,
        json!({
            "walletActivityEventId": out["id"],
            "counterparty": {"newVendor": vendor},
            "category": "Hosting",
            "description": "Servers",
            "fiatCurrency": "EUR",
            "fiatAmount": "9.20",
            "evidenceFileIds": [],
        }),
    )
    .await
}

async fn a_vendor_role_changes_no_contact_field_without_the_customers_scope(app: TestApp) {
    let (s, _) = read(
        app.req(Method::POST, CUSTOMERS)
            .json(&json!({"email": "ann@example.com", "name": "Ann", "clientId": "c-1"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(s, 201);
    let books = access_token(&app, "pay:bookkeeping:read pay:bookkeeping:write").await;
    let got = save_with_vendor(
        &app,
        &books,
        'a',
        json!({"email": "ANN@example.com", "name": "Hijacked", "clientId": "evil"}),
    )
    .await;
    assert!([200, 201].contains(&got.0), "{got:?}");
    let ann = customer(&app, "ann@example.com").await;
    assert_eq!(
        (ann["name"].as_str(), ann["clientId"].as_str()),
        (Some("Ann"), Some("c-1")),
        "{ann}"
    );
    // A new vendor is still made with what was given.
    let got = save_with_vendor(
        &app,
        &books,
        'b',
        json!({"email": "billing@hoster.example", "name": "Hoster"}),
    )
    .await;
    assert!([200, 201].contains(&got.0), "{got:?}");
    // With pay:customers:write too, the given fields change (the upsert's rule).
    let both = access_token(
        &app,
        "pay:bookkeeping:read pay:bookkeeping:write pay:customers:write",
    )
    .await;
    let got = save_with_vendor(
        &app,
        &both,
        'c',
        json!({"email": "ann@example.com", "name": "Ann B."}),
    )
    .await;
    assert!([200, 201].contains(&got.0), "{got:?}");
    let ann = customer(&app, "ann@example.com").await;
    assert_eq!(
        (ann["name"].as_str(), ann["clientId"].as_str()),
        (Some("Ann B."), Some("c-1"))
    );
}

async fn login(app: &TestApp, email: &str, password: &str) -> reqwest::Response {
    app.anon(Method::POST, "/auth/login")
        .json(&json!({"email": email, "password": password}))
        .send()
        .await
        .unwrap()
}

async fn failed_sign_ins_are_capped_per_address_across_accounts(app: TestApp) {
    let cap = RateLimits::default().login_per_address;
    // Successes do not count.
    for _ in 0..3 {
        assert_eq!(
            login(&app, &app.t.email, &app.t.password).await.status(),
            200
        );
    }
    // One failure on each of many accounts (known or not), from one address.
    for i in 0..cap.max {
        let res = login(&app, &format!("user{i}@example.com"), "guess").await;
        assert_eq!(res.status(), 401, "attempt {i}");
    }
    let res = login(&app, "one-more@example.com", "guess").await;
    assert_eq!(
        res.headers()["retry-after"],
        cap.window.whole_seconds().to_string()
    );
    assert_error(&read(res).await, 429, "rate_limited", None);
    // Even the right password, from this address, waits.
    assert_eq!(
        login(&app, &app.t.email, &app.t.password).await.status(),
        429
    );
    // The sign-in page answers 429 too, and says when to come back.
    let res = app
        .anon(Method::POST, "/signin")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!(
            "email={}&password=guess",
            app.t.email.replace('@', "%40")
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 429);
    assert_eq!(
        res.headers()["retry-after"],
        cap.window.whole_seconds().to_string()
    );
    assert!(res.text().await.unwrap().contains("Too many attempts"));
}

async fn erasing_a_grant_secret_erases_it_from_stored_answers(app: TestApp) {
    let scopes = "pay:webhooks:read pay:webhooks:write";
    let client = register(&app, scopes, false, false).await;
    let code = code_for(&app, &app.t, &client, scopes).await;
    let (_, t, _) = exchange(&app, &client, &code, None).await;
    let token = t["access_token"].as_str().unwrap().to_owned();
    let body = r#"{"url": "https://hooks.shop.example/pay"}"#;
    let put = |key: &'static str| {
        app.anon(Method::PUT, SUB)
            .bearer_auth(&token)
            .header("Idempotency-Key", key)
            .header("content-type", "application/json")
            .body(body)
            .send()
    };
    let first = put("k-1").await.unwrap();
    assert_eq!(first.status(), 201);
    let first: Value = first.json().await.unwrap();
    let secret = first["signingSecret"].as_str().unwrap().to_owned();
    // While the secret lives, a retry gets the same answer, secret included.
    let again = put("k-1").await.unwrap();
    assert_eq!(again.headers()["idempotent-replayed"], "true");
    assert_eq!(again.json::<Value>().await.unwrap(), first);
    // DELETE erases it ...
    let (s, gone) = bearer(&app, &token, Method::DELETE, SUB, json!({})).await;
    assert_eq!(s, 200, "{gone}");
    // ... from every stored answer too: the replay no longer carries it.
    let replay = put("k-1").await.unwrap();
    assert_eq!(replay.status(), 201);
    assert_eq!(replay.headers()["idempotent-replayed"], "true");
    let text = replay.text().await.unwrap();
    assert!(!text.contains(&secret), "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert!(v.get("signingSecret").is_none_or(Value::is_null), "{v}");
    // A reactivation's new secret is not the old answer's either.
    let (s, back) = bearer(
        &app,
        &token,
        Method::PUT,
        SUB,
        json!({"url": "https://hooks.shop.example/pay"}),
    )
    .await;
    assert_eq!(s, 200, "{back}");
    let text = put("k-1").await.unwrap().text().await.unwrap();
    assert!(!text.contains(&secret));
    assert!(!text.contains(back["signingSecret"].as_str().unwrap()));
}

/// U+202E (right-to-left override) and its kin in names: refused with the field named.
async fn bidi_controls_never_reach_a_name(app: TestApp) {
    for bad in ["Ann\u{202E}gpj.exe", "\u{2067}Ann", "A\u{202A}nn\u{202C}"] {
        let (s, v) = read(
            app.req(Method::POST, CUSTOMERS)
                .json(&json!({"email": "ann@example.com", "name": bad}))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_error(&(s, v), 400, "validation_failed", Some("name"));
        let got = read(
            app.req(Method::POST, "/api/partner/v1/pay/payment-links")
                .json(&json!({"amount": "5", "title": bad}))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_error(&got, 400, "validation_failed", Some("title"));
        let got = read(
            app.req(Method::POST, "/api/partner/v1/pay/subscriptions")
                .json(&json!({
                    "customerEmail": "ann@example.com",
                    "label": bad,
                    "amountUsd": "5.00",
                    "cadence": "monthly",
                    "timezone": "UTC",
                }))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_error(&got, 400, "validation_failed", Some("label"));
        let got = read(
            app.anon(Method::POST, "/api/public/anonymous-payment-links")
                .json(&json!({
                    "amount": "0.05",
                    "settlement": {"priorities": [
                        {"asset": "eip155:1/slip44:60",
                         "address": "0x52908400098527886E0F7030069857D2E4169EE7"}
                    ]},
                    "branding": {"name": bad}
                }))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_error(&got, 400, "validation_failed", Some("branding.name"));
    }
    // Right-to-left text itself is welcome.
    let (s, v) = read(
        app.req(Method::POST, CUSTOMERS)
            .json(&json!({"email": "dana@example.com", "name": "דנה כהן"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(s, 201, "{v}");
}

on_both_backends!(
    a_vendor_role_changes_no_contact_field_without_the_customers_scope,
    erasing_a_grant_secret_erases_it_from_stored_answers,
    bidi_controls_never_reach_a_name,
);

mod failed_sign_ins_are_capped_per_address_across_accounts {
    use super::*;

    #[actix_rt::test]
    async fn sqlite() {
        if let Some(app) = spawn_limited(Backend::Sqlite, RateLimits::default()).await {
            super::failed_sign_ins_are_capped_per_address_across_accounts(app).await;
        }
    }

    #[actix_rt::test]
    async fn postgres() {
        if let Some(app) = spawn_limited(Backend::Postgres, RateLimits::default()).await {
            super::failed_sign_ins_are_capped_per_address_across_accounts(app).await;
        }
    }
}

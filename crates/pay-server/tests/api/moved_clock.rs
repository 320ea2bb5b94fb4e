//! Each read says what the company's clock says (docs/payments.md, "Sandbox processor and test
//! clock"): with a moved test clock the merchant API reads a link past its `expires_at` as
//! expired, and the delivery log, newest first on the company's clock, puts the event made
//! last first whatever made it (a payment, a test event, a resend).

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{read, TestApp};
use crate::on_both_backends;
use crate::webhooks::{set_callback, test_event, Receiver};

const CLOCK: &str = "/api/partner/v1/pay/sandbox/clock";
const LINKS: &str = "/api/partner/v1/pay/payment-links";
const LOG: &str = "/api/partner/v1/pay/webhook-requests";
const BASE_USDC: &str = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";

async fn get(app: &TestApp, path: &str) -> Value {
    let got = read(app.req(Method::GET, path).send().await.unwrap()).await;
    assert_eq!(got.0, 200, "{path}: {}", got.1);
    got.1
}

async fn advance(app: &TestApp, secs: i64) {
    let got = read(
        app.req(Method::POST, CLOCK)
            .json(&json!({ "advanceSeconds": secs }))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 200, "{}", got.1);
}

async fn the_merchant_api_reads_expiry_on_the_company_clock(app: TestApp) {
    let short = app
        .create_link(json!({"amount": "5", "expirationTime": "15m"}))
        .await;
    let never = app
        .create_link(json!({"amount": "5", "expirationTime": "never"}))
        .await;
    assert_eq!(short["expired"], false, "{short}");
    let uid = short["uid"].as_str().unwrap();
    advance(&app, 3600).await;
    // Status stays merchant-managed (spec); `expired` says what the company's clock says.
    let detail = get(&app, &format!("{LINKS}/{uid}")).await;
    assert_eq!(
        (detail["status"].as_str(), detail["expired"].as_bool()),
        (Some("active"), Some(true)),
        "{detail}"
    );
    let list = get(&app, LINKS).await;
    let row = |u: &Value| {
        list["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["uid"] == *u)
            .cloned()
            .unwrap()
    };
    assert_eq!(row(&short["uid"])["expired"], true);
    assert_eq!(row(&never["uid"])["expired"], false);
    // The Checkout API agrees, and a change of status answers with the same reading.
    let view = read(
        app.anon(Method::GET, &format!("/api/public/checkout/{uid}"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(view.1["status"], "expired");
    let paused = read(
        app.req(Method::PATCH, &format!("{LINKS}/{uid}"))
            .json(&json!({"status": "paused"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        (paused.1["status"].as_str(), paused.1["expired"].as_bool()),
        (Some("paused"), Some(true))
    );
    // Another company's clock did not move: its link of the same lifetime is not expired.
    let other = app.new_tenant("Other Co").await;
    let theirs = read(
        app.as_tenant(&other, Method::POST, LINKS)
            .json(&json!({"amount": "5", "expirationTime": "15m"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(theirs.1["expired"], false);
}

async fn the_delivery_log_orders_by_the_company_clock(app: TestApp) {
    let hooks = Receiver::start();
    let s = app.login_owner(&app.t).await;
    set_callback(&app, &s, &hooks.url).await;
    let link = app
        .create_link(json!({"amount": "5", "expirationTime": "never", "skipQuoteAcceptance": true}))
        .await;
    let uid = link["uid"].as_str().unwrap();
    advance(&app, 24 * 3600).await;
    // A payment's events on the moved clock (the deposit channel opens at once)...
    assert_eq!(app.start_session(uid, BASE_USDC).await["status"], "pending");
    let newest = |v: &Value| v["data"][0].clone();
    let first = newest(&get(&app, &format!("{LOG}?limit=1")).await);
    // ...then a test event: the newest row, first on the company's clock.
    let test = test_event(&app, uid).await;
    let now = newest(&get(&app, &format!("{LOG}?limit=1")).await);
    assert_eq!(
        now["id"], test["id"],
        "limit=1 answers the event made last: {now}"
    );
    assert!(
        now["createdAt"].as_str() >= first["createdAt"].as_str(),
        "{now} after {first}"
    );
    // A resend is the newest in turn.
    let resent = read(
        app.req(
            Method::POST,
            &format!("{LOG}/{}/resend", first["id"].as_str().unwrap()),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(resent.0, 202, "{}", resent.1);
    let now = newest(&get(&app, &format!("{LOG}?limit=1")).await);
    assert_eq!(now["origin"], "manual", "{now}");
    assert_eq!(now["id"], resent.1["id"]);
    // The whole log, newest first, is in order on that clock.
    let all = get(&app, LOG).await;
    let times: Vec<&str> = all["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["createdAt"].as_str().unwrap())
        .collect();
    let mut sorted = times.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(times, sorted);
}

on_both_backends!(
    the_merchant_api_reads_expiry_on_the_company_clock,
    the_delivery_log_orders_by_the_company_clock,
);

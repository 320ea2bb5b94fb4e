//! Anonymous one-time links over HTTP: both routes, the body rules, the rate limit, tenancy,
//! and their events reaching the link's own callback signed with its own secret.

use pay_domain::links::ports::PaymentLinkStore;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, read, TestApp};
use crate::on_both_backends;
use crate::webhooks::Receiver;

const PUBLIC: &str = "/api/public/anonymous-payment-links";
const PARTNER: &str = "/api/partner/v1/pay/payment-links";
const BASE_USDC: &str = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const ETH: &str = "eip155:1/slip44:60";

fn body() -> Value {
    json!({
        "amount": "0.05",
        "title": "Tip jar",
        "settlement": {"priorities": [
            {"asset": "eip155:999/erc20:0xunknown", "address": "0xaaa"},
            {"asset": ETH, "address": "0x52908400098527886E0F7030069857D2E4169EE7"}
        ]},
        "branding": {"name": "Bob's stall", "theme": "dark"}
    })
}

async fn post(app: &TestApp, path: &str, b: Value) -> (reqwest::StatusCode, Value) {
    read(app.anon(Method::POST, path).json(&b).send().await.unwrap()).await
}

async fn created_on_both_routes_and_never_listed(app: TestApp) {
    for path in [PUBLIC, PARTNER] {
        let got = post(&app, path, body()).await;
        assert_eq!(got.0, 201, "{path}: {}", got.1);
        let l = &got.1;
        let uid = l["uid"].as_str().unwrap();
        assert_eq!(
            l["publicUrl"],
            format!("https://pay.test.example/pay/{uid}")
        );
        assert_eq!(l["status"], "active");
        let p = &l["payload"];
        assert_eq!(p["asset"], ETH, "the first priority the service can settle");
        assert_eq!(p["currency"], "ETH");
        assert_eq!(
            p["settlementAddress"],
            "0x52908400098527886E0F7030069857D2E4169EE7"
        );
        assert_eq!(p["merchantName"], "Bob's stall");
        assert_eq!(p["merchantPaymentLinkTheme"], "dark");
        assert_eq!(p["amount"], "0.05");
        assert!(l.get("webhookSecret").is_none(), "no webhookUrl, no secret");
        // No merchant sees it.
        let detail = read(
            app.req(Method::GET, &format!("{PARTNER}/{uid}"))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_error(&detail, 404, "not_found", None);
    }
    let list = read(app.req(Method::GET, PARTNER).send().await.unwrap()).await;
    assert_eq!(list.1, json!({"data": []}));
}

async fn body_rules(app: TestApp) {
    let with = |f: &dyn Fn(&mut Value)| {
        let mut b = body();
        f(&mut b);
        b
    };
    let cases: Vec<(Value, u16, &str, &str)> = vec![
        (
            with(&|b| {
                b.as_object_mut().unwrap().remove("settlement");
            }),
            400,
            "validation_failed",
            "settlement.priorities",
        ),
        (
            with(&|b| b["settlement"] = json!({"priorities": []})),
            400,
            "validation_failed",
            "settlement.priorities",
        ),
        (
            with(&|b| b["settlement"] = json!({"priorities": "ETH"})),
            400,
            "validation_failed",
            "settlement.priorities",
        ),
        (
            with(&|b| {
                b["settlement"] =
                    json!({"priorities": [{"asset": ETH, "address": "0x1", "chain": "eth"}]})
            }),
            400,
            "unknown_field",
            "settlement.priorities[0].chain",
        ),
        (
            with(&|b| b["settlement"] = json!({"priorities": [{"asset": ETH}]})),
            400,
            "validation_failed",
            "settlement.priorities[0].address",
        ),
        (
            with(&|b| {
                b["settlement"] =
                    json!({"priorities": [{"asset": "eip155:9/erc20:0x9", "address": "0x1"}]})
            }),
            400,
            "invalid_destination_asset",
            "settlement.priorities",
        ),
        (
            with(&|b| b["settlement"]["order"] = json!(1)),
            400,
            "unknown_field",
            "settlement.order",
        ),
        (
            with(&|b| b["asset"] = json!(BASE_USDC)),
            400,
            "validation_failed",
            "asset",
        ),
        (
            with(&|b| b["branding"] = json!({"theme": "neon"})),
            400,
            "validation_failed",
            "branding.theme",
        ),
        (
            with(&|b| b["branding"] = json!({"colour": "red"})),
            400,
            "unknown_field",
            "branding.colour",
        ),
        (
            with(&|b| b["webhookUrl"] = json!("https://u:p@buyer.example/")),
            400,
            "validation_failed",
            "webhookUrl",
        ),
        (
            with(&|b| b["runtimeMode"] = json!("x")),
            400,
            "unknown_field",
            "runtimeMode",
        ),
        (
            with(&|b| b["amount"] = json!("0.0000000000000000001")),
            400,
            "validation_failed",
            "amount",
        ),
    ];
    for (b, status, code, field) in cases {
        assert_error(&post(&app, PUBLIC, b).await, status, code, Some(field));
    }
}

async fn thirty_a_minute_per_address(app: TestApp) {
    for _ in 0..30 {
        assert_eq!(post(&app, PUBLIC, body()).await.0, 201);
    }
    let res = app
        .anon(Method::POST, PARTNER)
        .json(&body())
        .send()
        .await
        .unwrap();
    assert_eq!(res.headers()["retry-after"], "60");
    assert_error(&read(res).await, 429, "rate_limited", None);
    app.clock.advance_secs(61);
    assert_eq!(post(&app, PUBLIC, body()).await.0, 201);
}

async fn events_reach_the_links_own_callback(app: TestApp) {
    let rx = Receiver::start();
    let mut b = body();
    b["webhookUrl"] = json!(rx.url);
    let got = post(&app, PUBLIC, b).await;
    assert_eq!(got.0, 201, "{}", got.1);
    let secret = got.1["webhookSecret"].as_str().unwrap().to_owned();
    assert!(secret.starts_with("whsec_"));
    let uid = got.1["uid"].as_str().unwrap().to_owned();
    // Payment events arrive with the payments work; emit one through the domain here.
    let pay = app.pay.clone();
    let store = app.store.clone();
    let sent = tokio::task::spawn_blocking(move || {
        let company = pay_domain::links::ANONYMOUS_COMPANY;
        let uid = pay_domain::kernel::ids::LinkUid::parse(&uid).unwrap();
        let link = store.link(company, &uid).unwrap().unwrap();
        pay.webhooks()
            .emit_link_event(
                &link,
                pay_domain::webhooks::EventKind::Test,
                "test",
                pay_domain::webhooks::SessionSnapshot::default(),
            )
            .unwrap()
    })
    .await
    .unwrap();
    assert_eq!(sent.len(), 1);
    assert_eq!(app.dispatcher.run_once().await.unwrap(), 1);
    let r = rx.received()[0].clone();
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    pay_webhooks::verify(
        &secret,
        &r.headers["x-pay-signature"],
        r.body.as_bytes(),
        now,
        300,
    )
    .expect("signed with the link's own secret");
    let env: Value = serde_json::from_str(&r.body).unwrap();
    assert_eq!(env["paymentLink"]["uid"], got.1["uid"]);
    // Not in any merchant's delivery log.
    let log = read(
        app.req(Method::GET, "/api/partner/v1/pay/webhook-requests")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(log.1, json!({"data": []}));
}

on_both_backends!(
    created_on_both_routes_and_never_listed,
    body_rules,
    thirty_a_minute_per_address,
    events_reach_the_links_own_callback,
);

//! What a disconnect of an official native installation keeps (spec, "Grant webhook
//! subscription", native row; "Grant subscription notes"): its grant subscription stops taking
//! new links, but its endpoint and a separately sealed credential still sign the late
//! payment-status events of the links issued before, and nothing else: not another
//! installation's events, not other event types, never the API, never an API answer.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{read, TestApp};
use crate::native::{connected, installed, platform};
use crate::oauth_support::*;
use crate::on_both_backends;
use crate::webhooks::{now_secs, Receiver};

pub const SUB: &str = "/api/partner/v1/pay/webhook-subscriptions/current";
pub const LINKS: &str = "/api/partner/v1/pay/payment-links";
const ASSET: &str = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";

/// A connected installation: its key, client id and tokens.
pub struct Plugin {
    pub key: DpopKey,
    pub client_id: String,
    pub access: String,
    pub refresh: String,
}

pub async fn plugin(app: &TestApp) -> Plugin {
    let key = DpopKey::generate();
    let (_, client) = installed(app, &key).await;
    let client_id = client["client_id"].as_str().unwrap().to_owned();
    let tokens = connected(app, &client_id, &key).await;
    Plugin {
        access: tokens["access_token"].as_str().unwrap().to_owned(),
        refresh: tokens["refresh_token"].as_str().unwrap().to_owned(),
        key,
        client_id,
    }
}

/// The plugin's API call: status and body.
pub async fn call(
    app: &TestApp,
    p: &Plugin,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> (reqwest::StatusCode, Value) {
    let mut req = with_dpop(app, &p.key, method, path, &p.access);
    if let Some(b) = body {
        req = req.json(&b);
    }
    read(req.send().await.unwrap()).await
}

/// Subscribes `p`'s grant to `hooks`: the signing secret.
pub async fn subscribe(app: &TestApp, p: &Plugin, hooks: &Receiver) -> String {
    let (status, sub) = call(app, p, Method::PUT, SUB, Some(json!({"url": hooks.url}))).await;
    assert_eq!(status, 201, "{sub}");
    sub["signingSecret"].as_str().unwrap().to_owned()
}

/// A link the plugin creates: its uid.
pub async fn link(app: &TestApp, p: &Plugin) -> String {
    let body = json!({"title": "Order", "amount": "10.00", "skipQuoteAcceptance": true});
    let (status, link) = call(app, p, Method::POST, LINKS, Some(body)).await;
    assert_eq!(status, 201, "{link}");
    link["uid"].as_str().unwrap().to_owned()
}

/// The payer pays `uid` in full (sandbox), then the deliveries go out.
pub async fn pay(app: &TestApp, uid: &str) {
    app.start_session(uid, ASSET).await;
    let (status, paid) = read(
        app.req(
            Method::POST,
            &format!("/api/partner/v1/pay/sandbox/payment-links/{uid}/events"),
        )
        .json(&json!({"type": "deposit", "amount": "10.00"}))
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{paid}");
    assert_eq!(paid["status"], "complete");
    app.dispatcher.drain().await.unwrap();
}

/// The plugin's disconnect: it revokes its refresh token (RFC 7009).
async fn disconnect(app: &TestApp, p: &Plugin) {
    let res = app
        .anon(Method::POST, "/oauth/revoke")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form(&[("token", &p.refresh), ("client_id", &p.client_id)]))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
}

/// `(link uid, event type)` of what `hooks` received, each verified with `secret`.
pub fn received(hooks: &Receiver, secret: &str) -> Vec<(String, String)> {
    hooks
        .received()
        .iter()
        .map(|r| {
            let sig = &r.headers["x-pay-signature"];
            pay_webhooks::verify(secret, sig, r.body.as_bytes(), now_secs(), 300).unwrap();
            let v: Value = serde_json::from_str(&r.body).unwrap();
            (
                v["paymentLink"]["uid"].as_str().unwrap_or("").to_owned(),
                v["type"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

const STATUS_EVENTS: [&str; 2] = [
    "pay.payment.status_changed",
    "pay.payment.settlement_updated",
];

async fn a_disconnect_keeps_what_late_payments_need(app: TestApp) {
    platform(&app, "woocommerce", "Woo Pay Connector").await;
    let (one, two) = (plugin(&app).await, plugin(&app).await);
    let (hooks1, hooks2) = (Receiver::start(), Receiver::start());
    let secret1 = subscribe(&app, &one, &hooks1).await;
    let secret2 = subscribe(&app, &two, &hooks2).await;

    // Connected, a payment sends more than payment-status events.
    let before = link(&app, &one).await;
    pay(&app, &before).await;
    let got = received(&hooks1, &secret1);
    assert!(
        got.iter()
            .any(|(_, t)| !STATUS_EVENTS.contains(&t.as_str())),
        "{got:?}"
    );
    let seen = got.len();

    // Links issued, then both installations disconnect; their tokens are dead.
    let late1 = link(&app, &one).await;
    let late2 = link(&app, &two).await;
    disconnect(&app, &one).await;
    disconnect(&app, &two).await;
    assert_eq!(call(&app, &one, Method::GET, LINKS, None).await.0, 401);
    assert_eq!(call(&app, &one, Method::GET, SUB, None).await.0, 401);

    // The late payments: each installation's endpoint gets its own links' payment-status
    // events, signed with its retained credential; no other event type, no other link.
    pay(&app, &late1).await;
    pay(&app, &late2).await;
    let got1 = received(&hooks1, &secret1)[seen..].to_vec();
    assert!(
        got1.iter()
            .any(|(u, t)| *u == late1 && t == "pay.payment.status_changed"),
        "{got1:?}"
    );
    assert!(
        got1.iter()
            .all(|(u, t)| *u == late1 && STATUS_EVENTS.contains(&t.as_str())),
        "{got1:?}"
    );
    let got2 = received(&hooks2, &secret2);
    assert!(got2.iter().any(|(u, _)| *u == late2), "{got2:?}");
    assert!(
        got2.iter()
            .all(|(u, t)| *u == late2 && STATUS_EVENTS.contains(&t.as_str())),
        "{got2:?}"
    );
    // The delivery log (an API key reads it): the other event types were never queued.
    let (_, log) = read(
        app.req(
            Method::GET,
            &format!("/api/partner/v1/pay/webhook-requests?paymentLinkUid={late1}"),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    let log = log["data"].as_array().unwrap().clone();
    assert_eq!(log.len(), got1.len(), "{log:?}");
    assert!(
        log.iter()
            .all(|d| STATUS_EVENTS.contains(&d["type"].as_str().unwrap_or(""))),
        "{log:?}"
    );

    // Reconnected: the subscription stays disabled for new links, and no answer of the API
    // shows the retained secret.
    let again = connected(&app, &one.client_id, &one.key).await;
    let one = Plugin {
        access: again["access_token"].as_str().unwrap().to_owned(),
        refresh: again["refresh_token"].as_str().unwrap().to_owned(),
        ..one
    };
    let (status, sub) = call(&app, &one, Method::GET, SUB, None).await;
    assert_eq!(status, 200, "{sub}");
    assert_eq!(sub["active"], false);
    assert!(sub.get("secretLast4").is_none_or(Value::is_null), "{sub}");
    assert!(!sub.to_string().contains(&secret1[6..]));
    let fresh = link(&app, &one).await;
    let count = hooks1.received().len();
    pay(&app, &fresh).await;
    assert_eq!(hooks1.received().len(), count);
    let (status, sub) = call(
        &app,
        &one,
        Method::PUT,
        SUB,
        Some(json!({"url": hooks1.url})),
    )
    .await;
    assert_eq!(status, 200, "{sub}");
    let secret = sub["signingSecret"].as_str().unwrap();
    assert_ne!(secret, secret1);
    assert!(!sub.to_string().contains(&secret1[6..]));
    let (_, listed) = read(
        app.req(Method::GET, "/api/partner/v1/pay/webhook-requests")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert!(!listed.to_string().contains(&secret1[6..]));
}

on_both_backends!(a_disconnect_keeps_what_late_payments_need);

//! The Checkout API, the sandbox events and test clock, the merchant's manual resolution and
//! the link detail with its latest session and timeline, through real HTTP; the events reach a
//! real local receiver signed.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, read, TestApp};
use crate::on_both_backends;
use crate::webhooks::{set_callback, verified_bodies, Receiver};

const ETH: &str = "eip155:1/slip44:60";
const BASE_USDC: &str = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";

fn checkout(uid: &str) -> String {
    format!("/api/public/checkout/{uid}")
}

fn sessions(uid: &str) -> String {
    format!("/api/public/checkout/{uid}/sessions")
}

fn session(uid: &str, id: &str) -> String {
    format!("/api/public/checkout/{uid}/sessions/{id}")
}

fn sandbox(uid: &str) -> String {
    format!("/api/partner/v1/pay/sandbox/payment-links/{uid}/events")
}

fn detail(uid: &str) -> String {
    format!("/api/partner/v1/pay/payment-links/{uid}")
}

async fn link(app: &TestApp, skip_review: bool) -> String {
    let l = app
        .create_link(json!({"amount": "10", "skipQuoteAcceptance": skip_review, "orderId": "o-1"}))
        .await;
    l["uid"].as_str().unwrap().to_owned()
}

async fn start(app: &TestApp, uid: &str, asset: &str) -> Value {
    app.start_session(uid, asset).await
}

async fn post(app: &TestApp, path: &str) -> (reqwest::StatusCode, Value) {
    read(app.anon(Method::POST, path).send().await.unwrap()).await
}

async fn event(app: &TestApp, uid: &str, body: Value) -> (reqwest::StatusCode, Value) {
    read(
        app.req(Method::POST, &sandbox(uid))
            .json(&body)
            .send()
            .await
            .unwrap(),
    )
    .await
}

/// The (event, previousStatus -> status) pairs the receiver got, in sequence order, each
/// signature checked.
fn received_events(rx: &Receiver, secret: &str) -> Vec<(String, String)> {
    let mut got: Vec<(u64, String, String)> = verified_bodies(rx, secret)
        .into_iter()
        .map(|(r, b)| {
            assert_eq!(r.headers["x-pay-event"], b["event"]["type"]);
            (
                b["sequence"].as_u64().unwrap(),
                b["event"]["type"].as_str().unwrap().to_owned(),
                format!(
                    "{} -> {}",
                    b["session"]["previousStatus"].as_str().unwrap_or("-"),
                    b["session"]["status"].as_str().unwrap_or("-")
                ),
            )
        })
        .collect();
    got.sort();
    got.into_iter().map(|(_, e, s)| (e, s)).collect()
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

async fn a_payment_from_quote_to_complete(app: TestApp) {
    let rx = Receiver::start();
    let owner = app.login_owner(&app.t).await;
    let secret = set_callback(&app, &owner, &rx.url).await;
    let uid = link(&app, false).await;

    let (status, view) = read(app.anon(Method::GET, &checkout(&uid)).send().await.unwrap()).await;
    assert_eq!(status, 200, "{view}");
    assert_eq!(view["status"], "active");
    assert_eq!(view["amount"], "10");
    assert_eq!(view["currency"], "USDC");
    assert_eq!(view["reviewRequired"], true);
    assert_eq!(view["branding"]["name"], "Acme Goods");
    assert!(view["payAssets"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a["assetIdentifier"] == ETH));

    let quote = start(&app, &uid, BASE_USDC).await;
    assert_eq!(quote["status"], "quote");
    assert_eq!(quote["requiredSellAmount"], "10");
    assert_eq!(quote["expectedBuyAmount"], "9.9");
    assert_eq!(quote["depositAddress"], Value::Null);
    let id = quote["id"].as_str().unwrap().to_owned();

    // Fresh prices five minutes in: a new ten-minute quote, same session, no event.
    app.clock.advance_secs(300);
    let (status, refreshed) = post(&app, &format!("{}/refresh", session(&uid, &id))).await;
    assert_eq!(status, 200, "{refreshed}");
    assert_eq!(refreshed["id"], id);
    assert_eq!(refreshed["status"], "quote");
    let at = |v: &Value| {
        time::OffsetDateTime::parse(
            v["expiresAt"].as_str().unwrap(),
            &time::format_description::well_known::Rfc3339,
        )
        .unwrap()
    };
    assert_eq!((at(&refreshed) - at(&quote)).whole_seconds(), 300);

    let (status, pending) = post(&app, &format!("{}/accept", session(&uid, &id))).await;
    assert_eq!(status, 200, "{pending}");
    assert_eq!(pending["status"], "pending");
    assert_eq!(pending["previousStatus"], "quote");
    assert!(pending["depositAddress"]
        .as_str()
        .unwrap()
        .starts_with("0x"));
    assert_eq!(pending["sourceChain"], "base");

    let (status, done) = event(&app, &uid, json!({"type": "deposit", "amount": "10"})).await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["status"], "complete");
    assert_eq!(done["settlement"]["receivedAmount"], "10");

    let (status, d) = read(app.req(Method::GET, &detail(&uid)).send().await.unwrap()).await;
    assert_eq!(status, 200);
    assert_eq!(d["latestSession"]["id"], id);
    assert_eq!(d["latestSession"]["status"], "complete");
    let types: Vec<&str> = d["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "quote_created",
            "quote_refreshed",
            "channel_created",
            "status_changed",
            "status_changed",
            "settlement_updated",
            "status_changed"
        ]
    );
    assert!(d["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e["sessionId"] == id && e["createdAt"].is_string() && e["id"].is_string()));

    app.dispatcher.drain().await.unwrap();
    assert_eq!(
        received_events(&rx, &secret),
        pairs(&[
            ("channel_created", "quote -> pending"),
            ("status_changed", "quote -> pending"),
            ("status_changed", "pending -> processing"),
            ("settlement_updated", "processing -> complete"),
            ("status_changed", "processing -> complete"),
        ])
    );
    // quote_created and quote_refreshed are internal: never sent.
    assert!(rx
        .received()
        .iter()
        .all(|r| !r.body.contains("quote_created") && !r.body.contains("quote_refreshed")));
}

async fn checkout_refuses_bad_input_and_stopped_links(app: TestApp) {
    let uid = link(&app, false).await;
    let got = read(
        app.anon(Method::GET, &checkout("unknownlink00"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 404, "not_found", None);
    for (body, code, field) in [
        (
            json!({"payAsset": "eip155:1/erc20:0xnope"}),
            "validation_failed",
            Some("payAsset"),
        ),
        (
            json!({"payAsset": 5}),
            "validation_failed",
            Some("payAsset"),
        ),
        (json!({}), "validation_failed", Some("payAsset")),
        (
            json!({"payAsset": ETH, "amount": "1"}),
            "unknown_field",
            Some("amount"),
        ),
    ] {
        let got = read(
            app.anon(Method::POST, &sessions(&uid))
                .json(&body)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_error(&got, 400, code, field);
    }
    let got = read(
        app.anon(Method::POST, &sessions(&uid))
            .body("payAsset=x")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 415, "unsupported_media_type", None);
    let unknown = "0192f0c4-1a2b-7c3d-8e4f-0123456789ab";
    let got = read(
        app.anon(Method::GET, &session(&uid, unknown))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 404, "not_found", None);

    // Cancel, then nothing more moves it.
    let s = start(&app, &uid, ETH).await;
    let id = s["id"].as_str().unwrap();
    let (status, c) = post(&app, &format!("{}/cancel", session(&uid, id))).await;
    assert_eq!(status, 200);
    assert_eq!(c["status"], "cancelled");
    let got = post(&app, &format!("{}/accept", session(&uid, id))).await;
    assert_error(&got, 409, "invalid_status_transition", None);

    // Pausing refuses new starts; the page-facing view says why.
    let got = read(
        app.req(Method::PATCH, &detail(&uid))
            .json(&json!({"status": "paused"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 200);
    let got = read(
        app.anon(Method::POST, &sessions(&uid))
            .json(&json!({"payAsset": ETH}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 409, "link_not_active", None);
    let (_, view) = read(app.anon(Method::GET, &checkout(&uid)).send().await.unwrap()).await;
    assert_eq!(view["status"], "paused");
}

async fn pausing_a_link_ends_the_payers_session(app: TestApp) {
    let rx = Receiver::start();
    let owner = app.login_owner(&app.t).await;
    let secret = set_callback(&app, &owner, &rx.url).await;
    let uid = link(&app, true).await;
    let s = start(&app, &uid, ETH).await;
    assert_eq!(s["status"], "pending");
    let got = read(
        app.req(Method::PATCH, &detail(&uid))
            .json(&json!({"status": "archived"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 200);
    let (_, now) = read(
        app.anon(Method::GET, &session(&uid, s["id"].as_str().unwrap()))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(now["status"], "cancelled");
    app.dispatcher.drain().await.unwrap();
    let got = received_events(&rx, &secret);
    assert_eq!(
        got[2..].to_vec(),
        pairs(&[
            ("payment_link_inactive", "pending -> cancelled"),
            ("status_changed", "pending -> cancelled"),
        ])
    );
}

async fn the_test_clock_expires_quotes_and_requests(app: TestApp) {
    let uid = link(&app, false).await;
    let s = start(&app, &uid, ETH).await;
    let (status, before) = read(
        app.req(Method::GET, "/api/partner/v1/pay/sandbox/clock")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200);
    for (body, code, field) in [
        (
            json!({"advanceSeconds": 0}),
            "validation_failed",
            "advanceSeconds",
        ),
        (
            json!({"advanceSeconds": "600"}),
            "validation_failed",
            "advanceSeconds",
        ),
        (
            json!({"advanceSeconds": 1.5}),
            "validation_failed",
            "advanceSeconds",
        ),
        (json!({"advance": 600}), "unknown_field", "advance"),
    ] {
        let got = read(
            app.req(Method::POST, "/api/partner/v1/pay/sandbox/clock")
                .json(&body)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_error(&got, 400, code, Some(field));
    }
    let (status, after) = read(
        app.req(Method::POST, "/api/partner/v1/pay/sandbox/clock")
            .json(&json!({"advanceSeconds": 600}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{after}");
    let t = |v: &Value| {
        time::OffsetDateTime::parse(
            v["now"].as_str().unwrap(),
            &time::format_description::well_known::Rfc3339,
        )
        .unwrap()
    };
    assert_eq!((t(&after) - t(&before)).whole_seconds(), 600);
    // The work that fell due ran: the quote expired.
    let (_, d) = read(app.req(Method::GET, &detail(&uid)).send().await.unwrap()).await;
    assert_eq!(d["latestSession"]["id"], s["id"]);
    assert_eq!(d["latestSession"]["status"], "expired");
    assert_eq!(d["latestSession"]["previousStatus"], "quote");
}

async fn an_underpayment_is_resolved_by_the_merchant(app: TestApp) {
    let uid = link(&app, true).await;
    let s = start(&app, &uid, BASE_USDC).await;
    let id = s["id"].as_str().unwrap().to_owned();
    let (status, under) = event(&app, &uid, json!({"type": "deposit", "amount": "6"})).await;
    assert_eq!(status, 200, "{under}");
    assert_eq!(under["status"], "underpaid");
    assert_eq!(under["settlement"]["shortBy"], "4");
    let resolve = format!("{}/manual-resolution", detail(&uid));
    let got = read(
        app.req(Method::POST, &resolve)
            .json(&json!({"action": "forgive"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 400, "validation_failed", Some("action"));
    let other = app.new_tenant("Other Shop").await;
    let got = read(
        app.as_tenant(&other, Method::POST, &resolve)
            .json(&json!({"action": "refund"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 404, "not_found", None);
    let (status, r) = read(
        app.req(Method::POST, &resolve)
            .json(&json!({"action": "refund"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["status"], "refund_pending");
    let got = read(
        app.anon(
            Method::POST,
            &format!("{}/refund-address", session(&uid, &id)),
        )
        .json(&json!({"address": "bad address!"}))
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_error(&got, 400, "validation_failed", Some("address"));
    let (status, r) = read(
        app.anon(
            Method::POST,
            &format!("{}/refund-address", session(&uid, &id)),
        )
        .json(&json!({"address": "0x52908400098527886E0F7030069857D2E4169EE7"}))
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(
        r["settlement"]["refundAddress"],
        "0x52908400098527886E0F7030069857D2E4169EE7"
    );
    let (status, r) = event(&app, &uid, json!({"type": "refund"})).await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["status"], "refunded");
    // Finished: the merchant has nothing left to resolve.
    let got = read(
        app.req(Method::POST, &resolve)
            .json(&json!({"action": "complete"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 409, "invalid_status_transition", None);
}

async fn sandbox_events_are_applied_once_and_validated(app: TestApp) {
    let uid = link(&app, true).await;
    start(&app, &uid, BASE_USDC).await;
    for (body, code, field) in [
        (json!({"type": "explode"}), "validation_failed", "type"),
        (json!({"type": "deposit"}), "validation_failed", "amount"),
        (
            json!({"type": "deposit", "amount": 10}),
            "validation_failed",
            "amount",
        ),
        (
            json!({"type": "deposit", "amount": "-1"}),
            "validation_failed",
            "amount",
        ),
        (
            json!({"type": "fail", "amount": "1"}),
            "validation_failed",
            "amount",
        ),
        (
            json!({"type": "fail", "hold": true}),
            "validation_failed",
            "hold",
        ),
        (
            json!({"type": "fail", "colour": "red"}),
            "unknown_field",
            "colour",
        ),
        (
            json!({"type": "fail", "eventId": ""}),
            "validation_failed",
            "eventId",
        ),
        (
            json!({"type": "fail", "eventId": "x".repeat(201)}),
            "validation_failed",
            "eventId",
        ),
    ] {
        let got = event(&app, &uid, body).await;
        assert_error(&got, 400, code, Some(field));
    }
    let held = json!({"type": "deposit", "amount": "10", "hold": true, "eventId": "chain-tx-1"});
    let (status, first) = event(&app, &uid, held.clone()).await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(first["status"], "processing");
    let (status, again) = event(&app, &uid, held).await;
    assert_eq!(status, 200, "a replayed event is not an error: {again}");
    assert_eq!(again, first, "and changes nothing");
    let (_, done) = event(&app, &uid, json!({"type": "settle"})).await;
    assert_eq!(done["status"], "complete");
    assert_eq!(done["settlement"]["receivedAmount"], "10", "counted once");
}

async fn sandbox_routes_check_credentials_and_company(app: TestApp) {
    let uid = link(&app, true).await;
    start(&app, &uid, BASE_USDC).await;
    // Every partner route of this work: no credential, a wrong secret, a read-only member.
    let (email, password) = app.add_member(&app.t, "member").await;
    let member = app.login(&email, &password).await;
    for (method, path, body) in [
        (Method::POST, sandbox(&uid), json!({"type": "fail"})),
        (
            Method::POST,
            "/api/partner/v1/pay/sandbox/clock".to_owned(),
            json!({"advanceSeconds": 5}),
        ),
        (
            Method::GET,
            "/api/partner/v1/pay/sandbox/clock".to_owned(),
            Value::Null,
        ),
        (
            Method::POST,
            format!("{}/manual-resolution", detail(&uid)),
            json!({"action": "complete"}),
        ),
    ] {
        let with_body = |rb: reqwest::RequestBuilder| {
            if body.is_null() {
                rb
            } else {
                rb.json(&body)
            }
        };
        let got = read(
            with_body(app.anon(method.clone(), &path))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_error(&got, 401, "unauthorized", None);
        let got = read(
            with_body(
                app.anon(method.clone(), &path)
                    .header("x-svc-key-id", &app.t.key_id)
                    .header("x-svc-key-secret", "mksec_wrong"),
            )
            .send()
            .await
            .unwrap(),
        )
        .await;
        assert_eq!(got.0, 401, "{path}: {}", got.1);
        if method == Method::POST {
            let got = read(
                with_body(app.in_session(&member, method.clone(), &path))
                    .send()
                    .await
                    .unwrap(),
            )
            .await;
            assert_error(&got, 403, "forbidden", None);
        }
    }
    let body = json!({"type": "fail"});
    let got = read(
        app.anon(Method::POST, &sandbox(&uid))
            .json(&body)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 401, "no credential");
    let got = read(
        app.anon(Method::POST, &sandbox(&uid))
            .header("x-svc-key-id", &app.t.key_id)
            .header("x-svc-key-secret", "mksec_wrong")
            .json(&body)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 401, "wrong secret");
    let other = app.new_tenant("Other Shop").await;
    let got = read(
        app.as_tenant(&other, Method::POST, &sandbox(&uid))
            .json(&body)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 404, "not_found", None);
    // A read-only member's session may not drive payments or the clock.
    let (email, password) = app.add_member(&app.t, "member").await;
    let member = app.login(&email, &password).await;
    for (path, body) in [
        (sandbox(&uid), json!({"type": "fail"})),
        (
            "/api/partner/v1/pay/sandbox/clock".to_owned(),
            json!({"advanceSeconds": 5}),
        ),
    ] {
        let got = read(
            app.in_session(&member, Method::POST, &path)
                .json(&body)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(got.0, 403, "{path}: {}", got.1);
    }
    let got = read(
        app.anon(Method::GET, "/api/partner/v1/pay/sandbox/clock")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 401);
    // The credential-free sandbox route drives anonymous links only.
    let got = read(
        app.anon(
            Method::POST,
            &format!("/api/public/sandbox/payment-links/{uid}/events"),
        )
        .json(&body)
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_error(&got, 404, "not_found", None);
    // The detail of another company's link is not found either.
    let got = read(
        app.as_tenant(&other, Method::GET, &detail(&uid))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 404, "not_found", None);
}

async fn a_one_time_link_takes_exactly_one_of_50_concurrent_payers(app: TestApp) {
    let (status, l) = read(
        app.anon(Method::POST, "/api/public/anonymous-payment-links")
            .json(&json!({
                "amount": "10",
                "skipQuoteAcceptance": true,
                "settlement": {"priorities": [{"asset": BASE_USDC, "address": "0x52908400098527886E0F7030069857D2E4169EE7"}]},
            }))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 201, "{l}");
    let uid = l["uid"].as_str().unwrap().to_owned();
    // 50 payers open the page and start at once.
    let starts = (0..50).map(|_| {
        let (app, uid) = (&app, uid.clone());
        async move { start(app, &uid, BASE_USDC).await }
    });
    let started: Vec<Value> = futures_util::future::join_all(starts).await;
    assert!(started.iter().all(|s| s["status"] == "pending"));
    // All 50 pay at once.
    let pays = started.iter().map(|s| {
        let app = &app;
        let (uid, id) = (uid.clone(), s["id"].as_str().unwrap().to_owned());
        async move {
            read(
                app.anon(
                    Method::POST,
                    &format!("/api/public/sandbox/payment-links/{uid}/events"),
                )
                .json(&json!({"type": "deposit", "amount": "10", "sessionId": id}))
                .send()
                .await
                .unwrap(),
            )
            .await
        }
    });
    let results = futures_util::future::join_all(pays).await;
    let statuses: Vec<String> = results
        .iter()
        .map(|(code, b)| {
            assert_eq!(*code, 200, "{b}");
            b["status"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(statuses.iter().filter(|s| *s == "complete").count(), 1);
    assert_eq!(
        statuses.iter().filter(|s| *s == "refund_pending").count(),
        49,
        "every other payment is to be refunded: {statuses:?}"
    );
    let (_, view) = read(app.anon(Method::GET, &checkout(&uid)).send().await.unwrap()).await;
    assert_eq!(view["status"], "archived");
    let got = read(
        app.anon(Method::POST, &sessions(&uid))
            .json(&json!({"payAsset": BASE_USDC}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    // Paid: the one payment it takes is made (docs/payments.md, "A payment under way").
    assert_error(&got, 409, "link_already_paid", None);
}

/// An embedded checkout on another site may call the public API from the browser; the partner
/// API stays closed to other origins.
async fn the_public_api_answers_browsers_on_other_origins(app: TestApp) {
    let uid = link(&app, false).await;
    let res = app
        .anon(Method::OPTIONS, &sessions(&uid))
        .header("origin", "https://shop.example")
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "content-type")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 204);
    let h = res.headers();
    assert_eq!(h["access-control-allow-origin"], "*");
    assert_eq!(h["access-control-allow-methods"], "GET, POST");
    assert_eq!(h["access-control-allow-headers"], "content-type");
    assert!(h.get("access-control-allow-credentials").is_none());
    let res = app
        .anon(Method::GET, &checkout(&uid))
        .header("origin", "https://shop.example")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["access-control-allow-origin"], "*");
    // Not the partner API: no CORS header, and a preflight is not answered.
    let res = app
        .req(Method::GET, &detail(&uid))
        .header("origin", "https://shop.example")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert!(res.headers().get("access-control-allow-origin").is_none());
    let res = app
        .anon(Method::OPTIONS, &detail(&uid))
        .header("origin", "https://shop.example")
        .header("access-control-request-method", "PATCH")
        .send()
        .await
        .unwrap();
    assert_ne!(res.status(), 204);
    assert!(res.headers().get("access-control-allow-origin").is_none());
}

async fn payment_starts_are_limited_per_address(app: TestApp) {
    let uid = link(&app, false).await;
    for _ in 0..60 {
        start(&app, &uid, ETH).await;
    }
    let res = app
        .anon(Method::POST, &sessions(&uid))
        .json(&json!({"payAsset": ETH}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.headers()["retry-after"], "60");
    let got = read(res).await;
    assert_error(&got, 429, "rate_limited", None);
}

on_both_backends!(
    payment_starts_are_limited_per_address,
    the_public_api_answers_browsers_on_other_origins,
    a_payment_from_quote_to_complete,
    checkout_refuses_bad_input_and_stopped_links,
    pausing_a_link_ends_the_payers_session,
    the_test_clock_expires_quotes_and_requests,
    an_underpayment_is_resolved_by_the_merchant,
    sandbox_events_are_applied_once_and_validated,
    sandbox_routes_check_credentials_and_company,
    a_one_time_link_takes_exactly_one_of_50_concurrent_payers,
);

/// A merchant without a settlement wallet for the link's asset: the start is refused with the
/// spec's event, on the timeline and to the receiver.
async fn a_start_without_a_merchant_wallet_is_blocked(backend: crate::helpers::Backend) {
    let processor = pay_processor::SandboxProcessor::new().without_wallets(&[BASE_USDC]);
    let Some(app) = crate::helpers::spawn_with(backend, std::sync::Arc::new(processor)).await
    else {
        return;
    };
    let rx = Receiver::start();
    let owner = app.login_owner(&app.t).await;
    let secret = set_callback(&app, &owner, &rx.url).await;
    let uid = link(&app, true).await;
    let got = read(
        app.anon(Method::POST, &sessions(&uid))
            .json(&json!({"payAsset": ETH}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 409, "missing_company_wallet", None);
    // Refused again within the hour: the same answer, and no second event.
    let again = read(
        app.anon(Method::POST, &sessions(&uid))
            .json(&json!({"payAsset": ETH}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&again, 409, "missing_company_wallet", None);
    let (_, d) = read(app.req(Method::GET, &detail(&uid)).send().await.unwrap()).await;
    assert_eq!(
        d["timeline"].as_array().unwrap().len(),
        1,
        "{}",
        d["timeline"]
    );
    assert_eq!(d["latestSession"], Value::Null);
    assert_eq!(
        d["timeline"][0]["type"],
        "start_blocked_missing_company_wallet"
    );
    assert_eq!(d["timeline"][0]["sessionId"], Value::Null);
    app.dispatcher.drain().await.unwrap();
    assert_eq!(
        received_events(&rx, &secret),
        pairs(&[("start_blocked_missing_company_wallet", "- -> -")])
    );
}

mod a_start_without_a_merchant_wallet_is_blocked {
    #[actix_rt::test]
    async fn sqlite() {
        super::a_start_without_a_merchant_wallet_is_blocked(crate::helpers::Backend::Sqlite).await;
    }
    #[actix_rt::test]
    async fn postgres() {
        super::a_start_without_a_merchant_wallet_is_blocked(crate::helpers::Backend::Postgres)
            .await;
    }
}

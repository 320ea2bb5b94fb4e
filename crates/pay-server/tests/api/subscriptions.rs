//! Subscriptions through real HTTP: create (customer upserted, cycle 0 and its invoice link),
//! list and read with cycles, the merchant's moves (one webhook each; cancel cancels unpaid
//! cycles and archives their links), cycle links as ordinary payable links with the
//! subscription's advanced settings, strict input, credentials, scopes and tenancy.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, read, TestApp};
use crate::links::millis;
use crate::oauth_support::access_token;
use crate::on_both_backends;
use crate::webhooks::{now_secs, set_callback, Receiver};

pub const SUBSCRIPTIONS: &str = "/api/partner/v1/pay/subscriptions";
const BASE_USDC: &str = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const LINKS: &str = "/api/partner/v1/pay/payment-links";

pub fn sub_path(uid: &str) -> String {
    format!("{SUBSCRIPTIONS}/{uid}")
}

pub fn monthly(email: &str) -> Value {
    json!({
        "customerEmail": email,
        "label": "Pro plan",
        "amountUsd": "10.00",
        "cadence": "monthly",
        "timezone": "Europe/Berlin",
    })
}

pub async fn create(app: &TestApp, body: Value) -> (reqwest::StatusCode, Value) {
    read(
        app.req(Method::POST, SUBSCRIPTIONS)
            .json(&body)
            .send()
            .await
            .unwrap(),
    )
    .await
}

pub async fn created(app: &TestApp, body: Value) -> Value {
    let got = create(app, body).await;
    assert_eq!(got.0, 201, "{}", got.1);
    got.1
}

pub async fn patch(app: &TestApp, uid: &str, status: &str) -> (reqwest::StatusCode, Value) {
    read(
        app.req(Method::PATCH, &sub_path(uid))
            .json(&json!({ "status": status }))
            .send()
            .await
            .unwrap(),
    )
    .await
}

async fn get(app: &TestApp, path: &str) -> (reqwest::StatusCode, Value) {
    read(app.req(Method::GET, path).send().await.unwrap()).await
}

/// Pays a link through the public checkout API and the sandbox: a session paying with USDC
/// on Base, its quote accepted when review is required, then a deposit of `fraction` of the
/// required amount. Returns the session after the deposit.
pub async fn pay(app: &TestApp, link_uid: &str, short_by: Option<&str>) -> Value {
    let mut s = app.start_session(link_uid, BASE_USDC).await;
    if s["status"] == "quote" {
        let got = read(
            app.anon(
                Method::POST,
                &format!(
                    "/api/public/checkout/{link_uid}/sessions/{}/accept",
                    s["id"].as_str().unwrap()
                ),
            )
            .send()
            .await
            .unwrap(),
        )
        .await;
        assert_eq!(got.0, 200, "{}", got.1);
        s = got.1;
    }
    let required = s["requiredSellAmount"].as_str().unwrap().to_owned();
    let amount = match short_by {
        None => required,
        Some(short) => {
            let r: f64 = required.parse().unwrap();
            let s: f64 = short.parse().unwrap();
            format!("{:.2}", r - s)
        }
    };
    let got = read(
        app.req(
            Method::POST,
            &format!("/api/partner/v1/pay/sandbox/payment-links/{link_uid}/events"),
        )
        .json(&json!({"type": "deposit", "amount": amount}))
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(got.0, 200, "{}", got.1);
    got.1
}

async fn create_issues_cycle_zero_as_an_ordinary_link(app: TestApp) {
    let start = "2032-01-31T09:30:00.000Z";
    let body = json!({
        "customerEmail": " Ann@Example.com ",
        "label": "Pro plan",
        "description": "Monthly seat",
        "amountUsd": "19.99",
        "cadence": "monthly",
        "timezone": "America/New_York",
        "startAt": "2026-01-31T09:30:00Z",
        "metadata": {"plan": "pro"},
    });
    // startAt five years ahead is refused; near now is taken.
    let mut far = body.clone();
    far["startAt"] = json!(start);
    assert_error(
        &create(&app, far).await,
        400,
        "validation_failed",
        Some("startAt"),
    );
    let now = time::OffsetDateTime::from_unix_timestamp(now_secs() + 3600).unwrap();
    let start_at = now
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    let mut body = body;
    body["startAt"] = json!(start_at);
    let s = created(&app, body).await;
    assert!(s["uid"].as_str().unwrap().starts_with("sub_"), "{s}");
    assert_eq!(s["status"], "active");
    assert_eq!(s["customerEmail"], "Ann@Example.com");
    assert_eq!(s["label"], "Pro plan");
    assert_eq!(s["description"], "Monthly seat");
    assert_eq!(s["amountUsd"], "19.99");
    assert_eq!(s["settlementAsset"], BASE_USDC, "the company default");
    assert_eq!(s["cadence"], "monthly");
    assert_eq!(s["billingIntervalUnit"], "month");
    assert_eq!(s["billingIntervalCount"], 1);
    assert_eq!(millis(s["startAt"].as_str().unwrap()), millis(&start_at));
    assert_eq!(s["timezone"], "America/New_York");
    assert_eq!(s["metadata"], json!({"plan": "pro"}));
    let cycles = s["cycles"].as_array().unwrap();
    assert_eq!(cycles.len(), 1);
    let c = &cycles[0];
    assert_eq!(c["sequence"], 0);
    assert_eq!(c["subscriptionId"], s["id"]);
    assert_eq!(c["dueAt"], s["startAt"]);
    assert_eq!(c["amountUsd"], "19.99");
    assert_eq!(c["status"], "open");
    assert_eq!(c["paidAt"], Value::Null);
    let link_uid = c["paymentLinkUid"].as_str().unwrap();
    assert_eq!(
        c["paymentUrl"],
        format!("https://pay.test.example/pay/{link_uid}")
    );
    // The customer was upserted by e-mail.
    let customers = get(&app, "/api/partner/v1/pay/customers").await.1;
    assert_eq!(customers["data"].as_array().unwrap().len(), 1);
    assert_eq!(customers["data"][0]["email"], "Ann@Example.com");
    // A second subscription of the same customer reuses the contact.
    created(&app, monthly("ann@example.COM")).await;
    let customers = get(&app, "/api/partner/v1/pay/customers").await.1;
    assert_eq!(customers["data"].as_array().unwrap().len(), 1);
    // The cycle link is an ordinary link of the list, tagged with its subscription and cycle.
    let links = get(&app, LINKS).await.1;
    let link = links["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["uid"] == link_uid)
        .expect("the cycle link is in the link list")
        .clone();
    assert_eq!(link["id"], c["paymentLinkId"]);
    assert_eq!(link["status"], "active");
    assert_eq!(link["publicUrl"], c["paymentUrl"]);
    assert_eq!(link["expires_at"], Value::Null);
    let p = &link["payload"];
    assert_eq!(p["amount"], "19.99");
    assert_eq!(p["fiatCurrency"], "USD");
    assert_eq!(p["asset"], BASE_USDC);
    assert_eq!(p["title"], "Pro plan");
    assert_eq!(p["customerEmail"], "Ann@Example.com");
    assert_eq!(p["orderId"], format!("{}-0", s["uid"].as_str().unwrap()));
    assert_eq!(p["metadata"]["subscriptionUid"], s["uid"]);
    assert_eq!(p["metadata"]["subscriptionId"], s["id"]);
    assert_eq!(p["metadata"]["subscriptionCycle"], 0);
    // Payable in the hosted checkout: the page renders, a payment completes, the cycle is paid.
    let page = app
        .anon(Method::GET, &format!("/pay/{link_uid}"))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.text().await.unwrap().contains("Pro plan"));
    let session = pay(&app, link_uid, None).await;
    assert_eq!(session["status"], "complete", "{session}");
    let after = get(&app, &sub_path(s["uid"].as_str().unwrap())).await;
    assert_eq!(after.0, 200);
    let c = &after.1["cycles"][0];
    assert_eq!(c["status"], "paid", "{}", after.1);
    assert!(c["paidAt"].is_string());
    // The list holds both subscriptions, newest first, with their cycles.
    let list = get(&app, SUBSCRIPTIONS).await;
    assert_eq!(list.0, 200);
    let data = list.1["data"].as_array().unwrap();
    assert_eq!(data.len(), 2);
    assert_eq!(data[1]["uid"], s["uid"]);
    assert_eq!(data[1]["cycles"][0]["status"], "paid");
    assert_eq!(data[0]["cycles"].as_array().unwrap().len(), 1);
}

async fn create_input_is_strict(app: TestApp) {
    let ok = monthly("ann@example.com");
    let with = |k: &str, v: Value| {
        let mut b = ok.clone();
        b[k] = v;
        b
    };
    let without = |k: &str| {
        let mut b = ok.clone();
        b.as_object_mut().unwrap().remove(k);
        b
    };
    let custom = |n: Value| {
        let mut b = ok.clone();
        b["cadence"] = json!("custom_months");
        b["billingIntervalCount"] = n;
        b
    };
    for (body, code, field) in [
        (
            with("cadence", json!("daily")),
            "validation_failed",
            "cadence",
        ),
        (
            with("cadence", json!("Monthly")),
            "validation_failed",
            "cadence",
        ),
        (
            custom(json!(0)),
            "validation_failed",
            "billingIntervalCount",
        ),
        (
            custom(json!(25)),
            "validation_failed",
            "billingIntervalCount",
        ),
        (
            custom(json!(-1)),
            "validation_failed",
            "billingIntervalCount",
        ),
        (
            custom(json!("3")),
            "validation_failed",
            "billingIntervalCount",
        ),
        (
            custom(json!(1.5)),
            "validation_failed",
            "billingIntervalCount",
        ),
        (
            without("billingIntervalCount").tap_custom(),
            "validation_failed",
            "billingIntervalCount",
        ),
        (
            with("billingIntervalCount", json!(2)),
            "validation_failed",
            "billingIntervalCount",
        ),
        (
            with("timezone", json!("Mars/Olympus")),
            "validation_failed",
            "timezone",
        ),
        (with("timezone", json!("")), "validation_failed", "timezone"),
        (
            with("amountUsd", json!("1.999")),
            "validation_failed",
            "amountUsd",
        ),
        (
            with("amountUsd", json!("-5")),
            "validation_failed",
            "amountUsd",
        ),
        (
            with("amountUsd", json!("0")),
            "validation_failed",
            "amountUsd",
        ),
        (
            with("amountUsd", json!("1000000000000000000000000000000")),
            "validation_failed",
            "amountUsd",
        ),
        (
            with("amountUsd", json!("1e30")),
            "validation_failed",
            "amountUsd",
        ),
        (
            with("amountUsd", json!(10)),
            "validation_failed",
            "amountUsd",
        ),
        (
            with("customerEmail", json!("nope")),
            "validation_failed",
            "customerEmail",
        ),
        (
            without("customerEmail"),
            "validation_failed",
            "customerEmail",
        ),
        (without("label"), "validation_failed", "label"),
        (with("label", json!(" ")), "validation_failed", "label"),
        (
            with("startAt", json!("yesterday")),
            "validation_failed",
            "startAt",
        ),
        (
            with("startAt", json!("2001-01-01T00:00:00Z")),
            "validation_failed",
            "startAt",
        ),
        (
            with("settlementAsset", json!("eip155:1/erc20:0xnope")),
            "invalid_destination_asset",
            "settlementAsset",
        ),
        (
            with("metadata", json!("x")),
            "validation_failed",
            "metadata",
        ),
        (
            with("metadata", json!({"successRedirectUrl": "not a url"})),
            "validation_failed",
            "metadata.successRedirectUrl",
        ),
        (
            with("metadata", json!({"underpaymentPercentThreshold": 101})),
            "validation_failed",
            "metadata.underpaymentPercentThreshold",
        ),
        (
            with("metadata", json!({"underpaymentFixedEnabled": "yes"})),
            "validation_failed",
            "metadata.underpaymentFixedEnabled",
        ),
        (with("status", json!("active")), "unknown_field", "status"),
        (with("cycles", json!([])), "unknown_field", "cycles"),
    ] {
        let got = create(&app, body.clone()).await;
        assert_error(&got, 400, code, Some(field));
    }
    // Nothing was written: no subscription, no customer, no link.
    assert_eq!(get(&app, SUBSCRIPTIONS).await.1["data"], json!([]));
    assert_eq!(
        get(&app, "/api/partner/v1/pay/customers").await.1["data"],
        json!([])
    );
    assert_eq!(get(&app, LINKS).await.1["data"], json!([]));
    // The cadences and their units.
    for (cadence, count, unit, n) in [
        ("weekly", None, "week", 1),
        ("biweekly", None, "week", 2),
        ("monthly", Some(1), "month", 1),
        ("custom_months", Some(24), "month", 24),
        ("yearly", None, "year", 1),
    ] {
        let mut b = with("cadence", json!(cadence));
        if let Some(c) = count {
            b["billingIntervalCount"] = json!(c);
        }
        let s = created(&app, b).await;
        assert_eq!(
            (
                s["billingIntervalUnit"].as_str(),
                s["billingIntervalCount"].as_u64()
            ),
            (Some(unit), Some(n)),
            "{cadence}"
        );
    }
}

trait TapCustom {
    fn tap_custom(self) -> Value;
}

impl TapCustom for Value {
    /// `custom_months` without its count.
    fn tap_custom(mut self) -> Value {
        self["cadence"] = json!("custom_months");
        self
    }
}

/// The (reason, previous -> next, cycle status) of each subscription webhook received, in
/// order, each signature checked.
pub fn subscription_events(rx: &Receiver, secret: &str) -> Vec<(String, String, String)> {
    subscription_events_by(rx, secret, "merchant_api")
}

/// The same for the moves of one trigger (`merchant_api`, `customer_portal`).
pub fn subscription_events_by(
    rx: &Receiver,
    secret: &str,
    trigger: &str,
) -> Vec<(String, String, String)> {
    rx.received()
        .iter()
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
            assert_eq!(b["type"], "pay.subscription.status_changed");
            assert_eq!(b["event"]["type"], "subscription_status_changed");
            assert_eq!(b["event"]["trigger"], trigger);
            assert_eq!(b["subscription"]["status"], b["data"]["nextStatus"]);
            assert_eq!(
                b["subscription"]["previousStatus"],
                b["data"]["previousStatus"]
            );
            assert!(b["subscription"].get("cycles").is_none());
            (
                b["data"]["reason"].as_str().unwrap().to_owned(),
                format!(
                    "{} -> {}",
                    b["data"]["previousStatus"].as_str().unwrap(),
                    b["data"]["nextStatus"].as_str().unwrap()
                ),
                b["cycle"]["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

async fn merchant_moves_and_cancel(app: TestApp) {
    let rx = Receiver::start();
    let owner = app.login_owner(&app.t).await;
    let secret = set_callback(&app, &owner, &rx.url).await;
    let s = created(&app, monthly("ann@example.com")).await;
    let uid = s["uid"].as_str().unwrap();
    let link_uid = s["cycles"][0]["paymentLinkUid"]
        .as_str()
        .unwrap()
        .to_owned();
    // The contract's table, merchant side.
    let steps: [(&str, Result<&str, ()>); 9] = [
        ("active", Ok("active")),
        ("overdue", Err(())),
        ("paused", Ok("paused")),
        ("paused", Ok("paused")),
        ("overdue", Err(())),
        ("active", Ok("active")),
        ("paused", Ok("paused")),
        ("cancelled", Ok("cancelled")),
        ("active", Err(())),
    ];
    for (to, expect) in steps {
        let got = patch(&app, uid, to).await;
        match expect {
            Ok(status) => {
                assert_eq!(got.0, 200, "{to}: {}", got.1);
                assert_eq!(got.1["status"], status);
            }
            Err(()) => assert_error(&got, 409, "invalid_status_transition", Some("status")),
        }
    }
    for to in ["paused", "overdue", "cancelled"] {
        let got = patch(&app, uid, to).await;
        if to == "cancelled" {
            assert_eq!(got.0, 200, "the same status is a no-op");
        } else {
            assert_error(&got, 409, "invalid_status_transition", Some("status"));
        }
    }
    // Cancel cancelled the unpaid cycle and archived its link.
    let after = get(&app, &sub_path(uid)).await.1;
    assert_eq!(after["status"], "cancelled");
    assert_eq!(after["cycles"][0]["status"], "cancelled");
    let link = get(&app, &format!("{LINKS}/{link_uid}")).await.1;
    assert_eq!(link["status"], "archived");
    let checkout = read(
        app.anon(Method::GET, &format!("/api/public/checkout/{link_uid}"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(checkout.1["status"], "archived");
    // One webhook per move, none for the no-ops and refusals.
    while app.dispatcher.run_once().await.unwrap() > 0 {}
    assert_eq!(
        subscription_events(&rx, &secret),
        vec![
            (
                "merchant_paused".into(),
                "active -> paused".into(),
                "open".into()
            ),
            (
                "merchant_resumed".into(),
                "paused -> active".into(),
                "open".into()
            ),
            (
                "merchant_paused".into(),
                "active -> paused".into(),
                "open".into()
            ),
            (
                "merchant_cancelled".into(),
                "paused -> cancelled".into(),
                "cancelled".into()
            ),
        ]
    );
    let log = get(&app, "/api/partner/v1/pay/webhook-requests").await.1;
    assert!(log["data"]
        .as_array()
        .unwrap()
        .iter()
        .all(|d| d["subscriptionUid"] == uid && d["status"] == "succeeded"));
    // A paid cycle is not cancelled by a cancel.
    let s = created(&app, monthly("bob@example.com")).await;
    let uid = s["uid"].as_str().unwrap();
    pay(
        &app,
        s["cycles"][0]["paymentLinkUid"].as_str().unwrap(),
        None,
    )
    .await;
    assert_eq!(patch(&app, uid, "cancelled").await.0, 200);
    let after = get(&app, &sub_path(uid)).await.1;
    assert_eq!(after["cycles"][0]["status"], "paid");
    let link = get(
        &app,
        &format!(
            "{LINKS}/{}",
            s["cycles"][0]["paymentLinkUid"].as_str().unwrap()
        ),
    )
    .await
    .1;
    assert_ne!(link["status"], "archived", "a paid invoice stays as it was");
}

async fn patch_input_is_strict(app: TestApp) {
    let s = created(&app, monthly("ann@example.com")).await;
    let uid = s["uid"].as_str().unwrap();
    for (body, code, field) in [
        (json!({}), "validation_failed", "status"),
        (json!({"status": "stopped"}), "validation_failed", "status"),
        (json!({"status": null}), "validation_failed", "status"),
        (
            json!({"status": "paused", "label": "x"}),
            "unknown_field",
            "label",
        ),
    ] {
        let got = read(
            app.req(Method::PATCH, &sub_path(uid))
                .json(&body)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_error(&got, 400, code, Some(field));
    }
    assert_eq!(get(&app, &sub_path(uid)).await.1["status"], "active");
}

async fn cycle_links_apply_the_advanced_settings(app: TestApp) {
    let mut body = monthly("ann@example.com");
    body["metadata"] = json!({
        "plan": "pro",
        "successRedirectUrl": "https://shop.example/thanks",
        "failureRedirectUrl": "https://shop.example/sorry",
        "underpaymentFixedEnabled": true,
        "underpaymentFixedThreshold": 1,
    });
    let s = created(&app, body).await;
    let link_uid = s["cycles"][0]["paymentLinkUid"].as_str().unwrap();
    let link = get(&app, &format!("{LINKS}/{link_uid}")).await.1;
    let m = &link["payload"]["metadata"];
    assert_eq!(m["successRedirectUrl"], "https://shop.example/thanks");
    assert_eq!(m["underpaymentFixedThreshold"], 1);
    assert!(m.get("plan").is_none(), "only the settings and the tags");
    let view = read(
        app.anon(Method::GET, &format!("/api/public/checkout/{link_uid}"))
            .send()
            .await
            .unwrap(),
    )
    .await
    .1;
    assert_eq!(view["successUrl"], "https://shop.example/thanks");
    assert_eq!(view["failureUrl"], "https://shop.example/sorry");
    assert_eq!(view["returnUrl"], Value::Null);
    // 0.50 short of 10: within the subscription's 1 USD tolerance, so the cycle is paid...
    let session = pay(&app, link_uid, Some("0.50")).await;
    assert_eq!(session["status"], "complete", "{session}");
    let after = get(&app, &sub_path(s["uid"].as_str().unwrap())).await.1;
    assert_eq!(after["cycles"][0]["status"], "paid");
    // ... while the company's own settings (no tolerance) leave a plain link underpaid.
    let plain = app
        .create_link(json!({"amount": "10", "fiatCurrency": "USD"}))
        .await;
    let session = pay(&app, plain["uid"].as_str().unwrap(), Some("0.50")).await;
    assert_eq!(session["status"], "underpaid", "{session}");
    // A plain link takes the same settings in its metadata, by the same rules.
    let bad = read(
        app.req(Method::POST, LINKS)
            .json(&json!({"amount": "10", "metadata": {"returnRedirectUrl": 5}}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(
        &bad,
        400,
        "validation_failed",
        Some("metadata.returnRedirectUrl"),
    );
}

async fn tenancy_credentials_and_scopes(app: TestApp) {
    let s = created(&app, monthly("ann@example.com")).await;
    let uid = s["uid"].as_str().unwrap().to_owned();
    // Another company: its list is empty; our uid is 404 to read and to move.
    let other = app.new_tenant("Other Co").await;
    let theirs = read(
        app.as_tenant(&other, Method::GET, SUBSCRIPTIONS)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(theirs.1["data"], json!([]));
    for (m, body) in [
        (Method::GET, None),
        (Method::PATCH, Some(json!({"status": "cancelled"}))),
    ] {
        let mut r = app.as_tenant(&other, m.clone(), &sub_path(&uid));
        if let Some(b) = &body {
            r = r.json(b);
        }
        assert_error(&read(r.send().await.unwrap()).await, 404, "not_found", None);
    }
    assert_error(
        &get(&app, &sub_path("sub_nope")).await,
        404,
        "not_found",
        None,
    );
    assert_error(
        &get(&app, &sub_path("sub_AAAAAAAAAAAAAAAAAAAAAAAA")).await,
        404,
        "not_found",
        None,
    );
    assert_eq!(get(&app, &sub_path(&uid)).await.1["status"], "active");
    // Credentials on every route.
    let routes = [
        (
            Method::POST,
            SUBSCRIPTIONS.to_owned(),
            Some(monthly("z@example.com")),
        ),
        (Method::GET, SUBSCRIPTIONS.to_owned(), None),
        (Method::GET, sub_path(&uid), None),
        (
            Method::PATCH,
            sub_path(&uid),
            Some(json!({"status": "paused"})),
        ),
    ];
    let send = |r: reqwest::RequestBuilder, body: &Option<Value>| match body {
        Some(b) => r.json(b).send(),
        None => r.send(),
    };
    for (m, path, body) in &routes {
        let got = read(send(app.anon(m.clone(), path), body).await.unwrap()).await;
        assert_eq!(
            (got.0.as_u16(), got.1["error"].as_str()),
            (401, Some("Unauthorized"))
        );
        let got = read(
            send(
                app.anon(m.clone(), path)
                    .header("x-svc-key-id", &app.t.key_id)
                    .header("x-svc-key-secret", "mksec_wrong"),
                body,
            )
            .await
            .unwrap(),
        )
        .await;
        assert_eq!(
            (got.0.as_u16(), got.1["error"].as_str()),
            (401, Some("Invalid pay API credentials")),
            "{m} {path}"
        );
    }
    // A member's session reads and may not write.
    let (email, password) = app.add_member(&app.t, "member").await;
    let member = app.login(&email, &password).await;
    for (m, path, body) in &routes {
        let got = read(
            send(app.in_session(&member, m.clone(), path), body)
                .await
                .unwrap(),
        )
        .await;
        if *m == Method::GET {
            assert_eq!(got.0, 200, "{m} {path}: {}", got.1);
        } else {
            assert_error(&got, 403, "forbidden", None);
        }
    }
    // OAuth: the read scope reads, the write scope writes; a customers scope is not enough.
    let reader = access_token(&app, "pay:subscriptions:read").await;
    let customers = access_token(&app, "pay:customers:read pay:customers:write").await;
    for (m, path, body) in &routes {
        let got = read(
            send(app.anon(m.clone(), path).bearer_auth(&customers), body)
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(
            (got.0.as_u16(), got.1["error"].as_str()),
            (401, Some("Invalid pay API credentials")),
            "{m} {path}"
        );
        let got = read(
            send(app.anon(m.clone(), path).bearer_auth(&reader), body)
                .await
                .unwrap(),
        )
        .await;
        if *m == Method::GET {
            // A grant sees the subscriptions it made: none of the key's.
            assert!(got.0 == 200 || got.0 == 404, "{m} {path}: {}", got.1);
        } else {
            assert_eq!(
                (got.0.as_u16(), got.1["error"].as_str()),
                (401, Some("Invalid pay API credentials")),
                "{m} {path}"
            );
        }
    }
    let writer = access_token(&app, "pay:subscriptions:read pay:subscriptions:write").await;
    let mine = read(
        app.anon(Method::POST, SUBSCRIPTIONS)
            .bearer_auth(&writer)
            .json(&monthly("grant@example.com"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(mine.0, 201, "{}", mine.1);
    let listed = read(
        app.anon(Method::GET, SUBSCRIPTIONS)
            .bearer_auth(&writer)
            .send()
            .await
            .unwrap(),
    )
    .await;
    let data = listed.1["data"].as_array().unwrap();
    assert_eq!(data.len(), 1, "the grant's own only");
    assert_eq!(data[0]["uid"], mine.1["uid"]);
    let got = read(
        app.anon(Method::GET, &sub_path(&uid))
            .bearer_auth(&writer)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 404, "not_found", None);
    // The key sees both.
    assert_eq!(
        get(&app, SUBSCRIPTIONS).await.1["data"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

on_both_backends!(
    create_issues_cycle_zero_as_an_ordinary_link,
    create_input_is_strict,
    merchant_moves_and_cancel,
    patch_input_is_strict,
    cycle_links_apply_the_advanced_settings,
    tenancy_credentials_and_scopes,
);

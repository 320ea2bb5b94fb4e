//! Money is never asked twice (docs/payments.md, "A payment under way"): while a session of a
//! link holds the payer's money unresolved (`processing`, `underpaid`), the Checkout API starts
//! no new session on that link (409 `payment_in_progress`) and the payer finishes the one they
//! have (its `settlement.shortBy` is what is still owed); a new session starts once the payment
//! completed, or the merchant resolved the underpayment (kept or refunded). A link that takes
//! one payment (an anonymous one-time link, a subscription cycle's invoice) refuses every start
//! once paid (409 `link_already_paid`).

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, read, TestApp};
use crate::on_both_backends;
use crate::subscriptions::{created, monthly};

const BASE_USDC: &str = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const ETH: &str = "eip155:1/slip44:60";

async fn start(app: &TestApp, uid: &str, asset: &str) -> (reqwest::StatusCode, Value) {
    read(
        app.anon(
            Method::POST,
            &format!("/api/public/checkout/{uid}/sessions"),
        )
        .json(&json!({ "payAsset": asset }))
        .send()
        .await
        .unwrap(),
    )
    .await
}

/// A started session of `uid` with its deposit channel open (the quote accepted).
async fn pending(app: &TestApp, uid: &str, asset: &str) -> Value {
    let s = app.start_session(uid, asset).await;
    if s["status"] != "quote" {
        return s;
    }
    let got = read(
        app.anon(
            Method::POST,
            &format!(
                "/api/public/checkout/{uid}/sessions/{}/accept",
                s["id"].as_str().unwrap()
            ),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(got.0, 200, "{}", got.1);
    got.1
}

/// A sandbox event on the link's latest session: `path` is the merchant's or the public
/// (anonymous links) route.
async fn event(app: &TestApp, uid: &str, body: Value, anonymous: bool) -> Value {
    let path = if anonymous {
        format!("/api/public/sandbox/payment-links/{uid}/events")
    } else {
        format!("/api/partner/v1/pay/sandbox/payment-links/{uid}/events")
    };
    let req = if anonymous {
        app.anon(Method::POST, &path)
    } else {
        app.req(Method::POST, &path)
    };
    let got = read(req.json(&body).send().await.unwrap()).await;
    assert_eq!(got.0, 200, "{}", got.1);
    got.1
}

async fn session(app: &TestApp, uid: &str, id: &str) -> Value {
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
    got.1
}

/// `a - b` of two decimal strings with at most six decimals (USDC amounts).
fn minus(a: &str, b: &str) -> String {
    let micro = |s: &str| -> i64 {
        let (w, f) = s.split_once('.').unwrap_or((s, ""));
        w.parse::<i64>().unwrap() * 1_000_000 + format!("{f:0<6}").parse::<i64>().unwrap()
    };
    let d = micro(a) - micro(b);
    format!("{}.{:06}", d / 1_000_000, d % 1_000_000)
}

async fn an_underpaid_payer_is_asked_only_for_the_rest(app: TestApp) {
    let link = app
        .create_link(json!({"amount": "25.00", "title": "Order 7"}))
        .await;
    let uid = link["uid"].as_str().unwrap();
    let s = pending(&app, uid, BASE_USDC).await;
    let id = s["id"].as_str().unwrap().to_owned();
    let required = s["requiredSellAmount"].as_str().unwrap().to_owned();
    let sent = minus(&required, "5");
    let after = event(&app, uid, json!({"type": "deposit", "amount": sent}), false).await;
    assert_eq!(after["status"], "underpaid", "{after}");

    // Reopening the link starts nothing at the full price again, whatever the asset.
    for asset in [BASE_USDC, ETH] {
        let again = start(&app, uid, asset).await;
        assert_error(&again, 409, "payment_in_progress", None);
        assert!(
            !again.1.to_string().contains(&id),
            "the refusal does not hand the session to whoever holds the link"
        );
    }
    // The payer's session says what is still owed.
    let now = session(&app, uid, &id).await;
    assert_eq!(now["status"], "underpaid");
    assert_eq!(
        now["settlement"]["shortBy"].as_str().map(|v| minus(v, "0")),
        Some("5.000000".to_owned()),
        "{now}"
    );
    // The hosted page: the browser that paid (its cookie names the session) is taken to its
    // payment; any other browser is told a payment is under way, shown nothing of it, and its
    // start form is refused.
    let page = format!("/pay/{uid}");
    let res = app
        .anon(Method::GET, &page)
        .header("cookie", format!("pay_payment={id}"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 303);
    assert_eq!(res.headers()["location"], format!("{page}?session={id}"));
    let res = app.anon(Method::GET, &page).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let html = res.text().await.unwrap();
    assert!(
        html.contains("A payment through this link is under way"),
        "{html}"
    );
    assert!(!html.contains(&id) && !html.contains("<form"));
    let res = app
        .anon(Method::POST, &format!("{page}/start"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!(
            "payAsset={}",
            BASE_USDC.replace(':', "%3A").replace('/', "%2F")
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 409);
    assert!(!res.text().await.unwrap().contains(&id));
    // The session's page sets the cookie for the browser that holds it.
    let res = app
        .anon(Method::GET, &format!("{page}?session={id}"))
        .send()
        .await
        .unwrap();
    let cookie = res.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(
        cookie.starts_with(&format!("pay_payment={id};")),
        "{cookie}"
    );
    assert!(cookie.contains("HttpOnly") && cookie.contains(&format!("Path={page}")));

    // The rest arrives on the same session: complete; a new payment may start again.
    let done = event(&app, uid, json!({"type": "deposit", "amount": "5"}), false).await;
    assert_eq!(done["status"], "complete", "{done}");
    assert_eq!(done["id"], id.as_str());
    assert_eq!(start(&app, uid, BASE_USDC).await.0, 201);

    // A deposit being confirmed holds the link too.
    let held = app.create_link(json!({"amount": "10.00"})).await;
    let held = held["uid"].as_str().unwrap();
    let s = pending(&app, held, BASE_USDC).await;
    let all = s["requiredSellAmount"].as_str().unwrap().to_owned();
    let seen = event(
        &app,
        held,
        json!({"type": "deposit", "amount": all, "hold": true}),
        false,
    )
    .await;
    assert_eq!(seen["status"], "processing");
    assert_error(
        &start(&app, held, BASE_USDC).await,
        409,
        "payment_in_progress",
        None,
    );

    // The merchant's resolution frees the link: refunded, or kept.
    for action in ["refund", "complete"] {
        let l = app.create_link(json!({"amount": "20.00"})).await;
        let l = l["uid"].as_str().unwrap();
        let s = pending(&app, l, BASE_USDC).await;
        let short = minus(s["requiredSellAmount"].as_str().unwrap(), "1");
        event(&app, l, json!({"type": "deposit", "amount": short}), false).await;
        assert_error(
            &start(&app, l, BASE_USDC).await,
            409,
            "payment_in_progress",
            None,
        );
        let resolved = read(
            app.req(
                Method::POST,
                &format!("/api/partner/v1/pay/payment-links/{l}/manual-resolution"),
            )
            .json(&json!({ "action": action }))
            .send()
            .await
            .unwrap(),
        )
        .await;
        assert_eq!(resolved.0, 200, "{}", resolved.1);
        assert_eq!(start(&app, l, BASE_USDC).await.0, 201, "after {action}");
    }
}

/// A new anonymous one-time link of 0.05 ETH: its uid.
async fn one_time_link(app: &TestApp) -> String {
    let got = read(
        app.anon(Method::POST, "/api/public/anonymous-payment-links")
            .json(&json!({
                "amount": "0.05",
                "title": "Tip jar",
                "settlement": {"priorities": [
                    {"asset": ETH, "address": "0x52908400098527886E0F7030069857D2E4169EE7"}
                ]}
            }))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 201, "{}", got.1);
    got.1["uid"].as_str().unwrap().to_owned()
}

async fn a_link_that_takes_one_payment_refuses_starts_once_paid(app: TestApp) {
    // An anonymous one-time link, paid.
    let anon = one_time_link(&app).await;
    let s = pending(&app, &anon, ETH).await;
    let all = s["requiredSellAmount"].as_str().unwrap().to_owned();
    let done = event(&app, &anon, json!({"type": "deposit", "amount": all}), true).await;
    assert_eq!(done["status"], "complete", "{done}");
    assert_error(
        &start(&app, &anon, ETH).await,
        409,
        "link_already_paid",
        None,
    );

    // One underpaid before anyone paid it: the same rule as any link.
    let anon2 = one_time_link(&app).await;
    // The link asks 0.05 ETH (plus the fee): a hundredth of an ETH falls short.
    pending(&app, &anon2, ETH).await;
    let short = event(
        &app,
        &anon2,
        json!({"type": "deposit", "amount": "0.01"}),
        true,
    )
    .await;
    assert_eq!(short["status"], "underpaid", "{short}");
    assert_error(
        &start(&app, &anon2, ETH).await,
        409,
        "payment_in_progress",
        None,
    );

    // A subscription cycle's invoice, paid: its link takes no second payment.
    let sub = created(&app, monthly("ann@example.com")).await;
    let invoice = sub["cycles"][0]["paymentLinkUid"]
        .as_str()
        .unwrap()
        .to_owned();
    let s = pending(&app, &invoice, BASE_USDC).await;
    let all = s["requiredSellAmount"].as_str().unwrap().to_owned();
    let paid = event(
        &app,
        &invoice,
        json!({"type": "deposit", "amount": all}),
        false,
    )
    .await;
    assert_eq!(paid["status"], "complete", "{paid}");
    assert_error(
        &start(&app, &invoice, BASE_USDC).await,
        409,
        "link_already_paid",
        None,
    );
}

on_both_backends!(
    an_underpaid_payer_is_asked_only_for_the_rest,
    a_link_that_takes_one_payment_refuses_starts_once_paid,
);

//! The payer's refund address through the public Checkout API: an address of the chain paid
//! on, given once (the first accepted one wins; later ones are 409 and emit nothing), also
//! when several arrive at the same moment.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, read, TestApp};
use crate::on_both_backends;
use crate::webhooks::{set_callback, Receiver};

const BASE_USDC: &str = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const BTC: &str = "bip122:000000000019d6689c085ae165831e93/slip44:0";
/// EIP-55's checksummed examples: the payer's address and someone else's.
const PAYER: &str = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";
const ATTACKER: &str = "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359";

/// A link's session paid far short with `asset` (0.000001 of it), whose refund the merchant
/// decided: its id.
async fn refund_pending(app: &TestApp, uid: &str, asset: &str) -> String {
    let id = app.start_session(uid, asset).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let under = read(
        app.req(
            Method::POST,
            &format!("/api/partner/v1/pay/sandbox/payment-links/{uid}/events"),
        )
        .json(&json!({"type": "deposit", "amount": "0.000001"}))
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(under.1["status"], "underpaid", "{}", under.1);
    let refund = read(
        app.req(
            Method::POST,
            &format!("/api/partner/v1/pay/payment-links/{uid}/manual-resolution"),
        )
        .json(&json!({"action": "refund"}))
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(refund.1["status"], "refund_pending", "{}", refund.1);
    id
}

async fn submit(app: &TestApp, uid: &str, id: &str, address: &str) -> (reqwest::StatusCode, Value) {
    read(
        app.anon(
            Method::POST,
            &format!("/api/public/checkout/{uid}/sessions/{id}/refund-address"),
        )
        .json(&json!({ "address": address }))
        .send()
        .await
        .unwrap(),
    )
    .await
}

async fn new_link(app: &TestApp) -> String {
    let l = app
        .create_link(json!({"amount": "10", "skipQuoteAcceptance": true}))
        .await;
    l["uid"].as_str().unwrap().to_owned()
}

/// The link's timeline entries of `kind`.
async fn timeline_count(app: &TestApp, uid: &str, kind: &str) -> usize {
    let (_, d) = read(
        app.req(
            Method::GET,
            &format!("/api/partner/v1/pay/payment-links/{uid}"),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    d["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == kind)
        .count()
}

async fn the_first_refund_address_wins(app: TestApp) {
    let rx = Receiver::start();
    let owner = app.login_owner(&app.t).await;
    set_callback(&app, &owner, &rx.url).await;
    let uid = new_link(&app).await;
    let id = refund_pending(&app, &uid, BASE_USDC).await;
    let (status, r) = submit(&app, &uid, &id, PAYER).await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["settlement"]["refundAddress"], PAYER);
    // Whoever else holds the page URL cannot replace it; a repeat of the same one is no
    // different.
    for again in [ATTACKER, PAYER] {
        let got = submit(&app, &uid, &id, again).await;
        assert_error(&got, 409, "refund_address_already_set", None);
        assert_eq!(
            got.1["error"],
            "a refund address was already given for this payment; it cannot be changed"
        );
    }
    let (_, s) = read(
        app.anon(
            Method::GET,
            &format!("/api/public/checkout/{uid}/sessions/{id}"),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(s["settlement"]["refundAddress"], PAYER);
    // One event, on the timeline and to the merchant.
    assert_eq!(
        timeline_count(&app, &uid, "refund_address_received").await,
        1
    );
    app.dispatcher.drain().await.unwrap();
    let received: Vec<Value> = rx
        .received()
        .iter()
        .map(|r| serde_json::from_str(&r.body).unwrap())
        .filter(|b: &Value| b["event"]["type"] == "refund_address_received")
        .collect();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0]["session"]["settlement"]["refundAddress"], PAYER);
}

async fn a_malformed_refund_address_is_refused_naming_the_chain(app: TestApp) {
    let uid = new_link(&app).await;
    let id = refund_pending(&app, &uid, BASE_USDC).await;
    for bad in [
        "0xabc123",
        // One letter's case changed: the EIP-55 checksum fails.
        "0x5aaeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
        "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4",
        "0x0000000000000000000000000000000000000000",
        "bad address!",
    ] {
        let got = submit(&app, &uid, &id, bad).await;
        assert_error(&got, 400, "validation_failed", Some("address"));
        let m = got.1["error"].as_str().unwrap();
        assert!(
            m.starts_with("address must be an address on Base ("),
            "{bad}: {m}"
        );
    }
    assert_eq!(
        timeline_count(&app, &uid, "refund_address_received").await,
        0
    );
    // Refused ones did not use up the one submission.
    assert_eq!(submit(&app, &uid, &id, PAYER).await.0, 200);

    // Paid in BTC: a Bitcoin address, checksum verified.
    let uid = new_link(&app).await;
    let id = refund_pending(&app, &uid, BTC).await;
    for bad in [PAYER, "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5"] {
        let got = submit(&app, &uid, &id, bad).await;
        assert_error(&got, 400, "validation_failed", Some("address"));
        let m = got.1["error"].as_str().unwrap();
        assert!(
            m.starts_with("address must be an address on Bitcoin ("),
            "{bad}: {m}"
        );
    }
    let (status, r) = submit(
        &app,
        &uid,
        &id,
        "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4",
    )
    .await;
    assert_eq!(status, 200, "{r}");
}

async fn of_concurrent_refund_addresses_exactly_one_is_kept(app: TestApp) {
    let uid = new_link(&app).await;
    let id = refund_pending(&app, &uid, BASE_USDC).await;
    let candidates: Vec<String> = (1..=10u8)
        .map(|i| format!("0x{}", format!("{i:02x}").repeat(20)))
        .collect();
    let answers =
        futures_util::future::join_all(candidates.iter().map(|a| submit(&app, &uid, &id, a))).await;
    let ok: Vec<&Value> = answers
        .iter()
        .filter(|(s, _)| *s == 200)
        .map(|(_, b)| b)
        .collect();
    assert_eq!(ok.len(), 1, "{answers:?}");
    for got in answers.iter().filter(|(s, _)| *s != 200) {
        assert_error(got, 409, "refund_address_already_set", None);
    }
    assert_eq!(
        timeline_count(&app, &uid, "refund_address_received").await,
        1
    );
    let (_, s) = read(
        app.anon(
            Method::GET,
            &format!("/api/public/checkout/{uid}/sessions/{id}"),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(
        s["settlement"]["refundAddress"],
        ok[0]["settlement"]["refundAddress"]
    );
}

on_both_backends!(
    the_first_refund_address_wins,
    a_malformed_refund_address_is_refused_naming_the_chain,
    of_concurrent_refund_addresses_exactly_one_is_kept,
);

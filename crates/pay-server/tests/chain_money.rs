//! The chain processor's money after the payment: a transfer after the payment request expired
//! (a late payment). The real binary against anvil (from npm); payments sent by viem.

use pay_chain::testing::Anvil;
use serde_json::{json, Value};

#[path = "support/process.rs"]
mod process;

#[path = "support/chain.rs"]
mod chain;

use chain::*;
use process::*;

/// The `pay.payment.*` webhooks of `session` delivered so far, by type.
fn webhook_types(
    deliveries: &std::sync::mpsc::Receiver<(String, String)>,
    seen: &mut Vec<String>,
    session: &str,
) {
    for (_, body) in deliveries.try_iter() {
        let v: Value = serde_json::from_str(&body).unwrap_or_default();
        if body.contains(session) {
            seen.push(v["type"].as_str().unwrap_or_default().to_owned());
        }
    }
}

#[test]
fn a_transfer_after_the_payment_request_expired_is_a_late_payment_once_final() {
    for db in databases() {
        late_payment(&db.url);
    }
}

fn late_payment(db_url: &str) {
    let Some(anvil) = Anvil::start(&[]) else {
        return;
    };
    let dir = TempDir::new();
    let shop = Shop::open(&anvil, &dir, db_url);
    let (hook, deliveries) = receiver();
    shop.callback(&hook);
    shop.wallet(&anvil, 6);
    let token = shop.token_id();
    let pay = |address: &str, units: &str| {
        anvil.tool(
            "sendToken",
            json!({"token": shop.token, "to": address, "units": units, "wait": true}),
        );
    };

    // The payer never paid in the deposit window: the request expires.
    let (link, id, address) = shop.pending("10", &token);
    expire_session(db_url, &id);
    shop.wait_status(&link, &id, "expired");
    let mut types = Vec::new();
    let expired = wait_until(std::time::Duration::from_secs(10), || {
        webhook_types(&deliveries, &mut types, &id);
        types
            .iter()
            .any(|t| t == "pay.payment.payment_request_expired")
    });
    assert!(expired, "{types:?}");

    // A transfer reorged away before its confirmations leaves nothing behind.
    let snap = anvil.snapshot();
    pay(&address, "3000000");
    std::thread::sleep(std::time::Duration::from_millis(600));
    anvil.revert(&snap);
    anvil.mine(3);
    std::thread::sleep(std::time::Duration::from_millis(600));
    let s = shop.session(&link, &id);
    assert!(s["settlement"]["lateAmount"].is_null(), "{s}");

    // Then the payer pays: seen in its block, the session waits for the confirmations (no
    // late payment that a reorg could take back) and stays expired.
    pay(&address, "10000000");
    std::thread::sleep(std::time::Duration::from_millis(600));
    let s = shop.session(&link, &id);
    assert_eq!(s["status"], "expired", "{s}");
    assert!(
        s["settlement"]["lateAmount"].is_null(),
        "not final yet: {s}"
    );
    // Final: a late payment, the status unchanged, a settlement_updated webhook.
    anvil.mine(1);
    let mut last = Value::Null;
    let late = wait_until(std::time::Duration::from_secs(10), || {
        last = shop.session(&link, &id);
        last["settlement"]["late"] == true
    });
    assert!(late, "{last}\n{}", shop.server.log());
    assert_eq!(last["status"], "expired", "{last}");
    assert_eq!(last["settlement"]["lateAmount"], "10", "{last}");
    assert!(last["settlement"]["receivedAmount"].is_null(), "{last}");
    let updated = wait_until(std::time::Duration::from_secs(10), || {
        webhook_types(&deliveries, &mut types, &id);
        types.iter().any(|t| t == "pay.payment.settlement_updated")
    });
    assert!(updated, "{types:?}");

    // The address stays watched: a second late transfer adds up, counted once.
    pay(&address, "2500000");
    anvil.mine(3);
    let added = wait_until(std::time::Duration::from_secs(10), || {
        shop.session(&link, &id)["settlement"]["lateAmount"] == "12.5"
    });
    assert!(added, "{}", shop.session(&link, &id));
    std::thread::sleep(std::time::Duration::from_millis(500));
    let s = shop.session(&link, &id);
    assert_eq!(
        (s["status"].as_str(), s["settlement"]["lateAmount"].as_str()),
        (Some("expired"), Some("12.5")),
        "{s}"
    );
    webhook_types(&deliveries, &mut types, &id);
    assert_eq!(
        types
            .iter()
            .filter(|t| *t == "pay.payment.settlement_updated")
            .count(),
        2,
        "one per late transfer: {types:?}"
    );
    let log = shop.server.stop().1;
    assert!(!log.contains("chain watcher round failed"), "{log}");
}

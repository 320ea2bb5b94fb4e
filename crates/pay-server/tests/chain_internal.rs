//! Native coin sent by a contract (an internal transfer, as exchanges and smart wallets pay):
//! no transaction to the deposit address and no log shows it, only its balance. It pays an
//! open session, is a late payment for one that ended (while its address is still watched),
//! and is the company's incoming wallet activity either way, each counted once. The real
//! binary against anvil (from npm); the coin forwarded by the committed `TestForwarder`, sent
//! by viem.

use pay_chain::testing::Anvil;
use serde_json::{json, Value};

#[path = "support/process.rs"]
mod process;

#[path = "support/chain.rs"]
mod chain;

use chain::*;
use process::*;

#[test]
fn native_coin_forwarded_by_a_contract_pays_its_session_exactly_once() {
    for db in databases() {
        internal_transfers(&db.url);
    }
}

fn internal_transfers(db_url: &str) {
    let Some(anvil) = Anvil::start(&[]) else {
        return;
    };
    let dir = TempDir::new();
    let shop = Shop::open(&anvil, &dir, db_url);
    let (hook, deliveries) = receiver();
    shop.callback(&hook);
    shop.wallet(&anvil, 8);
    let forwarder = anvil.tool("deploy", json!({}))["forwarder"]
        .as_str()
        .unwrap()
        .to_owned();
    let eth = "eip155:31337/slip44:60";
    let forward = |to: &str, wei: &str, wait: bool| {
        anvil.tool(
            "forwardEth",
            json!({"forwarder": forwarder, "to": to, "value": wei, "wait": wait}),
        )["txHash"]
            .as_str()
            .unwrap()
            .to_ascii_lowercase()
    };

    // Paid through a contract: no transaction to the address, only its balance grew.
    let (link, id, address) = shop.pending("0.5", eth);
    let first = forward(&address, "500000000000000000", true);
    anvil.mine(1);
    let s = shop.wait_status(&link, &id, "complete");
    assert_eq!(s["settlement"]["receivedAmount"], "0.5", "{s}");

    // A direct transfer and a forwarded one in one block: each counted once (the direct one
    // explains its part of the balance).
    let (link2, id2, address2) = shop.pending("0.5", eth);
    anvil.automine(false);
    let direct = anvil.tool(
        "sendEth",
        json!({"to": address2, "value": "300000000000000000"}),
    )["txHash"]
        .as_str()
        .unwrap()
        .to_ascii_lowercase();
    let second = forward(&address2, "200000000000000000", false);
    anvil.mine(1);
    anvil.automine(true);
    anvil.mine(1);
    let s = shop.wait_status(&link2, &id2, "complete");
    assert_eq!(s["settlement"]["receivedAmount"], "0.5", "{s}");

    // Two forwarded parts in two blocks read in one round: they add up, once each.
    let (link3, id3, address3) = shop.pending("1", eth);
    anvil.automine(false);
    let third = forward(&address3, "400000000000000000", false);
    anvil.mine(1);
    let fourth = forward(&address3, "600000000000000000", false);
    anvil.mine(2);
    anvil.automine(true);
    let s = shop.wait_status(&link3, &id3, "complete");
    assert_eq!(s["settlement"]["receivedAmount"], "1", "{s}");

    // Each transaction that carried coin in is the company's incoming activity: the forwarded
    // ones found in the call traces, from the forwarder, with the session they paid.
    let native = |tx: &str| format!("eip155:31337:{tx}:native");
    let expected = [
        (
            native(&first),
            "0.5",
            &address,
            &id,
            forwarder.to_ascii_lowercase(),
        ),
        (
            native(&direct),
            "0.3",
            &address2,
            &id2,
            PAYER.to_ascii_lowercase(),
        ),
        (
            native(&second),
            "0.2",
            &address2,
            &id2,
            forwarder.to_ascii_lowercase(),
        ),
        (
            native(&third),
            "0.4",
            &address3,
            &id3,
            forwarder.to_ascii_lowercase(),
        ),
        (
            native(&fourth),
            "0.6",
            &address3,
            &id3,
            forwarder.to_ascii_lowercase(),
        ),
    ];
    let mut list = Vec::new();
    let all = wait_until(std::time::Duration::from_secs(30), || {
        list = shop.activity();
        expected
            .iter()
            .all(|e| list.iter().any(|a| a["key"] == e.0))
    });
    assert!(all, "{list:#?}\n{}", shop.server.log());
    assert_eq!(list.len(), expected.len(), "{list:#?}");
    for (key, amount, wallet, session, from) in &expected {
        let a = one(&list, key);
        assert_eq!(
            (
                a["direction"].as_str(),
                a["amount"].as_str(),
                a["asset"].as_str(),
                a["walletAddress"].as_str(),
                a["counterpartyAddress"].as_str(),
                a["paymentSessionId"].as_str()
            ),
            (
                Some("incoming"),
                Some(*amount),
                Some(eth),
                Some(wallet.as_str()),
                Some(from.as_str()),
                Some(session.as_str())
            ),
            "{a}"
        );
    }

    // A restart reads on: nothing counted twice, one settlement webhook each.
    let chains = chains_file(
        &anvil.url,
        pay_chain::testing::ANVIL_CHAIN_ID,
        Some(&shop.token),
        Some(&shop.feed),
    );
    let Shop {
        server,
        key,
        company,
        token,
        feed,
    } = shop;
    server.stop();
    let shop = Shop {
        server: Server::spawn(command(&dir, db_url, &chains)),
        key,
        company,
        token,
        feed,
    };
    anvil.mine(3);
    std::thread::sleep(std::time::Duration::from_secs(1));
    assert_eq!(shop.activity().len(), expected.len(), "recorded once");
    let bodies: Vec<String> = deliveries.try_iter().map(|(_, body)| body).collect();
    for (link, id, amount) in [
        (&link, &id, "0.5"),
        (&link2, &id2, "0.5"),
        (&link3, &id3, "1"),
    ] {
        let s = shop.session(link, id);
        assert_eq!(
            (
                s["status"].as_str(),
                s["settlement"]["receivedAmount"].as_str()
            ),
            (Some("complete"), Some(amount)),
            "{s}"
        );
        let settled = bodies
            .iter()
            .filter(|b| {
                let v: Value = serde_json::from_str(b).unwrap_or_default();
                v["type"] == "pay.payment.settlement_updated" && b.contains(id.as_str())
            })
            .count();
        assert_eq!(settled, 1, "{id}");
    }
    let log = shop.server.stop().1;
    assert!(!log.contains("chain watcher round failed"), "{log}");
}

#[test]
fn coin_a_contract_sends_after_the_session_ended_is_a_late_payment_and_activity_once() {
    for db in databases() {
        late_internal_transfers(&db.url);
    }
}

fn late_internal_transfers(db_url: &str) {
    let Some(anvil) = Anvil::start(&[]) else {
        return;
    };
    let dir = TempDir::new();
    let shop = Shop::open(&anvil, &dir, db_url);
    let (hook, deliveries) = receiver();
    shop.callback(&hook);
    shop.wallet(&anvil, 8);
    let forwarder = anvil.tool("deploy", json!({}))["forwarder"]
        .as_str()
        .unwrap()
        .to_owned();
    let eth = "eip155:31337/slip44:60";
    let tx = |v: Value| v["txHash"].as_str().unwrap().to_ascii_lowercase();
    let forward = |to: &str, wei: &str, wait: bool| {
        tx(anvil.tool(
            "forwardEth",
            json!({"forwarder": forwarder, "to": to, "value": wei, "wait": wait}),
        ))
    };

    // The payer never paid in the deposit window: the request expires.
    let (link, id, address) = shop.pending("0.5", eth);
    expire_session(db_url, &id);
    shop.wait_status(&link, &id, "expired");
    let mut types = Vec::new();
    let expired = wait_until(std::time::Duration::from_secs(30), || {
        webhook_types(&deliveries, &mut types, &id);
        types
            .iter()
            .any(|t| t == "pay.payment.payment_request_expired")
    });
    assert!(expired, "{types:?}");

    // Then it pays, late, in one block: a direct transfer and coin forwarded by a contract.
    // Each is a late payment once final, and the balance counts the direct one only once.
    anvil.automine(false);
    let direct = tx(anvil.tool(
        "sendEth",
        json!({"to": address, "value": "300000000000000000"}),
    ));
    let forwarded = forward(&address, "200000000000000000", false);
    anvil.mine(1);
    anvil.automine(true);
    anvil.mine(1);
    let mut last = Value::Null;
    let late = wait_until(std::time::Duration::from_secs(30), || {
        last = shop.session(&link, &id);
        last["settlement"]["lateAmount"] == "0.5"
    });
    assert!(late, "{last}\n{}", shop.server.log());
    assert_eq!(last["status"], "expired", "{last}");
    assert_eq!(last["settlement"]["late"], true, "{last}");
    assert!(last["settlement"]["receivedAmount"].is_null(), "{last}");

    // A complete session whose address a contract pays again: the session stays as it was
    // (only an ended request takes a late payment), the coin is the wallet's activity.
    let (link2, id2, address2) = shop.pending("0.5", eth);
    let paid = tx(anvil.tool(
        "sendEth",
        json!({"to": address2, "value": "500000000000000000", "wait": true}),
    ));
    anvil.mine(1);
    shop.wait_status(&link2, &id2, "complete");
    let extra = forward(&address2, "100000000000000000", true);
    anvil.mine(1);

    let native = |tx: &str| format!("eip155:31337:{tx}:native");
    let fwd = forwarder.to_ascii_lowercase();
    let payer = PAYER.to_ascii_lowercase();
    let expected = [
        (native(&direct), "0.3", &address, &id, &payer),
        (native(&forwarded), "0.2", &address, &id, &fwd),
        (native(&paid), "0.5", &address2, &id2, &payer),
        (native(&extra), "0.1", &address2, &id2, &fwd),
    ];
    let mut list = Vec::new();
    let all = wait_until(std::time::Duration::from_secs(30), || {
        list = shop.activity();
        expected
            .iter()
            .all(|e| list.iter().any(|a| a["key"] == e.0))
    });
    assert!(all, "{list:#?}\n{}", shop.server.log());
    let check = |list: &[Value]| {
        assert_eq!(list.len(), expected.len(), "{list:#?}");
        for (key, amount, wallet, session, from) in &expected {
            let a = one(list, key);
            assert_eq!(
                (
                    a["direction"].as_str(),
                    a["amount"].as_str(),
                    a["asset"].as_str(),
                    a["walletAddress"].as_str(),
                    a["counterpartyAddress"].as_str(),
                    a["paymentSessionId"].as_str()
                ),
                (
                    Some("incoming"),
                    Some(*amount),
                    Some(eth),
                    Some(wallet.as_str()),
                    Some(from.as_str()),
                    Some(session.as_str())
                ),
                "{a}"
            );
        }
    };
    check(&list);

    // A restart reads on: nothing counted twice.
    let chains = chains_file(
        &anvil.url,
        pay_chain::testing::ANVIL_CHAIN_ID,
        Some(&shop.token),
        Some(&shop.feed),
    );
    let Shop {
        server,
        key,
        company,
        token,
        feed,
    } = shop;
    let first_log = server.stop().1;
    let shop = Shop {
        server: Server::spawn(command(&dir, db_url, &chains)),
        key,
        company,
        token,
        feed,
    };
    anvil.mine(3);
    std::thread::sleep(std::time::Duration::from_secs(1));
    check(&shop.activity());
    let s = shop.session(&link, &id);
    assert_eq!(
        (s["status"].as_str(), s["settlement"]["lateAmount"].as_str()),
        (Some("expired"), Some("0.5")),
        "{s}"
    );
    let s = shop.session(&link2, &id2);
    assert_eq!(
        (
            s["status"].as_str(),
            s["settlement"]["receivedAmount"].as_str()
        ),
        (Some("complete"), Some("0.5")),
        "{s}"
    );
    assert!(s["settlement"]["lateAmount"].is_null(), "{s}");
    // One settlement_updated per late payment.
    let updated = |types: &[String]| {
        types
            .iter()
            .filter(|t| *t == "pay.payment.settlement_updated")
            .count()
    };
    wait_until(std::time::Duration::from_secs(30), || {
        webhook_types(&deliveries, &mut types, &id);
        updated(&types) >= 2
    });
    assert_eq!(updated(&types), 2, "{types:?}");
    let log = first_log + &shop.server.stop().1;
    assert!(!log.contains("chain watcher round failed"), "{log}");
}

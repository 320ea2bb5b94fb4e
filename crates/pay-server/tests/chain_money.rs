//! The chain processor's money beyond the plain payment: a transfer after the payment request
//! expired (a late payment), the wallet activity of the transfers into and out of the
//! merchant's derived addresses (sweeps); native coin forwarded by a contract is in
//! `chain_internal.rs`. The real binary against anvil (from npm); payments and sweeps sent by
//! viem.

use pay_chain::testing::Anvil;
use serde_json::{json, Value};

#[path = "support/process.rs"]
mod process;

#[path = "support/chain.rs"]
mod chain;

use chain::*;
use process::*;

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
    let expired = wait_until(std::time::Duration::from_secs(30), || {
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
    let late = wait_until(std::time::Duration::from_secs(30), || {
        last = shop.session(&link, &id);
        last["settlement"]["late"] == true
    });
    assert!(late, "{last}\n{}", shop.server.log());
    assert_eq!(last["status"], "expired", "{last}");
    assert_eq!(last["settlement"]["lateAmount"], "10", "{last}");
    assert!(last["settlement"]["receivedAmount"].is_null(), "{last}");
    let updated = wait_until(std::time::Duration::from_secs(30), || {
        webhook_types(&deliveries, &mut types, &id);
        types.iter().any(|t| t == "pay.payment.settlement_updated")
    });
    assert!(updated, "{types:?}");

    // The address stays watched: a second late transfer adds up, counted once.
    pay(&address, "2500000");
    anvil.mine(3);
    let added = wait_until(std::time::Duration::from_secs(30), || {
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

/// Anvil's tenth development account: the merchant's main wallet that sweeps go to.
const MAIN_WALLET: &str = "0xa0Ee7A142d267C1f36714E4a8F75612F20a79720";
#[test]
fn payments_and_sweeps_of_the_derived_addresses_are_the_companys_wallet_activity_once() {
    for db in databases() {
        wallet_activity(&db.url);
    }
}

fn wallet_activity(db_url: &str) {
    let Some(anvil) = Anvil::start(&[]) else {
        return;
    };
    let dir = TempDir::new();
    let shop = Shop::open(&anvil, &dir, db_url);
    // The merchant's key: account 7 of the development mnemonic, whose children viem signs
    // with to sweep.
    shop.wallet(&anvil, 7);
    let token = shop.token_id();
    let eth = "eip155:31337/slip44:60";
    let chain_id = pay_chain::testing::ANVIL_CHAIN_ID;
    let key = |tx: &Value, index: &str| {
        format!(
            "eip155:{chain_id}:{}:{index}",
            tx["txHash"].as_str().unwrap().to_ascii_lowercase()
        )
    };

    // A token payment and a coin payment, each complete.
    let (link, id, token_address) = shop.pending("25", &token);
    let paid = anvil.tool(
        "sendToken",
        json!({"token": shop.token, "to": token_address, "units": "25000000", "wait": true}),
    );
    let (eth_link, eth_id, eth_address) = shop.pending("0.5", eth);
    let paid_eth = anvil.tool(
        "sendEth",
        json!({"to": eth_address, "value": "500000000000000000", "wait": true}),
    );
    anvil.mine(1);
    shop.wait_status(&link, &id, "complete");
    shop.wait_status(&eth_link, &eth_id, "complete");
    // Before a transfer has its confirmations it is no activity: a reorg could take it back.
    let gas = anvil.tool(
        "sendEth",
        json!({"to": token_address, "value": "10000000000000000", "wait": true}),
    );
    std::thread::sleep(std::time::Duration::from_millis(600));
    assert!(
        shop.activity()
            .iter()
            .all(|a| a["key"] != key(&gas, "native")),
        "{:#?}",
        shop.activity()
    );

    // The merchant sweeps both addresses to the main wallet with the addresses' own keys
    // (children 0/0 and 0/1 of account 7).
    let swept = anvil.tool(
        "sendToken",
        json!({"token": shop.token, "to": MAIN_WALLET, "units": "25000000",
               "account": 7, "from": 0, "wait": true}),
    );
    let swept_eth = anvil.tool(
        "sendEth",
        json!({"to": MAIN_WALLET, "value": "400000000000000000",
               "account": 7, "from": 1, "wait": true}),
    );
    anvil.mine(2);

    let expected = [
        key(&paid, "0"),
        key(&paid_eth, "native"),
        key(&gas, "native"),
        key(&swept, "0"),
        key(&swept_eth, "native"),
    ];
    let mut list = Vec::new();
    let all = wait_until(std::time::Duration::from_secs(30), || {
        list = shop.activity();
        expected.iter().all(|k| list.iter().any(|a| a["key"] == *k))
    });
    assert!(all, "{list:#?}\n{}", shop.server.log());
    assert_eq!(list.len(), 5, "{list:#?}");
    let a = one(&list, &expected[0]);
    assert_eq!(
        (
            a["direction"].as_str(),
            a["amount"].as_str(),
            a["asset"].as_str(),
            a["walletAddress"].as_str(),
            a["counterpartyAddress"].as_str(),
            a["paymentSessionId"].as_str(),
            a["logIndex"].as_u64()
        ),
        (
            Some("incoming"),
            Some("25"),
            Some(token.as_str()),
            Some(token_address.as_str()),
            Some(PAYER.to_ascii_lowercase().as_str()),
            Some(id.as_str()),
            Some(0)
        ),
        "{a}"
    );
    let a = one(&list, &expected[1]);
    assert_eq!(
        (
            a["direction"].as_str(),
            a["amount"].as_str(),
            a["asset"].as_str(),
            a["walletAddress"].as_str(),
            a["paymentSessionId"].as_str()
        ),
        (
            Some("incoming"),
            Some("0.5"),
            Some(eth),
            Some(eth_address.as_str()),
            Some(eth_id.as_str())
        ),
        "{a}"
    );
    assert!(a["logIndex"].is_null(), "{a}");
    // The gas money is the wallet's too, no payment of a session.
    let a = one(&list, &expected[2]);
    assert_eq!(
        (
            a["direction"].as_str(),
            a["amount"].as_str(),
            a["asset"].as_str()
        ),
        (Some("incoming"), Some("0.01"), Some(eth)),
        "{a}"
    );
    assert!(a["paymentSessionId"].is_null(), "{a}");
    for (k, asset, amount, from) in [
        (&expected[3], token.as_str(), "25", &token_address),
        (&expected[4], eth, "0.4", &eth_address),
    ] {
        let a = one(&list, k);
        assert_eq!(
            (
                a["direction"].as_str(),
                a["amount"].as_str(),
                a["asset"].as_str(),
                a["walletAddress"].as_str(),
                a["counterpartyAddress"].as_str(),
                a["hasExpense"].as_bool()
            ),
            (
                Some("outgoing"),
                Some(amount),
                Some(asset),
                Some(from.as_str()),
                Some(MAIN_WALLET.to_ascii_lowercase().as_str()),
                Some(false)
            ),
            "{a}"
        );
        assert!(a["paymentSessionId"].is_null(), "{a}");
    }

    // An expense explains the token sweep (by its key).
    let (status, e) = shop.api(
        "POST",
        "/bookkeeping/expenses/from-activity",
        Some(json!({"walletActivityEventKey": expected[3],
                    "counterparty": {"newVendor": {"email": "treasury@chain.example"}},
                    "category": "transfer", "description": "Sweep to the main wallet"})),
    );
    assert_eq!(status, 201, "{e}");

    // A restart and a second instance read on: each movement stays recorded once.
    let chains = chains_file(
        &anvil.url,
        pay_chain::testing::ANVIL_CHAIN_ID,
        Some(&shop.token),
        Some(&shop.feed),
    );
    let Shop {
        server,
        key: api_key,
        company,
        token: contract,
        feed,
    } = shop;
    server.stop();
    let second = Server::spawn(command(&dir, db_url, &chains));
    let shop = Shop {
        server: Server::spawn(command(&dir, db_url, &chains)),
        key: api_key,
        company,
        token: contract,
        feed,
    };
    anvil.mine(3);
    std::thread::sleep(std::time::Duration::from_secs(1));
    let list = shop.activity();
    assert_eq!(list.len(), 5, "{list:#?}");
    assert_eq!(one(&list, &expected[3])["hasExpense"], true);
    let log = second.stop().1 + &shop.server.stop().1;
    assert!(!log.contains("chain watcher round failed"), "{log}");
}

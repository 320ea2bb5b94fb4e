//! The chain processor (`PAY_PROCESSOR=onchain`) as an operator runs it: the real binary
//! against a local chain (anvil from npm, contracts deployed and payments sent by viem), its
//! start-up checks of `PAY_CHAINS_FILE`, and payments through real HTTP.

use pay_chain::testing::{Anvil, ANVIL_CHAIN_ID};
use serde_json::{json, Value};

#[path = "support/process.rs"]
mod process;

#[path = "support/chain.rs"]
mod chain;

#[path = "support/openmetrics.rs"]
mod openmetrics;

use chain::*;
use process::*;

#[test]
fn an_onchain_server_starts_against_its_node_and_offers_the_chains_assets() {
    let Some(anvil) = Anvil::start(&[]) else {
        return;
    };
    let token = anvil.tool("deploy", json!({}))["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let dir = TempDir::new();
    let chains = chains_file(&anvil.url, ANVIL_CHAIN_ID, Some(&token), None);
    let key = bootstrap(command(&dir, &dir.db_url(), &chains));
    let server = Server::spawn(command(&dir, &dir.db_url(), &chains));
    let (status, assets, _) = call(
        "GET",
        &format!("{}/api/partner/v1/pay/destination-assets", server.base),
        &headers(&key),
        None,
    );
    assert_eq!(status, 200, "{assets}");
    let ids: Vec<&str> = assets["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["assetIdentifier"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "eip155:31337/slip44:60".to_owned(),
            format!("eip155:31337/erc20:{}", token.to_ascii_lowercase())
        ],
        "the chains' assets, and no built-in asset of an unwatched chain"
    );
    assert_eq!(assets["data"][1]["chainCode"], "local");
    // The sandbox's routes are not there.
    let (status, _, _) = call(
        "POST",
        &format!(
            "{}/api/partner/v1/pay/sandbox/wallet-activity/outgoing",
            server.base
        ),
        &headers(&key),
        Some(
            json!({"chain": "eip155:31337", "txHash": format!("0x{}", "ab".repeat(32)),
                    "logIndex": 0, "asset": "eip155:31337/slip44:60", "amount": "1",
                    "toAddress": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"}),
        ),
    );
    assert_eq!(status, 404);
    server.stop();
}

/// `serve` and `worker` with `chains`: they must not start; their error output.
fn refused(dir: &TempDir, chains: &Value) -> String {
    let mut errors = Vec::new();
    for cmd in ["serve", "worker"] {
        let out = command(dir, &dir.db_url(), chains)
            .arg(cmd)
            .env("PAY_LISTEN", format!("127.0.0.1:{}", free_port()))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{cmd} must not start");
        errors.push(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let error_line = |e: &str| {
        e.lines()
            .find(|l| l.starts_with("Error:"))
            .map(str::to_owned)
    };
    assert!(error_line(&errors[0]).is_some(), "{}", errors[0]);
    assert_eq!(error_line(&errors[0]), error_line(&errors[1]));
    errors.swap_remove(0)
}

#[test]
fn a_wrong_chain_id_or_an_invalid_chains_file_stops_the_start_naming_the_entry() {
    let Some(anvil) = Anvil::start(&[]) else {
        return;
    };
    let dir = TempDir::new();
    let e = refused(&dir, &chains_file(&anvil.url, 8453, None, None));
    assert!(
        e.contains("chains[0] (local)") && e.contains("31337") && e.contains("8453"),
        "{e}"
    );
    let mut bad = chains_file(&anvil.url, ANVIL_CHAIN_ID, None, None);
    bad[0]["assets"][0]["decimals"] = json!(30);
    let e = refused(&dir, &bad);
    assert!(
        e.contains("chains[0] (local): assets[0] (eip155:31337/slip44:60): decimals"),
        "{e}"
    );
    let unreachable = chains_file("http://127.0.0.1:9", ANVIL_CHAIN_ID, None, None);
    let e = refused(&dir, &unreachable);
    assert!(e.contains("chains[0] (local): rpcUrl"), "{e}");
}

#[test]
fn a_session_gets_the_next_address_of_the_merchants_key_and_a_quote_at_the_chains_price() {
    for db in databases() {
        addresses_and_quotes(&db.url);
    }
}

fn addresses_and_quotes(db_url: &str) {
    let Some(anvil) = Anvil::start(&[]) else {
        return;
    };
    let dir = TempDir::new();
    let shop = Shop::open(&anvil, &dir, db_url);
    let eth = "eip155:31337/slip44:60";
    // No key yet: the start is refused.
    let link = shop.link("25", &shop.token_id(), None);
    let (status, e) = shop.start(&link, &shop.token_id());
    assert_eq!(
        (status, e["errorCode"].as_str()),
        (409, Some("missing_company_wallet")),
        "{e}"
    );

    let xpub = anvil.tool("xpub", json!({"account": 3}))["xpub"]
        .as_str()
        .unwrap()
        .to_owned();
    let (status, wallet) = shop.api(
        "PUT",
        "/settlement-wallets/evm",
        Some(json!({"xpub": xpub})),
    );
    assert_eq!(status, 200, "{wallet}");
    let theirs =
        anvil.tool("derive", json!({"xpub": xpub, "indices": [0, 1, 2]}))["addresses"].clone();

    // A token link is paid 1:1 in the token, to child 0/0.
    let (status, s) = shop.start(&link, &shop.token_id());
    assert_eq!(status, 201, "{s}");
    assert_eq!(s["status"], "pending", "{s}");
    assert_eq!(s["depositAddress"], theirs[0], "{s}");
    assert_eq!(s["destinationAddress"], theirs[0]);
    assert_eq!(
        (s["channelId"].as_str(), s["sourceChain"].as_str()),
        (Some("local:0"), Some("local"))
    );
    assert_eq!(s["requiredSellAmount"], "25");
    assert_eq!(s["selectedSellAsset"], shop.token_id());

    // A USD link converts at the feed's price (2500), rounded up to the coin's decimals; the
    // next session gets the next child.
    let usd = shop.link("100", eth, Some("USD"));
    let (status, s) = shop.start(&usd, eth);
    assert_eq!(status, 201, "{s}");
    assert_eq!(s["depositAddress"], theirs[1], "{s}");
    assert_eq!(s["channelId"], "local:1");
    assert_eq!(s["requiredSellAmount"], "0.04");
    let third = shop.link("10", eth, Some("USD"));
    anvil.tool("setPrice", json!({"feed": shop.feed, "answer": "300000000000", "updatedAt": now_secs().to_string(), "wait": true}));
    let (status, s) = shop.start(&third, eth);
    assert_eq!(status, 201, "{s}");
    assert_eq!(
        s["requiredSellAmount"], "0.003333333333333334",
        "rounded up: {s}"
    );
    assert_eq!(s["channelId"], "local:2");

    // A stale feed gives no quote (never a guess), and takes no address.
    anvil.tool("setPrice", json!({"feed": shop.feed, "answer": "300000000000", "updatedAt": (now_secs() - 7200).to_string(), "wait": true}));
    let stale = shop.link("10", eth, Some("USD"));
    let (status, e) = shop.start(&stale, eth);
    assert_eq!(
        (status, e["errorCode"].as_str()),
        (409, Some("price_unavailable")),
        "{e}"
    );
    // The token keeps its fixed par; a token link is not paid in the coin (no swap).
    let (status, e) = shop.start(&link, eth);
    assert_eq!(status, 400, "{e}");

    let (_, wallet) = shop.api("GET", "/settlement-wallets/evm", None);
    assert_eq!(wallet["nextIndex"], 3, "{wallet}");

    // Issue 31: a second company (another brand of the same merchant) sets the same key, on a
    // second instance. It is never handed a child the first has: its sessions continue after
    // the first's, and the first's after its own.
    let chains = chains_file(
        &anvil.url,
        ANVIL_CHAIN_ID,
        Some(&shop.token),
        Some(&shop.feed),
    );
    let out = command(&dir, db_url, &chains)
        .args(["admin", "bootstrap", "--company", "Second Brand", "--email"])
        .args([
            "brand@chain.example",
            "--password",
            "a long enough password",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let brand = Shop {
        server: Server::spawn(command(&dir, db_url, &chains)),
        key: [
            ("x-svc-key-id".into(), v["keyId"].as_str().unwrap().into()),
            (
                "x-svc-key-secret".into(),
                v["keySecret"].as_str().unwrap().into(),
            ),
        ],
        company: v["companyId"].as_str().unwrap().into(),
        token: shop.token.clone(),
        feed: shop.feed.clone(),
    };
    let (status, w) = brand.api(
        "PUT",
        "/settlement-wallets/evm",
        Some(json!({"xpub": xpub})),
    );
    assert_eq!(status, 200, "{w}");
    assert_eq!(w["nextIndex"], 0, "a key this company never used: {w}");
    let next = anvil.tool("derive", json!({"xpub": xpub, "indices": [3, 4]}))["addresses"].clone();
    let (_, _, address) = brand.pending("5", &brand.token_id());
    assert_eq!(address, next[0]);
    let (_, _, address) = shop.pending("5", &shop.token_id());
    assert_eq!(address, next[1]);
    let (_, w) = brand.api("GET", "/settlement-wallets/evm", None);
    assert_eq!(w["nextIndex"], 4, "one past its own highest child: {w}");
    let (_, w) = shop.api("GET", "/settlement-wallets/evm", None);
    assert_eq!(w["nextIndex"], 5, "{w}");
    brand.server.stop();
    shop.server.stop();
}

/// Waits (10 s at most) until the session shows one transfer per entry of `confirmations`,
/// with these counts in order; the transfers.
fn wait_transfers(shop: &Shop, link: &str, id: &str, confirmations: &[u64]) -> Value {
    let mut last = Value::Null;
    let reached = wait_until(std::time::Duration::from_secs(30), || {
        last = shop.session(link, id)["settlement"]["transfers"].clone();
        last.as_array().is_some_and(|t| {
            t.iter()
                .map(|t| t["confirmations"].as_u64().unwrap_or(0))
                .eq(confirmations.iter().copied())
        })
    });
    assert!(
        reached,
        "never {confirmations:?} confirmations: {last}\nlog:\n{}",
        shop.server.log()
    );
    last
}

#[test]
fn the_watcher_takes_token_and_native_payments_to_their_confirmations() {
    for db in databases() {
        watched_payments(&db.url);
    }
}

fn watched_payments(db_url: &str) {
    let Some(anvil) = Anvil::start(&[]) else {
        return;
    };
    let dir = TempDir::new();
    let shop = Shop::open(&anvil, &dir, db_url);
    let (hook, deliveries) = receiver();
    shop.callback(&hook);
    shop.wallet(&anvil, 2);
    let token = shop.token_id();

    // An exact token payment: processing in its block, complete at 2 confirmations, with its
    // webhook; the session shows the transfer and its confirmations as blocks come.
    let (link, id, address) = shop.pending("25", &token);
    assert!(
        shop.session(&link, &id)["settlement"]
            .get("transfers")
            .is_none(),
        "no transfer yet"
    );
    let sent = anvil.tool(
        "sendToken",
        json!({"token": shop.token, "to": address, "units": "25000000", "wait": true}),
    );
    let block = sent["blockNumber"].as_u64().unwrap();
    let tx = sent["txHash"].as_str().unwrap().to_ascii_lowercase();
    let s = shop.wait_status(&link, &id, "processing");
    assert_eq!(s["settlement"]["receivedAmount"], "25", "{s}");
    let transfers = wait_transfers(&shop, &link, &id, &[1]);
    assert_eq!(
        transfers[0],
        json!({"txHash": tx, "logIndex": 0, "amount": "25", "blockNumber": block,
               "confirmations": 1})
    );
    // The merchant's view of the link shows the same.
    let (_, detail) = shop.api("GET", &format!("/payment-links/{link}"), None);
    assert_eq!(
        detail["latestSession"]["settlement"]["transfers"], transfers,
        "{detail}"
    );
    anvil.mine(1);
    let s = shop.wait_status(&link, &id, "complete");
    assert_eq!(s["settlement"]["transfers"][0]["confirmations"], 2, "{s}");
    let mut webhook = Value::Null;
    let settled = wait_until(std::time::Duration::from_secs(30), || {
        deliveries.try_iter().any(|(_, body)| {
            let v: Value = serde_json::from_str(&body).unwrap_or_default();
            let found = v["type"] == "pay.payment.settlement_updated" && body.contains(&id);
            if found {
                webhook = v;
            }
            found
        })
    });
    assert!(
        settled,
        "the settlement_updated webhook; log:\n{}",
        shop.server.log()
    );
    assert_eq!(
        webhook["session"]["settlement"]["transfers"], s["settlement"]["transfers"],
        "the webhook's settlement holds the final transfer: {webhook}"
    );
    // Final: more blocks change nothing.
    anvil.mine(2);
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert_eq!(
        shop.session(&link, &id)["settlement"]["transfers"],
        s["settlement"]["transfers"]
    );

    // A native payment.
    let eth = "eip155:31337/slip44:60";
    let (link, id, address) = shop.pending("0.5", eth);
    anvil.tool(
        "sendEth",
        json!({"to": address, "value": "500000000000000000", "wait": true}),
    );
    shop.wait_status(&link, &id, "processing");
    let transfers = wait_transfers(&shop, &link, &id, &[1]);
    assert!(transfers[0]["logIndex"].is_null(), "{transfers}");
    assert!(transfers[0].get("logIndex").is_some(), "{transfers}");
    assert_eq!(transfers[0]["amount"], "0.5", "{transfers}");
    anvil.mine(1);
    let s = shop.wait_status(&link, &id, "complete");
    assert_eq!(s["settlement"]["receivedAmount"], "0.5", "{s}");
    assert_eq!(s["settlement"]["transfers"][0]["confirmations"], 2, "{s}");

    // Two partial transfers add up: the first alone is processing, never complete.
    let (link, id, address) = shop.pending("10", &token);
    anvil.tool(
        "sendToken",
        json!({"token": shop.token, "to": address, "units": "4000000", "wait": true}),
    );
    shop.wait_status(&link, &id, "processing");
    anvil.tool(
        "sendToken",
        json!({"token": shop.token, "to": address, "units": "6000000", "wait": true}),
    );
    let both = wait_until(std::time::Duration::from_secs(30), || {
        shop.session(&link, &id)["settlement"]["receivedAmount"] == "10"
    });
    assert!(both, "{}", shop.session(&link, &id));
    assert_eq!(
        shop.session(&link, &id)["status"],
        "processing",
        "the second is not final yet"
    );
    // One block each: the first has its two confirmations, the second one.
    let transfers = wait_transfers(&shop, &link, &id, &[2, 1]);
    assert_eq!(
        (
            transfers[0]["amount"].as_str(),
            transfers[1]["amount"].as_str()
        ),
        (Some("4"), Some("6"))
    );
    anvil.mine(1);
    let s = shop.wait_status(&link, &id, "complete");
    assert_eq!(
        s["settlement"]["receivedAmount"], "10",
        "counted once each: {s}"
    );
    wait_transfers(&shop, &link, &id, &[2, 2]);

    // Short beyond the tolerance: underpaid once final. More than asked: complete, overpaid.
    let (short_link, short, short_address) = shop.pending("20", &token);
    let (over_link, over, over_address) = shop.pending("20", &token);
    anvil.automine(false);
    for (address, units) in [(&short_address, "5000000"), (&over_address, "23000000")] {
        anvil.tool(
            "sendToken",
            json!({"token": shop.token, "to": address, "units": units}),
        );
    }
    anvil.mine(2);
    anvil.automine(true);
    let s = shop.wait_status(&short_link, &short, "underpaid");
    assert_eq!(s["settlement"]["shortBy"], "15", "{s}");
    let s = shop.wait_status(&over_link, &over, "complete");
    assert_eq!(s["settlement"]["overpaidBy"], "3", "{s}");
    let log = shop.server.stop().1;
    assert!(!log.contains("chain watcher round failed"), "{log}");
}

#[test]
fn two_instances_and_a_kill_9_miss_nothing_and_count_nothing_twice() {
    for db in databases() {
        instances_and_restart(&db.url);
    }
}

fn instances_and_restart(db_url: &str) {
    let Some(anvil) = Anvil::start(&[]) else {
        return;
    };
    let dir = TempDir::new();
    let shop = Shop::open(&anvil, &dir, db_url);
    let chains = chains_file(
        &anvil.url,
        ANVIL_CHAIN_ID,
        Some(&shop.token),
        Some(&shop.feed),
    );
    let second = Server::spawn(command(&dir, db_url, &chains));
    let (hook, deliveries) = receiver();
    shop.callback(&hook);
    shop.wallet(&anvil, 4);
    let token = shop.token_id();
    let contract = shop.token.clone();
    let pay = |address: &str, units: &str| {
        anvil.tool(
            "sendToken",
            json!({"token": contract, "to": address, "units": units, "wait": true}),
        );
    };

    // Two instances watch one database: the payment completes once.
    let (link1, id1, address1) = shop.pending("25", &token);
    let (link2, id2, address2) = shop.pending("7", &token);
    pay(&address1, "25000000");
    anvil.mine(1);
    shop.wait_status(&link1, &id1, "complete");
    assert_eq!(
        settlements(&deliveries, &id1, std::time::Duration::from_secs(2)),
        1
    );

    // Both die with kill -9; a payment arrives and becomes final meanwhile; a new instance
    // takes the chain over when the dead holder's lease runs out and finds it.
    second.kill9();
    let Shop {
        server,
        key,
        company,
        token,
        feed,
    } = shop;
    server.kill9();
    pay(&address2, "7000000");
    anvil.mine(3);
    let shop = Shop {
        server: Server::spawn(command(&dir, db_url, &chains)),
        key,
        company,
        token,
        feed,
    };
    let reached = wait_until(std::time::Duration::from_secs(30), || {
        shop.session(&link2, &id2)["status"] == "complete"
    });
    assert!(
        reached,
        "{}\n{}",
        shop.session(&link2, &id2),
        shop.server.log()
    );
    let s1 = shop.session(&link1, &id1);
    assert_eq!(
        s1["settlement"]["receivedAmount"], "25",
        "counted once: {s1}"
    );
    assert_eq!(
        shop.session(&link2, &id2)["settlement"]["receivedAmount"],
        "7"
    );
    assert_eq!(
        settlements(&deliveries, &id2, std::time::Duration::from_secs(2)),
        1
    );
    assert_eq!(settlements(&deliveries, &id1, std::time::Duration::ZERO), 0);
    shop.server.stop();
}

#[test]
fn a_transfer_reorged_out_before_its_confirmations_returns_the_session_to_pending() {
    for db in databases() {
        reorgs(&db.url);
    }
}

fn reorgs(db_url: &str) {
    let Some(anvil) = Anvil::start(&[]) else {
        return;
    };
    let dir = TempDir::new();
    let shop = Shop::open(&anvil, &dir, db_url);
    shop.wallet(&anvil, 5);
    let token = shop.token_id();
    let pay = |address: &str| {
        anvil.tool(
            "sendToken",
            json!({"token": shop.token, "to": address, "units": "10000000", "wait": true}),
        );
    };

    // Seen, then gone with its block before its second confirmation: pending again.
    let (link, id, address) = shop.pending("10", &token);
    let snap = anvil.snapshot();
    pay(&address);
    shop.wait_status(&link, &id, "processing");
    wait_transfers(&shop, &link, &id, &[1]);
    anvil.revert(&snap);
    anvil.mine(3);
    let s = shop.wait_status(&link, &id, "pending");
    assert!(s["settlement"]["receivedAmount"].is_null(), "{s}");
    assert!(
        s["settlement"].get("transfers").is_none(),
        "the reorged-out transfer left the list: {s}"
    );
    // Paid again, on the new chain: complete, counted once.
    pay(&address);
    shop.wait_status(&link, &id, "processing");
    anvil.mine(1);
    let s = shop.wait_status(&link, &id, "complete");
    assert_eq!(s["settlement"]["receivedAmount"], "10", "{s}");

    // Final, then reorged away deeper than the confirmations: it stays complete (and the
    // watcher says so loudly).
    let (link, id, address) = shop.pending("10", &token);
    let snap = anvil.snapshot();
    pay(&address);
    anvil.mine(2);
    shop.wait_status(&link, &id, "complete");
    anvil.revert(&snap);
    anvil.mine(5);
    assert!(shop.server.wait_log("REORG"), "{}", shop.server.log());
    assert_eq!(shop.session(&link, &id)["status"], "complete");
    shop.server.stop();
}

#[test]
fn readyz_reports_each_chains_lag_and_fails_while_its_node_is_gone() {
    for db in databases() {
        readiness(&db.url);
    }
}

const METRICS_TOKEN: &str = "chains-metrics-token-0123456789abcdef";

/// `/readyz` of the server at `base`: status and body.
fn readyz(base: &str) -> (u16, Value) {
    let (status, v, _) = call("GET", &format!("{base}/readyz"), &[], None);
    (status, v)
}

fn readiness(db_url: &str) {
    let Some(mut anvil) = Anvil::start(&[]) else {
        return;
    };
    let dir = TempDir::new();
    let mut chains = chains_file(&anvil.url, ANVIL_CHAIN_ID, None, None);
    chains[0]["unreachableAfterSecs"] = json!(2);
    let mut with_metrics = command(&dir, db_url, &chains);
    with_metrics.env("PAY_METRICS_TOKEN", METRICS_TOKEN);
    let first = Server::spawn(with_metrics);
    let second = Server::spawn(command(&dir, db_url, &chains));
    anvil.mine(5);
    let head = anvil.head();
    // Both instances report the chain as its watcher (one of them, by the lease) read it.
    for server in [&first, &second] {
        let mut last = Value::Null;
        let caught_up = wait_until(std::time::Duration::from_secs(30), || {
            let (status, v) = readyz(&server.base);
            last = v;
            status == 200 && last["chains"][0]["head"] == head && last["chains"][0]["lag"] == 0
        });
        assert!(caught_up, "{last}\n{}", server.log());
        assert_eq!(last["status"], "ok");
        assert_eq!(last["chains"][0]["chainCode"], "local");
        assert!(last["chains"][0]["readAt"].is_string(), "{last}");
        assert!(last["chains"][0]["failingSince"].is_null(), "{last}");
    }

    // `/metrics` shows the same: 0 blocks behind, read a moment ago.
    let parsed = openmetrics::scrape(&first.base, METRICS_TOKEN);
    if let Some(samples) = &parsed {
        let behind = openmetrics::chain_gauge(samples, "pay_chain_blocks_behind", "local");
        assert_eq!(behind, Some(0.0), "{samples:?}");
        let age = openmetrics::chain_gauge(samples, "pay_chain_last_read_age_seconds", "local");
        assert!(age.is_some_and(|a| a < 2.0), "{samples:?}");
    }

    // The node goes away: ready for the 2 s of unreachableAfterSecs, then 503.
    anvil.stop();
    let (status, v) = readyz(&first.base);
    assert_eq!(status, 200, "not yet: {v}");
    let mut last = Value::Null;
    let failed = wait_until(std::time::Duration::from_secs(30), || {
        let (status, v) = readyz(&second.base);
        last = v;
        status == 503
    });
    assert!(failed, "{last}");
    assert_eq!(last["errorCode"], "unavailable", "{last}");
    assert!(
        last["error"]
            .as_str()
            .unwrap()
            .contains("chain local unreachable"),
        "{last}"
    );
    let (status, _) = readyz(&first.base);
    assert_eq!(status, 503);
    // The last read ages past the 2 s on `/metrics` too.
    if parsed.is_some() {
        let samples = openmetrics::scrape(&first.base, METRICS_TOKEN).unwrap();
        let age = openmetrics::chain_gauge(&samples, "pay_chain_last_read_age_seconds", "local");
        assert!(age.is_some_and(|a| a >= 2.0), "{samples:?}");
    }

    // A node answers again: ready again.
    anvil.restart();
    let recovered = wait_until(std::time::Duration::from_secs(30), || {
        readyz(&first.base).0 == 200 && readyz(&second.base).0 == 200
    });
    assert!(recovered, "{}\n{}", readyz(&first.base).1, first.log());
    first.stop();
    second.stop();
}

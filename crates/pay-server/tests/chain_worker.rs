//! The chain watcher in `pay-server worker`: with no `serve` running, a worker process alone
//! watches the chain, settles the payment at its confirmations and delivers its webhook. The
//! real binary against anvil (from npm), the payment sent by viem.

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use pay_chain::testing::{Anvil, ANVIL_CHAIN_ID};
use serde_json::{json, Value};

#[path = "support/process.rs"]
mod process;

#[path = "support/chain.rs"]
mod chain;

use chain::*;
use process::*;

/// Kills the worker when the test ends, passed or not.
struct Worker(Child);

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_worker_alone_settles_a_chain_payment_and_delivers_its_webhook() {
    for db in databases() {
        worker_alone(&db.url);
    }
}

fn worker_alone(db_url: &str) {
    let Some(anvil) = Anvil::start(&[]) else {
        return;
    };
    let dir = TempDir::new();
    let shop = Shop::open(&anvil, &dir, db_url);
    let (hook, deliveries) = receiver();
    shop.callback(&hook);
    shop.wallet(&anvil, 6);
    let token = shop.token_id();
    let (_link, id, address) = shop.pending("10", &token);
    let chains = chains_file(
        &anvil.url,
        ANVIL_CHAIN_ID,
        Some(&shop.token),
        Some(&shop.feed),
    );
    let token_contract = shop.token.clone();

    // No server any more: only the worker runs (it takes the chain over once the stopped
    // server's lease has run out).
    let (_, serve_log) = shop.server.stop();
    assert!(
        !serve_log.contains("chain watcher round failed"),
        "{serve_log}"
    );
    let worker = Worker(
        command(&dir, db_url, &chains)
            .arg("worker")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );

    anvil.tool(
        "sendToken",
        json!({"token": token_contract, "to": address, "units": "10000000", "wait": true}),
    );
    anvil.mine(1);

    // The worker reads the blocks, settles the session at its two confirmations and its
    // dispatcher delivers the status change to the company's callback.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen = Vec::new();
    let mut complete = false;
    while Instant::now() < deadline && !complete {
        for (_, body) in deliveries.try_iter() {
            let v: Value = serde_json::from_str(&body).unwrap_or_default();
            if body.contains(&id) {
                complete |= v["type"] == "pay.payment.status_changed"
                    && v["session"]["status"] == "complete";
                seen.push(body);
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(complete, "no complete status from the worker: {seen:#?}");
    drop(worker);
}

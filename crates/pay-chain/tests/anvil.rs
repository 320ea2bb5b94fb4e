//! The JSON-RPC client and the start-up check against a real local chain (anvil from npm), and
//! this project's xpub derivation against viem's HDKey (an independent implementation).

use std::time::Duration;

use pay_chain::rpc::{Log, TRANSFER_TOPIC};
use pay_chain::testing::{Anvil, ANVIL_CHAIN_ID};
use pay_chain::{check_chain_ids, RpcClient};
use pay_domain::chains::{parse_chains, Xpub};
use serde_json::json;

fn client(anvil: &Anvil) -> RpcClient {
    RpcClient::new(&anvil.url, Duration::from_secs(5)).unwrap()
}

fn chains_file(rpc_url: &str, chain_id: u64) -> String {
    format!(
        r#"[{{"chainCode": "local", "kind": "evm", "chainId": {chain_id}, "rpcUrl": "{rpc_url}",
            "assets": [{{"assetIdentifier": "eip155:{chain_id}/slip44:60", "symbol": "ETH",
                         "name": "Ether", "decimals": 18, "usdPrice": "2500"}}]}}]"#
    )
}

#[tokio::test]
async fn reads_blocks_transfers_and_checks_the_chain_id() {
    let Some(anvil) = Anvil::start(&[]) else {
        return;
    };
    let rpc = client(&anvil);
    assert_eq!(rpc.chain_id().await.unwrap(), ANVIL_CHAIN_ID);

    // The start-up check: the right id passes, a wrong one names the entry.
    let good = parse_chains(&chains_file(&anvil.url, ANVIL_CHAIN_ID)).unwrap();
    check_chain_ids(&good, Duration::from_secs(5))
        .await
        .unwrap();
    let wrong = parse_chains(&chains_file(&anvil.url, 8453)).unwrap();
    let e = check_chain_ids(&wrong, Duration::from_secs(5))
        .await
        .unwrap_err();
    assert!(
        e.contains("chains[0] (local)") && e.contains("31337") && e.contains("8453"),
        "{e}"
    );
    let down = parse_chains(&chains_file("http://127.0.0.1:9", ANVIL_CHAIN_ID)).unwrap();
    let e = check_chain_ids(&down, Duration::from_secs(2))
        .await
        .unwrap_err();
    assert!(e.contains("chains[0] (local): rpcUrl"), "{e}");

    let deployed = anvil.tool("deploy", json!({}));
    let token = deployed["token"].as_str().unwrap().to_owned();
    let to = "0x50BA026975ce1b776F02055e3A05DFFA7d708b34";
    let sent = anvil.tool(
        "sendToken",
        json!({"token": token, "to": to, "units": "1234567", "wait": true}),
    );
    let block = sent["blockNumber"].as_u64().unwrap();
    let logs = rpc
        .transfer_logs(block, block, std::slice::from_ref(&token))
        .await
        .unwrap();
    let transfers: Vec<_> = logs.iter().filter_map(Log::token_transfer).collect();
    assert_eq!(transfers.len(), 1);
    assert_eq!(transfers[0].to, to.to_ascii_lowercase());
    assert_eq!(transfers[0].units, 1_234_567);
    assert_eq!(transfers[0].tx_hash, sent["txHash"].as_str().unwrap());
    assert_eq!(logs[0].topics[0], TRANSFER_TOPIC);

    let paid = anvil.tool("sendEth", json!({"to": to, "value": "777", "wait": true}));
    let n = paid["blockNumber"].as_u64().unwrap();
    let b = rpc.block(n).await.unwrap().unwrap();
    assert_eq!(b.number, n);
    assert_eq!(b.parent_hash, rpc.block_hash(n - 1).await.unwrap().unwrap());
    let tx = &b.transactions[0];
    assert_eq!(
        (tx.to.as_deref(), tx.value),
        (Some(to.to_ascii_lowercase().as_str()), 777)
    );
    assert!(rpc.succeeded(&tx.hash).await.unwrap());
    assert_eq!(rpc.balance(to, n).await.unwrap(), 777);
    assert_eq!(rpc.balance(to, n - 1).await.unwrap(), 0);
    assert!(rpc.block(n + 100).await.unwrap().is_none());

    // A reverted snapshot takes its blocks off the chain: the same height gets another hash.
    let snap = anvil.snapshot();
    anvil.mine(2);
    let before = rpc.block_hash(n + 2).await.unwrap().unwrap();
    anvil.revert(&snap);
    anvil.rpc("evm_mine", json!([]));
    anvil.rpc("evm_mine", json!([]));
    assert_ne!(rpc.block_hash(n + 2).await.unwrap().unwrap(), before);
}

/// The first deposit addresses of an account key equal viem's HDKey derivation of the same
/// key (and the key of account 0 gives anvil's funded accounts).
#[test]
fn derivation_matches_an_independent_library() {
    let Some(anvil) = Anvil::start(&[]) else {
        return;
    };
    for account in [0, 1, 7] {
        let xpub = anvil.tool("xpub", json!({"account": account}))["xpub"]
            .as_str()
            .unwrap()
            .to_owned();
        let indices = [0u32, 1, 2, 5, 1000, 0x7fff_ffff];
        let theirs = anvil.tool("derive", json!({"xpub": xpub, "indices": indices}));
        let key = Xpub::parse(&xpub).unwrap();
        let ours: Vec<_> = indices.iter().map(|&i| key.address(i).unwrap()).collect();
        assert_eq!(json!(ours), theirs["addresses"], "account {account}");
        if account == 0 {
            assert_eq!(ours[0], "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266");
        }
    }
}

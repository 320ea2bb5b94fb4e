//! The chain processor's configuration (`PAY_PROCESSOR=onchain`): the operator's chains file,
//! the assets it adds to the settlement-asset catalogue, and the start-up check of each node.

use std::time::Duration;

use anyhow::{bail, Context};
use pay_domain::chains::{parse_chains, Chain};
use pay_domain::kernel::assets::{AssetCatalogue, DestinationAsset};

use crate::Config;

/// How long the start-up check waits for each node's `eth_chainId`.
pub const NODE_CHECK_TIMEOUT: Duration = Duration::from_secs(10);

/// The configured chains: `PAY_CHAINS_FILE` under `PAY_PROCESSOR=onchain`, none otherwise. An
/// invalid file names the entry at fault.
pub fn load(config: &Config) -> anyhow::Result<Vec<Chain>> {
    if config.processor != "onchain" {
        return Ok(Vec::new());
    }
    let Some(path) = &config.chains_file else {
        bail!("PAY_PROCESSOR=onchain needs PAY_CHAINS_FILE (a JSON array of chains)");
    };
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("PAY_CHAINS_FILE: reading {path}"))?;
    parse_chains(&text).map_err(|e| anyhow::anyhow!("PAY_CHAINS_FILE {path}: {e}"))
}

/// The catalogue with the chains' assets joined: `base` (the operator's `PAY_ASSETS_FILE`)
/// plus every chain asset, or, without a file, the chains' assets alone (the built-in assets
/// are on chains this processor does not watch), the first one the default for new companies.
/// An asset listed both in the file and by a chain is refused.
pub fn catalogue(
    base: Option<Vec<DestinationAsset>>,
    chains: &[Chain],
) -> anyhow::Result<AssetCatalogue> {
    let from_file = base.is_some();
    let mut assets = base.unwrap_or_default();
    for chain in chains {
        for a in chain.destination_assets() {
            if assets
                .iter()
                .any(|b| b.asset_identifier.eq_ignore_ascii_case(&a.asset_identifier))
            {
                bail!(
                    "PAY_CHAINS_FILE: {} ({}) is also in PAY_ASSETS_FILE; list it once",
                    a.asset_identifier,
                    chain.chain_code
                );
            }
            assets.push(a);
        }
    }
    if !from_file {
        if let Some(first) = assets.first_mut() {
            first.default_for_new_companies = true;
        }
    }
    AssetCatalogue::new(assets).map_err(|e| anyhow::anyhow!("settlement assets: {e}"))
}

/// Checks each chain's node at start: its `eth_chainId` must be the configured `chainId`. The
/// error names the entry (`chains[0] (base): ...`) and the server does not start.
pub async fn check_nodes(chains: &[Chain]) -> anyhow::Result<()> {
    if chains.is_empty() {
        return Ok(());
    }
    pay_chain::check_chain_ids(chains, NODE_CHECK_TIMEOUT)
        .await
        .map_err(|e| anyhow::anyhow!("PAY_CHAINS_FILE: {e}"))?;
    for c in chains {
        tracing::info!(chain = %c.chain_code, chain_id = c.chain_id, "chain node checked");
    }
    Ok(())
}

/// Starts a watcher per configured chain on the current runtime (`serve` and `worker`): each
/// takes its chain's lease in the database, so one instance at a time reads a chain.
pub fn spawn_watchers(
    config: &Config,
    store: pay_store::DieselStore,
    pay: pay_domain::app::Pay,
) -> anyhow::Result<()> {
    let chains = load(config)?;
    if chains.is_empty() {
        return Ok(());
    }
    let holder = format!("pay-{}", uuid::Uuid::new_v4().simple());
    let store: std::sync::Arc<dyn pay_domain::chains::ports::WatchStore> =
        std::sync::Arc::new(store);
    for chain in chains {
        let code = chain.chain_code.clone();
        let watcher = pay_chain::Watcher::new(chain, store.clone(), pay.clone(), &holder)
            .map_err(|e| anyhow::anyhow!("chain {code}: {e}"))?;
        tracing::info!(chain = %code, %holder, "chain watcher started");
        actix_rt::spawn(watcher.run());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chains() -> Vec<Chain> {
        parse_chains(
            r#"[{"chainCode": "local", "kind": "evm", "chainId": 31337, "rpcUrl": "http://127.0.0.1:8545",
                 "assets": [{"assetIdentifier": "eip155:31337/slip44:60", "symbol": "ETH", "name": "Ether", "decimals": 18, "usdPrice": "2500"},
                            {"assetIdentifier": "eip155:31337/erc20:0x5FbDB2315678afecb367f032d93F642f64180aa3", "symbol": "TUSD", "name": "Test USD", "decimals": 6, "usdPrice": "1"}]}]"#,
        )
        .unwrap()
    }

    #[test]
    fn the_chains_assets_join_the_catalogue() {
        let c = catalogue(None, &chains()).unwrap();
        assert_eq!(c.all().len(), 2);
        assert_eq!(
            c.default_for_new_companies().asset_identifier,
            "eip155:31337/slip44:60"
        );
        let token = c
            .get("eip155:31337/erc20:0x5fbdb2315678afecb367f032d93f642f64180aa3")
            .unwrap();
        assert_eq!((token.chain_code.as_str(), token.decimals), ("local", 6));

        let builtin = AssetCatalogue::builtin().all().to_vec();
        let joined = catalogue(Some(builtin.clone()), &chains()).unwrap();
        assert_eq!(joined.all().len(), builtin.len() + 2);
        assert_eq!(
            joined.default_for_new_companies(),
            AssetCatalogue::builtin().default_for_new_companies(),
            "the file's default stays"
        );

        let mut twice = builtin;
        twice.push(chains()[0].destination_assets()[0].clone());
        let e = catalogue(Some(twice), &chains()).unwrap_err().to_string();
        assert!(e.contains("eip155:31337/slip44:60 (local)"), "{e}");
    }

    #[test]
    fn onchain_needs_a_valid_chains_file() {
        let mut c = Config::for_database("sqlite://x.db");
        assert!(load(&c).unwrap().is_empty(), "the sandbox has no chains");
        c.processor = "onchain".into();
        let e = load(&c).unwrap_err().to_string();
        assert!(e.contains("PAY_CHAINS_FILE"), "{e}");
        let path = std::env::temp_dir().join(format!("pay-chains-{}.json", std::process::id()));
        std::fs::write(&path, r#"[{"chainCode": "base", "kind": "bitcoin"}]"#).unwrap();
        c.chains_file = Some(path.display().to_string());
        let e = format!("{:#}", load(&c).unwrap_err());
        let _ = std::fs::remove_file(&path);
        assert!(
            e.contains("PAY_CHAINS_FILE") && e.contains("missing field"),
            "{e}"
        );
    }
}

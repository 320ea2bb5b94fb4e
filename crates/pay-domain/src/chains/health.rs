//! Each chain's health as `/readyz` reports it: how far the watcher is behind the node's head
//! (the lag), and whether the chain has gone unread longer than its `unreachableAfterSecs`.
//! The watchers record their rounds in the database, so every instance answers the same.

use std::sync::Arc;

use crate::kernel::error::PortResult;
use crate::kernel::ports::Clock;
use crate::kernel::timestamp::Timestamp;

use super::config::Chain;
use super::model::ChainWatch;
use super::ports::WatchStore;

/// One chain's health.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainHealth {
    pub chain_code: String,
    /// The node's head at the last read.
    pub head: Option<u64>,
    /// Blocks behind that head: `head - ` the last block read.
    pub lag: Option<u64>,
    pub read_at: Option<Timestamp>,
    pub failing_since: Option<Timestamp>,
    /// Read within `unreachableAfterSecs` (or failing for less than that).
    pub ready: bool,
}

/// The rule: a chain is unreachable once no round has read it for `unreachable_after_secs`,
/// counted from the last read, else from the first failure. Never read and never failed (the
/// first round not done yet): ready.
pub fn chain_health(chain: &Chain, watch: Option<&ChainWatch>, now: Timestamp) -> ChainHealth {
    let since = watch.and_then(|w| w.read_at.or(w.failing_since));
    let limit = time::Duration::seconds(i64::try_from(chain.unreachable_after_secs).unwrap_or(0));
    let ready = since.is_none_or(|t| now < t.plus(limit));
    ChainHealth {
        chain_code: chain.chain_code.clone(),
        head: watch.and_then(|w| w.head),
        lag: watch.and_then(|w| Some(w.head?.saturating_sub(w.read_to?))),
        read_at: watch.and_then(|w| w.read_at),
        failing_since: watch.and_then(|w| w.failing_since),
        ready,
    }
}

/// The configured chains' health over the watchers' records.
#[derive(Clone)]
pub struct ChainMonitor {
    chains: Arc<Vec<Chain>>,
    store: Arc<dyn WatchStore>,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for ChainMonitor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChainMonitor")
            .field("chains", &self.chains.len())
            .finish_non_exhaustive()
    }
}

impl ChainMonitor {
    /// Over the configured chains, the watchers' store and real time.
    pub fn new(
        chains: Arc<Vec<Chain>>,
        store: Arc<dyn WatchStore>,
        clock: Arc<dyn Clock>,
    ) -> ChainMonitor {
        ChainMonitor {
            chains,
            store,
            clock,
        }
    }

    /// Each configured chain's health, in the file's order.
    pub fn health(&self) -> PortResult<Vec<ChainHealth>> {
        let now = self.clock.now();
        self.chains
            .iter()
            .map(|c| {
                let watch = self.store.watch_state(&c.chain_code)?;
                Ok(chain_health(c, watch.as_ref(), now))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(secs: u64) -> Chain {
        let text = format!(
            r#"[{{"chainCode": "base", "kind": "evm", "chainId": 8453, "rpcUrl": "http://node.example",
                 "unreachableAfterSecs": {secs},
                 "assets": [{{"assetIdentifier": "eip155:8453/slip44:60", "symbol": "ETH",
                              "name": "Ether", "decimals": 18, "usdPrice": "2500"}}]}}]"#
        );
        super::super::parse_chains(&text).unwrap().remove(0)
    }

    fn t(secs: i64) -> Timestamp {
        Timestamp::from_unix_millis(1_800_000_000_000 + secs * 1000).unwrap()
    }

    #[test]
    fn lag_and_the_unreachable_window() {
        let c = chain(60);
        assert!(chain_health(&c, None, t(0)).ready, "not read yet");
        let read = ChainWatch {
            head: Some(120),
            read_at: Some(t(0)),
            read_to: Some(100),
            failing_since: None,
        };
        let h = chain_health(&c, Some(&read), t(59));
        assert_eq!((h.head, h.lag, h.ready), (Some(120), Some(20), true));
        assert!(!chain_health(&c, Some(&read), t(60)).ready);
        // Failing from the start: counted from the first failure.
        let failing = ChainWatch {
            head: None,
            read_at: None,
            read_to: None,
            failing_since: Some(t(10)),
        };
        assert!(chain_health(&c, Some(&failing), t(69)).ready);
        assert!(!chain_health(&c, Some(&failing), t(70)).ready);
        let e = super::super::parse_chains(
            r#"[{"chainCode": "b", "kind": "evm", "chainId": 1, "rpcUrl": "http://node.example",
                 "unreachableAfterSecs": 0, "assets": [{"assetIdentifier": "eip155:1/slip44:60",
                 "symbol": "ETH", "name": "Ether", "decimals": 18, "usdPrice": "1"}]}]"#,
        )
        .unwrap_err();
        assert!(e.contains("unreachableAfterSecs"), "{e}");
    }
}

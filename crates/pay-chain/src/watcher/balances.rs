//! Native coin that reached a deposit address without a transaction of its own: a contract
//! forwarded it (an internal transfer, as exchanges and smart wallets pay). No top-level
//! transaction and no log shows it, so the watcher reads the address's balance at the last
//! final block of each round, for every watched native-coin address (open sessions, and ended
//! ones until their `lateWatchSecs` run out: a late payment), and takes an increase that the transactions of those blocks do not explain (coin in, minus coin and
//! fees out) as a deposit. A round's increase is split down to the block it happened in (by
//! halving the range, one balance read per step), so the deposit is keyed by its block,
//! `eip155:<chainId>:balance:<block>:<address>`: the same whatever range a round, a restart or
//! another instance reads. Final blocks only: it is final when seen. The transactions that
//! carried it are found in the block's call traces (`debug_traceBlockByNumber`), and each is
//! the company's `incoming` wallet activity, keyed `eip155:<chainId>:<txHash>:native` (the coin
//! that transaction moved into the address); a node without traces pays the session all the
//! same, and the activity is left out (logged).

use std::collections::{BTreeMap, HashMap};

use pay_domain::bookkeeping::{ActivityKey, ChainMovement, Direction};
use pay_domain::chains::rules::from_units;
use pay_domain::chains::DepositAddress;
use pay_domain::kernel::ids::PaymentSessionId;

use crate::rpc::RpcError;

use super::{blocking, Fetched, RoundError, Seen, Watcher};

/// The key of a native deposit seen only in the balance of `address` at `block`.
pub fn balance_key(chain_id: u64, block: u64, address: &str) -> String {
    format!(
        "eip155:{chain_id}:balance:{block}:{}",
        address.to_ascii_lowercase()
    )
}

impl Watcher {
    /// The internal native deposits to the watched native-coin addresses in the final blocks
    /// `from..=last_final` (read whole in `fetched`): those of open sessions and those of
    /// sessions that ended but are still watched (a late payment, or coin beyond a complete
    /// session's, which its session refuses and the wallet activity keeps).
    pub(super) async fn internal_deposits(
        &self,
        fetched: &Fetched,
        from: u64,
        last_final: u64,
        by_address: &HashMap<String, DepositAddress>,
    ) -> Result<Vec<Seen>, RoundError> {
        let Some(native) = self.chain.native() else {
            return Ok(Vec::new());
        };
        if from == 0 || !fetched.blocks.contains_key(&last_final) {
            return Ok(Vec::new());
        }
        let coin: Vec<&DepositAddress> = by_address
            .values()
            .filter(|a| {
                a.asset_identifier
                    .eq_ignore_ascii_case(&native.asset_identifier)
            })
            .collect();
        if coin.is_empty() {
            return Ok(Vec::new());
        }
        let mut seen = Vec::new();
        for a in coin {
            let address = a.address.to_ascii_lowercase();
            let flows = self.explained(fetched, &address, from, last_final).await?;
            let cached = self
                .balances
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(&address)
                .copied();
            let before = match cached {
                Some((block, wei)) if block == from - 1 => wei,
                _ => self.rpc.balance(&address, from - 1).await?,
            };
            let after = self.rpc.balance(&address, last_final).await?;
            self.balances
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(address.clone(), (last_final, after));
            for (block, units) in self
                .unexplained(&address, &flows, (from - 1, before), (last_final, after))
                .await?
            {
                let hash = fetched
                    .blocks
                    .get(&block)
                    .map(|b| b.hash.clone())
                    .unwrap_or_default();
                self.record_internal(a, &address, block).await?;
                seen.push(Seen {
                    session: a.session_id,
                    asset_identifier: a.asset_identifier.clone(),
                    units,
                    key: format!(
                        "{}@{hash}",
                        balance_key(self.chain.chain_id, block, &address)
                    ),
                    block,
                    tx_hash: None,
                    log_index: None,
                });
            }
        }
        Ok(seen)
    }

    /// Records the internal transfers to `address` in `block` as incoming wallet activity of
    /// its company, one per transaction (the coin it moved there, summed), from the block's
    /// call traces.
    async fn record_internal(
        &self,
        a: &DepositAddress,
        address: &str,
        block: u64,
    ) -> Result<(), RoundError> {
        let traced = match self.rpc.internal_transfers(block).await {
            Ok(t) => t,
            Err(e @ RpcError::Node { .. }) => {
                tracing::warn!(chain = %self.chain.chain_code, block, error = %e, "no call traces: coin a contract sent is counted for its session but not recorded as wallet activity");
                return Ok(());
            }
            Err(e) => return Err(e.into()),
        };
        let mut by_tx: BTreeMap<String, (String, u128)> = BTreeMap::new();
        for (tx, from, _, wei) in traced.into_iter().filter(|t| t.2 == address) {
            let entry = by_tx.entry(tx).or_insert((from, 0));
            entry.1 = entry.1.saturating_add(wei);
        }
        let Some(native) = self.chain.native() else {
            return Ok(());
        };
        let chain = format!("eip155:{}", self.chain.chain_id);
        let occurred_at = self.block_time(&mut BTreeMap::new(), block).await?;
        for (tx, (from, wei)) in by_tx {
            let (Some(amount), Ok(key)) = (
                from_units(wei, native.decimals),
                ActivityKey::native(&chain, &tx),
            ) else {
                continue;
            };
            let movement = ChainMovement {
                company_id: a.company_id,
                key,
                direction: Direction::Incoming,
                asset: native.asset_identifier.clone(),
                amount,
                wallet_address: a.eip55(),
                counterparty_address: from,
                occurred_at,
                payment_session_id: Some(PaymentSessionId(a.session_id)),
            };
            let pay = self.pay.clone();
            blocking(move || {
                pay.bookkeeping()
                    .record_chain_movement(movement)
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            })
            .await?;
        }
        Ok(())
    }

    /// What the transactions of each block moved for `address`: coin received by successful
    /// ones, minus coin sent by successful ones and the fees of all it sent (wei, by block).
    async fn explained(
        &self,
        fetched: &Fetched,
        address: &str,
        from: u64,
        last_final: u64,
    ) -> Result<BTreeMap<u64, i128>, RoundError> {
        let mut flows = BTreeMap::new();
        for (number, block) in fetched.blocks.range(from..=last_final) {
            for tx in &block.transactions {
                let incoming = tx.to.as_deref() == Some(address) && tx.value > 0;
                let outgoing = tx.from == address;
                if !incoming && !outgoing {
                    continue;
                }
                let Some((ok, fee)) = self.rpc.receipt(&tx.hash).await? else {
                    continue;
                };
                let value = if ok { wei(tx.value) } else { 0 };
                let mut net = 0i128;
                if incoming {
                    net += value;
                }
                if outgoing {
                    net -= value + wei(fee);
                }
                *flows.entry(*number).or_insert(0) += net;
            }
        }
        Ok(flows)
    }

    /// The blocks in `(lo, hi]` where the balance of `address` grew by more than `flows`
    /// explain, with that growth: the range is halved (one balance read each time) while it
    /// holds some, down to single blocks.
    async fn unexplained(
        &self,
        address: &str,
        flows: &BTreeMap<u64, i128>,
        lo: (u64, u128),
        hi: (u64, u128),
    ) -> Result<Vec<(u64, u128)>, RoundError> {
        let mut found = Vec::new();
        let mut ranges = vec![(lo, hi)];
        while let Some(((l, bl), (h, bh))) = ranges.pop() {
            let moved: i128 = flows.range(l + 1..=h).map(|(_, v)| *v).sum();
            let extra = wei(bh) - wei(bl) - moved;
            if extra <= 0 {
                continue;
            }
            if h == l + 1 {
                found.push((h, u128::try_from(extra).unwrap_or(0)));
                continue;
            }
            let mid = l + (h - l) / 2;
            let bm = self.rpc.balance(address, mid).await?;
            ranges.push(((l, bl), (mid, bm)));
            ranges.push(((mid, bm), (h, bh)));
        }
        found.sort_unstable();
        Ok(found)
    }
}

/// Wei as a signed amount (every balance there is fits).
fn wei(units: u128) -> i128 {
    i128::try_from(units).unwrap_or(i128::MAX)
}

#[cfg(test)]
mod tests {
    #[test]
    fn balance_keys_name_the_block_and_the_address() {
        assert_eq!(
            super::balance_key(31337, 12, "0xAbC"),
            "eip155:31337:balance:12:0xabc"
        );
    }
}

//! The merchants' wallet activity from the chain: once a block is final, every transfer of a
//! configured asset into or out of an address a company was ever handed (its deposit
//! addresses, watched or not) is recorded through bookkeeping: `incoming` (a payment, with its
//! session when it paid one in the session's asset) or `outgoing` (a sweep, a payout), keyed
//! `eip155:<chainId>:<txHash>:<logIndex>` (`native` for the coin a transaction carries).
//! Final blocks only, so a reorg within the confirmations leaves no false activity; each
//! final block is read once (the progress moves past it after its activity is recorded), and
//! a block read again (a crash before the progress was saved, another instance) records
//! nothing twice: the key is unique per company.

use std::collections::{BTreeMap, HashMap};

use pay_domain::bookkeeping::{ActivityKey, ChainMovement, Direction};
use pay_domain::chains::rules::from_units;
use pay_domain::chains::DepositAddress;
use pay_domain::kernel::ids::PaymentSessionId;
use pay_domain::kernel::timestamp::Timestamp;

use super::{blocking, Fetched, RoundError, Watcher};

/// A final transfer of a configured asset, before its addresses are known to be ours.
#[derive(Debug, Clone)]
struct Candidate {
    from: String,
    to: String,
    asset_identifier: String,
    decimals: u32,
    units: u128,
    tx_hash: String,
    /// `None`: the coin a transaction carries.
    log_index: Option<u64>,
    block: u64,
}

impl Watcher {
    /// Records the wallet activity of the final blocks fetched, up to `last_final`.
    pub(super) async fn record_movements(
        &self,
        fetched: &Fetched,
        last_final: u64,
    ) -> Result<(), RoundError> {
        let candidates = self.candidates(fetched, last_final);
        if candidates.is_empty() {
            return Ok(());
        }
        let mut addresses: Vec<String> = candidates
            .iter()
            .flat_map(|c| [c.from.clone(), c.to.clone()])
            .collect();
        addresses.sort();
        addresses.dedup();
        let store = self.store.clone();
        let handed = blocking(move || {
            store
                .handed_addresses(&addresses)
                .map_err(|e| e.to_string())
        })
        .await?;
        if handed.is_empty() {
            return Ok(());
        }
        let mut owners: HashMap<String, Vec<DepositAddress>> = HashMap::new();
        for a in handed {
            owners
                .entry(a.address.to_ascii_lowercase())
                .or_default()
                .push(a);
        }
        let mut times: BTreeMap<u64, u64> = fetched
            .blocks
            .iter()
            .map(|(n, b)| (*n, b.timestamp))
            .collect();
        for c in candidates {
            let sides = [
                (Direction::Incoming, &c.to, &c.from),
                (Direction::Outgoing, &c.from, &c.to),
            ];
            let ours: Vec<_> = sides
                .into_iter()
                .filter_map(|(d, wallet, other)| owners.get(wallet).map(|o| (d, o, other)))
                .collect();
            if ours.is_empty() {
                continue;
            }
            // A transaction that reverted moved no coin (its logs are gone with it).
            if c.log_index.is_none() && !self.rpc.succeeded(&c.tx_hash).await? {
                continue;
            }
            let Some(amount) = from_units(c.units, c.decimals) else {
                continue;
            };
            let occurred_at = self.block_time(&mut times, c.block).await?;
            let chain = format!("eip155:{}", self.chain.chain_id);
            let index = c.log_index.and_then(|i| u32::try_from(i).ok());
            let key = ActivityKey::with_index(&chain, &c.tx_hash, index)
                .map_err(|e| RoundError::Store(format!("a chain transfer key: {}", e.message)))?;
            for (direction, addresses, counterparty) in ours {
                // One activity per company (two companies may have set the same key).
                let mut companies = Vec::new();
                for a in addresses {
                    if companies.contains(&a.company_id) {
                        continue;
                    }
                    companies.push(a.company_id);
                    let paid = addresses.iter().find(|s| {
                        direction == Direction::Incoming
                            && s.company_id == a.company_id
                            && s.chain_code == self.chain.chain_code
                            && s.asset_identifier.eq_ignore_ascii_case(&c.asset_identifier)
                    });
                    let movement = ChainMovement {
                        company_id: a.company_id,
                        key: key.clone(),
                        direction,
                        asset: c.asset_identifier.clone(),
                        amount,
                        wallet_address: a.eip55(),
                        counterparty_address: counterparty.clone(),
                        occurred_at,
                        payment_session_id: paid.map(|s| PaymentSessionId(s.session_id)),
                    };
                    let pay = self.pay.clone();
                    blocking(move || {
                        pay.bookkeeping()
                            .record_chain_movement(movement)
                            .map_err(|e| e.to_string())
                    })
                    .await?;
                }
            }
        }
        Ok(())
    }

    /// The final transfers of configured assets in the fetched blocks up to `last_final`.
    fn candidates(&self, fetched: &Fetched, last_final: u64) -> Vec<Candidate> {
        let mut out = Vec::new();
        for t in fetched
            .transfers
            .iter()
            .filter(|t| t.block_number <= last_final)
        {
            let Some(asset) = self.chain.token(&t.token) else {
                continue;
            };
            out.push(Candidate {
                from: t.from.clone(),
                to: t.to.clone(),
                asset_identifier: asset.asset_identifier.clone(),
                decimals: asset.decimals,
                units: t.units,
                tx_hash: t.tx_hash.clone(),
                log_index: Some(t.log_index),
                block: t.block_number,
            });
        }
        if let Some(native) = self.chain.native() {
            for (number, block) in fetched.blocks.range(..=last_final) {
                for tx in block.transactions.iter().filter(|t| t.value > 0) {
                    let Some(to) = &tx.to else {
                        continue;
                    };
                    out.push(Candidate {
                        from: tx.from.clone(),
                        to: to.clone(),
                        asset_identifier: native.asset_identifier.clone(),
                        decimals: native.decimals,
                        units: tx.value,
                        tx_hash: tx.hash.clone(),
                        log_index: None,
                        block: *number,
                    });
                }
            }
        }
        out
    }

    /// The time of block `number` (from the blocks read, else asked once).
    pub(super) async fn block_time(
        &self,
        times: &mut BTreeMap<u64, u64>,
        number: u64,
    ) -> Result<Timestamp, RoundError> {
        let secs = match times.get(&number) {
            Some(t) => *t,
            None => {
                let t = self.rpc.block_header(number).await?.map_or(0, |(_, t)| t);
                times.insert(number, t);
                t
            }
        };
        let ms = i64::try_from(secs.saturating_mul(1000)).unwrap_or(i64::MAX);
        Timestamp::from_unix_millis(ms)
            .ok_or_else(|| RoundError::Store(format!("block {number}: bad time {secs}")))
    }
}

//! The chain watcher: one per configured chain across every instance (a lease in the
//! database), polling its node for new blocks. Each round reads the blocks after the stored
//! progress up to the head: `Transfer` logs of the chain's tokens (`eth_getLogs`) and the
//! blocks' transactions for the native coin, matched to the deposit addresses still watched.
//! A transfer seen moves its session to `processing`; once every transfer of a session has its
//! confirmations the session settles. The progress stored is the last final block, so the
//! blocks not yet final are read again each round (what they hold is applied once, by the
//! transfer's key) and a restart, a crash or another instance taking over resumes there.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use pay_domain::app::Pay;
use pay_domain::chains::ports::WatchStore;
use pay_domain::chains::rules::{find_fork, from_units, transfer_key};
use pay_domain::chains::{Chain, ChainAssetKind, DepositAddress};
use pay_domain::checkout::{ChainTransfer, CheckoutError};
use pay_domain::kernel::ids::PaymentSessionId;
use pay_domain::kernel::timestamp::Timestamp;

use crate::rpc::{Block, Log, RpcClient, RpcError, TokenTransfer};

mod balances;
mod movements;

/// At most this many blocks are read in one round (a watcher catching up goes round by round).
pub const MAX_BLOCKS_PER_ROUND: u64 = 500;
/// The longest wait after failed rounds (the wait doubles from the poll interval).
pub const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// How many read blocks are kept beyond the confirmations, to find where a reorg forked.
pub const KEEP_EXTRA_BLOCKS: u64 = 16;

/// Why a round stopped (it is retried after a back-off).
#[derive(Debug, thiserror::Error)]
pub enum RoundError {
    #[error(transparent)]
    Rpc(#[from] RpcError),
    #[error("storage: {0}")]
    Store(String),
}

/// A transfer to a watched address.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    session: uuid::Uuid,
    asset_identifier: String,
    units: u128,
    /// `eip155:<chainId>:<txHash>:<logIndex>` and the block it is in: a transfer that a reorg
    /// moves into another block is seen again there.
    key: String,
    block: u64,
    /// The transaction; `None` for coin seen only in the address's balance (sent by a
    /// contract), which the session's transfers cannot list.
    tx_hash: Option<String>,
    /// `None` for a native coin transfer.
    log_index: Option<u64>,
}

/// What the blocks of a round hold.
#[derive(Debug, Default)]
struct Fetched {
    /// The configured tokens' transfers.
    transfers: Vec<TokenTransfer>,
    /// The blocks read whole (with their transactions), by number.
    blocks: BTreeMap<u64, Block>,
}

/// The watcher of one chain.
#[derive(Clone)]
pub struct Watcher {
    chain: Arc<Chain>,
    rpc: RpcClient,
    store: Arc<dyn WatchStore>,
    pay: Pay,
    /// This process's name in the lease.
    holder: String,
    /// The sessions whose transfers were not final at the last round: one that has no
    /// transfer on the chain any more left it (a reorg).
    unconfirmed: Arc<std::sync::Mutex<std::collections::BTreeSet<uuid::Uuid>>>,
    /// The last balance read of each native-coin address (block, wei), so the next round reads
    /// one balance, not two.
    balances: Arc<std::sync::Mutex<HashMap<String, (u64, u128)>>>,
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watcher")
            .field("chain", &self.chain.chain_code)
            .finish_non_exhaustive()
    }
}

fn now() -> Timestamp {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    Timestamp::from_unix_millis(ms).unwrap_or_else(|| Timestamp::from_unix_millis(0).expect("0"))
}

/// Runs a store or use-case step on the blocking pool.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, RoundError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| RoundError::Store(e.to_string()))?
        .map_err(RoundError::Store)
}

impl Watcher {
    pub fn new(
        chain: Chain,
        store: Arc<dyn WatchStore>,
        pay: Pay,
        holder: &str,
    ) -> Result<Watcher, RpcError> {
        let rpc = RpcClient::new(&chain.rpc_url, Duration::from_secs(10))?;
        Ok(Watcher {
            chain: Arc::new(chain),
            rpc,
            store,
            pay,
            holder: holder.to_owned(),
            unconfirmed: Arc::default(),
            balances: Arc::default(),
        })
    }

    fn poll_interval(&self) -> Duration {
        Duration::from_millis(self.chain.poll_interval_ms)
    }

    /// How long a lease holds: ten polls, at least 10 s (another instance takes over after it).
    fn lease(&self) -> time::Duration {
        let ms = (self.chain.poll_interval_ms * 10).max(10_000);
        time::Duration::milliseconds(i64::try_from(ms).unwrap_or(i64::MAX))
    }

    /// Polls until the process ends; a failed round is logged and retried after a back-off
    /// (doubling from the poll interval up to `MAX_BACKOFF`).
    pub async fn run(self) {
        let mut wait = self.poll_interval();
        loop {
            match self.round().await {
                Ok(_) => wait = self.poll_interval(),
                Err(e) => {
                    if matches!(e, RoundError::Rpc(_)) {
                        self.record(None).await;
                    }
                    wait = (wait * 2).min(MAX_BACKOFF).max(self.poll_interval());
                    tracing::warn!(chain = %self.chain.chain_code, error = %e, retry_in_ms = wait.as_millis() as u64, "chain watcher round failed");
                }
            }
            tokio::time::sleep(wait).await;
        }
    }

    /// Records a round for `/readyz` (every instance reads it): the node's head and the last
    /// block read, or (`None`) a failure of the node. A storage error here is only logged.
    async fn record(&self, read: Option<(u64, u64)>) {
        let (store, code, at) = (self.store.clone(), self.chain.chain_code.clone(), now());
        let recorded = blocking(move || {
            match read {
                Some((head, to)) => store.record_read(&code, head, to, at),
                None => store.record_failure(&code, at),
            }
            .map_err(|e| e.to_string())
        })
        .await;
        if let Err(e) = recorded {
            tracing::warn!(chain = %self.chain.chain_code, error = %e, "recording the chain's health failed");
        }
    }

    /// One round: the lease, then the blocks after the progress up to the head. The number of
    /// transfers seen (`None` when another instance holds the chain).
    pub async fn round(&self) -> Result<Option<usize>, RoundError> {
        let store = self.store.clone();
        let (code, holder) = (self.chain.chain_code.clone(), self.holder.clone());
        let at = now();
        let until = at.plus(self.lease());
        let held = blocking(move || {
            store
                .claim_chain_lease(&code, &holder, at, until)
                .map_err(|e| e.to_string())
        })
        .await?;
        if !held {
            return Ok(None);
        }
        let head = self.rpc.block_number().await?;
        let required = u64::from(self.chain.confirmations);
        let store = self.store.clone();
        let code = self.chain.chain_code.clone();
        let kept = blocking(move || store.recent_blocks(&code).map_err(|e| e.to_string())).await?;
        let from = match kept.last() {
            Some((number, hash)) => {
                if self.rpc.block_hash(*number).await?.as_deref() != Some(hash.as_str()) {
                    self.rewind(&kept).await?;
                    return Ok(Some(0));
                }
                number + 1
            }
            // The first round: the blocks that may still hold a transfer not yet final.
            None => head.saturating_sub(required),
        };
        if from > head {
            self.record(Some((head, from - 1))).await;
            return Ok(Some(0));
        }
        let to = head.min(from + MAX_BLOCKS_PER_ROUND - 1);
        let final_to = (head + 1).checked_sub(required);
        let store = self.store.clone();
        let code = self.chain.chain_code.clone();
        let watched = blocking(move || {
            store
                .watched_addresses(&code, at)
                .map_err(|e| e.to_string())
        })
        .await?;
        let by_address: HashMap<String, DepositAddress> = watched
            .into_iter()
            .map(|a| (a.address.to_ascii_lowercase(), a))
            .collect();
        let native_watched = self.chain.native().is_some_and(|n| {
            by_address
                .values()
                .any(|a| a.asset_identifier.eq_ignore_ascii_case(&n.asset_identifier))
        });
        let fetched = self.fetch(from, to, final_to, native_watched).await?;
        let mut seen = self.read(&fetched, &by_address).await?;
        if let Some(last_final) = final_to.map(|f| f.min(to)).filter(|d| *d >= from) {
            if native_watched {
                let internal = self
                    .internal_deposits(&fetched, from, last_final, &by_address)
                    .await?;
                seen.extend(internal);
                seen.sort_by_key(|s| s.block);
            }
        }
        let count = seen.len();
        self.apply(seen, head).await?;
        // The progress: the last final block read, once its money moves are recorded.
        if let Some(done) = final_to.map(|f| f.min(to)).filter(|d| *d >= from) {
            self.record_movements(&fetched, done).await?;
            let hash = match fetched.blocks.get(&done) {
                Some(b) => b.hash.clone(),
                None => self.rpc.block_hash(done).await?.unwrap_or_default(),
            };
            let store = self.store.clone();
            let code = self.chain.chain_code.clone();
            let keep = required + KEEP_EXTRA_BLOCKS;
            blocking(move || {
                store
                    .save_block(&code, done, &hash, keep)
                    .map_err(|e| e.to_string())
            })
            .await?;
        }
        self.record(Some((head, to))).await;
        Ok(Some(count))
    }

    /// What blocks `from..=to` hold for the watcher: the configured tokens' `Transfer` logs,
    /// and, when the chain has a native coin, the blocks with their transactions (all of them
    /// while a native-coin session is watched, else the final ones up to `final_to`, for the
    /// coin sent out of the merchants' addresses).
    async fn fetch(
        &self,
        from: u64,
        to: u64,
        final_to: Option<u64>,
        native_watched: bool,
    ) -> Result<Fetched, RoundError> {
        let tokens: Vec<String> = self
            .chain
            .assets
            .iter()
            .filter_map(|a| match &a.kind {
                ChainAssetKind::Erc20 { contract } => Some(contract.clone()),
                ChainAssetKind::Native => None,
            })
            .collect();
        let mut fetched = Fetched::default();
        if !tokens.is_empty() {
            let logs = self.rpc.transfer_logs(from, to, &tokens).await?;
            fetched.transfers = logs.iter().filter_map(Log::token_transfer).collect();
        }
        let last = match (self.chain.native(), native_watched) {
            (None, _) => None,
            (Some(_), true) => Some(to),
            (Some(_), false) => final_to.map(|f| f.min(to)),
        };
        if let Some(last) = last {
            for number in from..=last {
                let Some(block) = self.rpc.block(number).await? else {
                    break;
                };
                fetched.blocks.insert(number, block);
            }
        }
        Ok(fetched)
    }

    /// The transfers to watched addresses among what was fetched.
    async fn read(
        &self,
        fetched: &Fetched,
        by_address: &HashMap<String, DepositAddress>,
    ) -> Result<Vec<Seen>, RoundError> {
        let mut seen = Vec::new();
        if by_address.is_empty() {
            return Ok(seen);
        }
        let chain_id = self.chain.chain_id;
        for t in &fetched.transfers {
            let Some(address) = by_address.get(&t.to) else {
                continue;
            };
            let asset = self.chain.token(&t.token);
            if asset.is_none_or(|a| {
                !a.asset_identifier
                    .eq_ignore_ascii_case(&address.asset_identifier)
            }) {
                continue;
            }
            seen.push(Seen {
                session: address.session_id,
                asset_identifier: address.asset_identifier.clone(),
                units: t.units,
                key: format!(
                    "{}@{}",
                    transfer_key(chain_id, &t.tx_hash, Some(t.log_index)),
                    t.block_hash
                ),
                block: t.block_number,
                tx_hash: Some(t.tx_hash.to_ascii_lowercase()),
                log_index: Some(t.log_index),
            });
        }
        let native = self.chain.native().map(|a| a.asset_identifier.clone());
        for (number, block) in &fetched.blocks {
            for tx in block.transactions.iter().filter(|t| t.value > 0) {
                let Some(address) = tx.to.as_ref().and_then(|to| by_address.get(to)) else {
                    continue;
                };
                if native.as_deref() != Some(address.asset_identifier.as_str())
                    || !self.rpc.succeeded(&tx.hash).await?
                {
                    continue;
                }
                seen.push(Seen {
                    session: address.session_id,
                    asset_identifier: address.asset_identifier.clone(),
                    units: tx.value,
                    key: format!("{}@{}", transfer_key(chain_id, &tx.hash, None), block.hash),
                    block: *number,
                    tx_hash: Some(tx.hash.to_ascii_lowercase()),
                    log_index: None,
                });
            }
        }
        seen.sort_by_key(|s| s.block);
        Ok(seen)
    }

    /// Applies the transfers: each seen one to its session, the transfers each session shows
    /// with their confirmations at `head`, then a settlement for each session whose transfers
    /// are all final.
    async fn apply(&self, seen: Vec<Seen>, head: u64) -> Result<(), RoundError> {
        let required = u64::from(self.chain.confirmations);
        let confirmations = |block: u64| (head + 1).saturating_sub(block).min(required);
        let is_final = |block: u64| confirmations(block) >= required;
        // Per session: the key of its last final transfer, and whether one is not final yet.
        let mut sessions: BTreeMap<uuid::Uuid, (Option<String>, bool)> = BTreeMap::new();
        let mut shown: BTreeMap<uuid::Uuid, Vec<ChainTransfer>> = BTreeMap::new();
        for s in &seen {
            let Some(decimals) = self.chain.asset(&s.asset_identifier).map(|a| a.decimals) else {
                continue;
            };
            let Some(amount) = from_units(s.units, decimals) else {
                tracing::warn!(chain = %self.chain.chain_code, key = %s.key, "a transfer too large to count; ignored");
                continue;
            };
            let (pay, id, key) = (self.pay.clone(), PaymentSessionId(s.session), s.key.clone());
            let done = is_final(s.block);
            let applied =
                blocking(move || Ok(pay.checkout().chain_transfer_seen(id, amount, &key, done)))
                    .await?;
            if !self.applied(applied, &s.key)? {
                continue;
            }
            if let Some(tx_hash) = &s.tx_hash {
                shown.entry(s.session).or_default().push(ChainTransfer {
                    tx_hash: tx_hash.clone(),
                    log_index: s.log_index,
                    amount,
                    block_number: s.block,
                    confirmations: confirmations(s.block),
                });
            }
            let entry = sessions.entry(s.session).or_insert((None, false));
            if is_final(s.block) {
                entry.0 = Some(s.key.clone());
            } else {
                entry.1 = true;
            }
        }
        // A session confirming transfers at the last round that has none on the chain now:
        // they left it before their confirmations.
        let before =
            std::mem::take(&mut *self.unconfirmed.lock().unwrap_or_else(|e| e.into_inner()));
        for gone in before.iter().filter(|s| !sessions.contains_key(s)) {
            tracing::warn!(chain = %self.chain.chain_code, session = %gone, "the transfers of a session left the chain before their confirmations");
            let (pay, id) = (self.pay.clone(), PaymentSessionId(*gone));
            let left =
                blocking(move || Ok(pay.checkout().chain_transfers_left(id, required))).await?;
            self.applied(left, "reorg")?;
            shown.entry(*gone).or_default();
        }
        // What each session shows: its final transfers and those seen now.
        for (session, transfers) in shown {
            let (pay, id) = (self.pay.clone(), PaymentSessionId(session));
            let observed = blocking(move || {
                Ok(pay
                    .checkout()
                    .chain_transfers_observed(id, &transfers, required))
            })
            .await?;
            self.applied(observed, "transfers")?;
        }
        let still: std::collections::BTreeSet<uuid::Uuid> = sessions
            .iter()
            .filter(|(_, (_, pending))| *pending)
            .map(|(s, _)| *s)
            .collect();
        *self.unconfirmed.lock().unwrap_or_else(|e| e.into_inner()) = still;
        for (session, (last_final, pending)) in sessions {
            let Some(key) = last_final.filter(|_| !pending) else {
                continue;
            };
            let (pay, id, k) = (self.pay.clone(), PaymentSessionId(session), key.clone());
            let settled =
                blocking(move || Ok(pay.checkout().chain_transfers_final(id, &k))).await?;
            self.applied(settled, &key)?;
        }
        Ok(())
    }

    /// Whether a use case took the transfer; a refusal (a session that cannot take it, such as
    /// one already complete) is logged and skipped, a fault stops the round.
    fn applied<T>(&self, r: Result<T, CheckoutError>, key: &str) -> Result<bool, RoundError> {
        match r {
            Ok(_) => Ok(true),
            Err(CheckoutError::Fault(f)) => Err(RoundError::Store(f.to_string())),
            Err(e) => {
                tracing::warn!(chain = %self.chain.chain_code, %key, refusal = %e, "a transfer its session cannot take");
                Ok(false)
            }
        }
    }

    /// The stored progress is not on the node's chain any more: rewinds to the highest kept
    /// block that still is (reading resumes after it). Deeper than the confirmations, a final
    /// transfer may have moved: logged as an error.
    async fn rewind(&self, kept: &[(u64, String)]) -> Result<(), RoundError> {
        let mut node = HashMap::new();
        for (number, _) in kept {
            node.insert(*number, self.rpc.block_hash(*number).await?);
        }
        let fork = find_fork(kept, |n| node.get(&n).cloned().flatten());
        // Balances read at blocks that left the chain are no longer the chain's.
        self.balances
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        if fork.beyond_confirmations {
            tracing::error!(chain = %self.chain.chain_code, depth = fork.depth, common = ?fork.common, "REORG DEEPER THAN THE CONFIRMATIONS: final transfers may have left the chain");
        } else {
            tracing::warn!(chain = %self.chain.chain_code, depth = fork.depth, common = ?fork.common, "reorg: reading again from the fork");
        }
        let store = self.store.clone();
        let code = self.chain.chain_code.clone();
        blocking(move || store.rewind(&code, fork.common).map_err(|e| e.to_string())).await
    }
}

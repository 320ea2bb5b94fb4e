//! What the chain processor needs from storage: the merchants' keys with their next index, the
//! sessions' deposit addresses, and the watcher's progress, recent blocks and lease per chain.

use crate::kernel::error::PortResult;
use crate::kernel::ids::CompanyId;
use crate::kernel::timestamp::Timestamp;

use super::model::{AddressRequest, DepositAddress, StoredWallet};

/// Derives the EIP-55 address of child `0/<index>` of an extended public key (`None` when BIP32
/// cannot derive it: the allocation then takes the next index).
pub type Derive<'a> = &'a dyn Fn(&str, u32) -> Option<String>;

/// The merchants' EVM keys and the addresses handed out.
pub trait WalletStore: Send + Sync {
    /// Makes `xpub` the company's current key. Its `next_index` is one past the highest child
    /// this company was handed from this key (0 for a key it never used). Children are taken
    /// from one counter per key, shared by every company that sets it: an address is never
    /// handed out twice, not even to two companies with the same key.
    /// Keeps `created_at` of an existing wallet.
    fn put_wallet(
        &self,
        company: CompanyId,
        xpub: &str,
        fingerprint: &str,
        at: Timestamp,
    ) -> PortResult<StoredWallet>;

    /// The company's current key, `None` when it has none.
    fn wallet(&self, company: CompanyId) -> PortResult<Option<StoredWallet>>;

    /// Removes the current key (the indices used stay remembered); false when there was none.
    fn delete_wallet(&self, company: CompanyId) -> PortResult<bool>;

    /// The session's deposit address: the one it already has (same request again), else the
    /// next index of the company's current key, taken atomically from the key's counter (two
    /// instances, or two companies with the same key, never take the same index) and stored with the session in the same transaction. `None` when the company
    /// has no key.
    fn assign_address(
        &self,
        request: &AddressRequest,
        derive: Derive<'_>,
    ) -> PortResult<Option<DepositAddress>>;

    /// The address of a session, if it has one.
    fn session_address(&self, session: uuid::Uuid) -> PortResult<Option<DepositAddress>>;
}

/// The watcher's state per chain, shared by every instance.
pub trait WatchStore: Send + Sync {
    /// Takes or renews the chain's lease for `holder` until `until` when it is free, expired
    /// (`<= now`) or already `holder`'s; false when another holder has it.
    fn claim_chain_lease(
        &self,
        chain_code: &str,
        holder: &str,
        now: Timestamp,
        until: Timestamp,
    ) -> PortResult<bool>;

    /// The kept recent blocks `(number, hash)`, highest last; empty before the first block.
    fn recent_blocks(&self, chain_code: &str) -> PortResult<Vec<(u64, String)>>;

    /// Records block `number` with `hash` as read (the new progress) and forgets kept blocks
    /// below `number - keep`.
    fn save_block(&self, chain_code: &str, number: u64, hash: &str, keep: u64) -> PortResult<()>;

    /// Forgets the kept blocks above `common` (all of them when `None`): reading resumes
    /// after `common`.
    fn rewind(&self, chain_code: &str, common: Option<u64>) -> PortResult<()>;

    /// The deposit addresses on `chain_code` still watched at `now` (`watch_until > now`).
    fn watched_addresses(
        &self,
        chain_code: &str,
        now: Timestamp,
    ) -> PortResult<Vec<DepositAddress>>;

    /// Every deposit address ever handed out (any chain, watched or not) among `addresses`
    /// (lower case): the merchants' addresses that a transfer moved funds into or out of.
    fn handed_addresses(&self, addresses: &[String]) -> PortResult<Vec<DepositAddress>>;

    /// A round read the node: its head, the last block read (`read_to`), at `at`; clears a
    /// failure. Every instance's `/readyz` reads it.
    fn record_read(
        &self,
        chain_code: &str,
        head: u64,
        read_to: u64,
        at: Timestamp,
    ) -> PortResult<()>;

    /// A round failed on the node at `at` (the first failure since the last read is kept).
    fn record_failure(&self, chain_code: &str, at: Timestamp) -> PortResult<()>;

    /// What the watchers recorded of the chain, `None` before its first round.
    fn watch_state(&self, chain_code: &str) -> PortResult<Option<super::model::ChainWatch>>;
}

//! The merchant's EVM wallet as stored, as shown, and the deposit addresses derived from it.

use crate::kernel::ids::CompanyId;
use crate::kernel::timestamp::Timestamp;

/// How many first addresses the wallet's answer lists, for the merchant to check against the
/// wallet.
pub const FIRST_ADDRESSES: u32 = 3;

/// The company's current extended public key for the EVM family.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredWallet {
    pub company_id: CompanyId,
    /// As the merchant gave it (a public key: `Xpub::parse` accepted it).
    pub xpub: String,
    pub fingerprint: String,
    /// Children `0/0 .. 0/(next_index - 1)` of this key have been handed out (maybe some to
    /// another company with the same key); this company was handed none from `next_index` on.
    pub next_index: u32,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// The wallet with what the merchant checks: the first addresses (EIP-55) of `0/*`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalletView {
    pub wallet: StoredWallet,
    pub first_addresses: Vec<String>,
}

/// What a session asks for: the next child of its company's current key, watched on `chain_code`
/// until `watch_until`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddressRequest {
    pub company_id: CompanyId,
    pub session_id: uuid::Uuid,
    pub chain_code: String,
    pub asset_identifier: String,
    pub at: Timestamp,
    pub watch_until: Timestamp,
}

/// A session's deposit address: the child `0/<index>` of the company's key at the time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DepositAddress {
    pub company_id: CompanyId,
    pub session_id: uuid::Uuid,
    pub chain_code: String,
    pub asset_identifier: String,
    pub xpub: String,
    pub index: u32,
    /// EIP-55.
    pub address: String,
    pub created_at: Timestamp,
    pub watch_until: Timestamp,
}

/// What the watchers recorded of a chain (in the database: every instance sees it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainWatch {
    /// The node's head at the last read.
    pub head: Option<u64>,
    /// When a round last read the node.
    pub read_at: Option<Timestamp>,
    /// The last block read then.
    pub read_to: Option<u64>,
    /// The first failed round since the last read.
    pub failing_since: Option<Timestamp>,
}

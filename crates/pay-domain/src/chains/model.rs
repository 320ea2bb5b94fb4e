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
    /// `0x` and 40 hex digits, as the store keeps it (the SQL stores keep lower case, for
    /// matching): [`DepositAddress::eip55`] spells it for people.
    pub address: String,
    pub created_at: Timestamp,
    pub watch_until: Timestamp,
}

impl DepositAddress {
    /// The address in its EIP-55 spelling, whatever case the store kept it in.
    pub fn eip55(&self) -> String {
        let hex = self.address.trim_start_matches("0x").to_ascii_lowercase();
        format!("0x{}", crate::kernel::address::eip55(&hex))
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(address: &str) -> DepositAddress {
        DepositAddress {
            company_id: CompanyId(uuid::Uuid::nil()),
            session_id: uuid::Uuid::nil(),
            chain_code: "local".into(),
            asset_identifier: "eip155:31337/slip44:60".into(),
            xpub: String::new(),
            index: 0,
            address: address.into(),
            created_at: Timestamp::from_unix_millis(0).unwrap(),
            watch_until: Timestamp::from_unix_millis(0).unwrap(),
        }
    }

    #[test]
    fn a_kept_address_is_spelled_eip55_whatever_its_case() {
        // Anvil's first development account, as its wallets spell it.
        let spelled = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
        for kept_as in [spelled.to_ascii_lowercase(), spelled.to_owned()] {
            assert_eq!(kept(&kept_as).eip55(), spelled);
        }
    }
}

//! Wallet activity: each chain movement of a merchant's settlement wallets, keyed by chain,
//! transaction hash and log/output index, and the filters of its list.

use std::fmt;

use crate::kernel::amount::{Amount, Decimal};
use crate::kernel::assets::AssetCatalogue;
use crate::kernel::error::FieldError;
use crate::kernel::ids::{CompanyId, PaymentSessionId, WalletActivityId};
use crate::kernel::timestamp::Timestamp;

/// Most activities a list answers with (newest first), as for links.
pub const ACTIVITY_LIST_LIMIT: usize = 200;
/// Longest chain id, transaction hash or address we keep.
const MAX_CHAIN_TEXT: usize = 128;

/// Which way funds moved, seen from the merchant's wallet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    Incoming,
    Outgoing,
}

impl Direction {
    pub const ALL: [Direction; 2] = [Direction::Incoming, Direction::Outgoing];

    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Incoming => "incoming",
            Direction::Outgoing => "outgoing",
        }
    }

    pub fn parse(s: &str) -> Option<Direction> {
        Direction::ALL.into_iter().find(|d| d.as_str() == s)
    }
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A transaction hash as compared (the same rule as wallet addresses: `0x` hex lower-cased).
pub fn chain_text_key(s: &str) -> String {
    crate::customers::wallet_key(s)
}

/// The stable key of one movement: `<chain>:<tx hash>:<log or output index>`, e.g.
/// `eip155:1:0xabc...:3`, or `native` in place of the index for an EVM chain's coin moved by
/// the transaction itself (`eip155:1:0xabc...:native`). The chain is CAIP-2 (it has a colon
/// itself), so the key is read from the right. Unique per company.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ActivityKey {
    chain: String,
    tx_hash: String,
    index: Option<u32>,
}

/// The index part of a key that names a transaction's native coin value.
pub const NATIVE_INDEX: &str = "native";

impl ActivityKey {
    /// Checks the three parts: a CAIP-2 chain (`namespace:reference`), a hash of
    /// alphanumerics (an EVM `0x` hash lower-cased), an index.
    pub fn new(chain: &str, tx_hash: &str, index: u32) -> Result<ActivityKey, FieldError> {
        ActivityKey::with_index(chain, tx_hash, Some(index))
    }

    /// The key of the native coin value of transaction `tx_hash` (index `native`).
    pub fn native(chain: &str, tx_hash: &str) -> Result<ActivityKey, FieldError> {
        ActivityKey::with_index(chain, tx_hash, None)
    }

    /// A log/output index, or `None` for the native coin value.
    pub fn with_index(
        chain: &str,
        tx_hash: &str,
        index: Option<u32>,
    ) -> Result<ActivityKey, FieldError> {
        let ok_part = |p: &str| {
            !p.is_empty()
                && p.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        };
        match chain.split_once(':') {
            Some((ns, reference))
                if chain.len() <= MAX_CHAIN_TEXT && ok_part(ns) && ok_part(reference) => {}
            _ => {
                return Err(FieldError::new(
                    "chain",
                    "chain must be a CAIP-2 chain id such as eip155:1",
                ))
            }
        }
        // Checked as given (no trimming), then keyed.
        if !tx_hash.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(FieldError::new(
                "txHash",
                "txHash must be the transaction hash (letters and digits)",
            ));
        }
        let hash = chain_text_key(tx_hash);
        if hash.is_empty()
            || hash.len() > MAX_CHAIN_TEXT
            || !hash.bytes().all(|b| b.is_ascii_alphanumeric())
        {
            return Err(FieldError::new(
                "txHash",
                "txHash must be the transaction hash (letters and digits)",
            ));
        }
        Ok(ActivityKey {
            chain: chain.to_owned(),
            tx_hash: hash,
            index,
        })
    }

    /// Reads `<chain>:<tx hash>:<index>`; `None` when it is not one.
    pub fn parse(s: &str) -> Option<ActivityKey> {
        let mut parts = s.rsplitn(3, ':');
        let index = match parts.next()? {
            NATIVE_INDEX => None,
            i => Some(i.parse::<u32>().ok()?),
        };
        let hash = parts.next()?;
        let chain = parts.next()?;
        let key = ActivityKey::with_index(chain, hash, index).ok()?;
        // Only the canonical spelling names an activity.
        (key.to_string() == s).then_some(key)
    }

    pub fn chain(&self) -> &str {
        &self.chain
    }

    pub fn tx_hash(&self) -> &str {
        &self.tx_hash
    }

    /// The log/output index; `None` for a native coin value (`native`).
    pub fn index(&self) -> Option<u32> {
        self.index
    }
}

impl fmt::Display for ActivityKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.index {
            Some(i) => write!(f, "{}:{}:{}", self.chain, self.tx_hash, i),
            None => write!(f, "{}:{}:{NATIVE_INDEX}", self.chain, self.tx_hash),
        }
    }
}

/// One movement of a merchant's settlement wallet, as the processor reported it.
#[derive(Debug, Clone, PartialEq)]
pub struct WalletActivity {
    pub id: WalletActivityId,
    pub company_id: CompanyId,
    pub key: ActivityKey,
    pub direction: Direction,
    /// Asset identifier (CAIP-19) from the catalogue.
    pub asset: String,
    /// Exact, positive, at most the asset's decimals.
    pub amount: Decimal,
    /// The merchant's wallet.
    pub wallet_address: String,
    /// The other side: who paid (incoming) or who was paid (outgoing).
    pub counterparty_address: String,
    pub occurred_at: Timestamp,
    /// The settled payment session (incoming activity from checkout).
    pub payment_session_id: Option<PaymentSessionId>,
    pub recorded_at: Timestamp,
}

/// A final transfer into or out of one of the merchant's derived addresses, as the chain
/// watcher read it (the onchain processor's wallet view).
#[derive(Debug, Clone, PartialEq)]
pub struct ChainMovement {
    pub company_id: CompanyId,
    pub key: ActivityKey,
    pub direction: Direction,
    /// Asset identifier (CAIP-19) of a configured chain asset.
    pub asset: String,
    pub amount: Decimal,
    /// The derived address (EIP-55).
    pub wallet_address: String,
    pub counterparty_address: String,
    /// The block's time.
    pub occurred_at: Timestamp,
    /// Incoming to a session's deposit address, in its asset: that session.
    pub payment_session_id: Option<PaymentSessionId>,
}

/// What became of recording an activity.
#[derive(Debug, Clone, PartialEq)]
pub enum Recorded {
    /// A new activity.
    Created(WalletActivity),
    /// The company already had an activity with this key: the stored one, unchanged.
    Existing(WalletActivity),
}

impl Recorded {
    pub fn activity(&self) -> &WalletActivity {
        match self {
            Recorded::Created(a) | Recorded::Existing(a) => a,
        }
    }

    pub fn was_created(&self) -> bool {
        matches!(self, Recorded::Created(_))
    }
}

/// An outgoing transfer as the processor's wallet view reports it (the sandbox route's body).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OutgoingTransferInput {
    pub chain: String,
    pub tx_hash: String,
    pub log_index: u32,
    pub asset: String,
    pub amount: String,
    pub to_address: String,
    /// Defaults to now on the company's clock.
    pub occurred_at: Option<Timestamp>,
}

/// A checked outgoing transfer.
#[derive(Debug, Clone, PartialEq)]
pub struct OutgoingTransfer {
    pub key: ActivityKey,
    pub asset: String,
    pub amount: Decimal,
    pub to_address: String,
    pub occurred_at: Option<Timestamp>,
}

/// An address on a chain: one line of letters and digits, at most 128 characters.
pub fn check_address(field: &str, a: &str) -> Result<String, FieldError> {
    if a.is_empty() || a.len() > MAX_CHAIN_TEXT || !a.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return Err(FieldError::new(
            field,
            format!("{field} must be a chain address (letters and digits)"),
        ));
    }
    Ok(a.to_owned())
}

impl OutgoingTransferInput {
    /// The key's parts, an asset of the catalogue on that chain, a positive amount within the
    /// asset's decimals, an address.
    pub fn check(self, assets: &AssetCatalogue) -> Result<OutgoingTransfer, FieldError> {
        let key = ActivityKey::new(&self.chain, &self.tx_hash, self.log_index)?;
        let asset = assets
            .get(&self.asset)
            .ok_or_else(|| FieldError::new("asset", "asset is not a known asset identifier"))?;
        if !asset
            .asset_identifier
            .starts_with(&format!("{}/", key.chain()))
        {
            return Err(FieldError::new(
                "asset",
                "asset is not an asset of this chain",
            ));
        }
        let amount = positive_amount("amount", &self.amount, asset.decimals)?;
        let to_address = check_address("toAddress", &self.to_address)?;
        Ok(OutgoingTransfer {
            key,
            asset: asset.asset_identifier.clone(),
            amount,
            to_address,
            occurred_at: self.occurred_at,
        })
    }
}

fn positive_amount(field: &str, s: &str, decimals: u32) -> Result<Decimal, FieldError> {
    let a = Amount::parse(s, decimals)
        .map_err(|e| FieldError::new(field, format!("{field}: {e}")))?
        .value();
    if a.is_negative() || a.is_zero() {
        return Err(FieldError::new(field, format!("{field} must be positive")));
    }
    Ok(a)
}

/// The list filters (all optional, combined with AND).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ActivityFilter {
    pub direction: Option<Direction>,
    pub asset: Option<String>,
    /// `occurredAt >= from`.
    pub from: Option<Timestamp>,
    /// `occurredAt < to`.
    pub to: Option<Timestamp>,
    /// Outgoing activities with (true) or without (false) an expense.
    pub has_expense: Option<bool>,
}

impl ActivityFilter {
    /// A period ends after it starts.
    pub fn check(self) -> Result<ActivityFilter, FieldError> {
        if let (Some(f), Some(t)) = (self.from, self.to) {
            if t <= f {
                return Err(FieldError::new("to", "to must be after from"));
            }
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HASH: &str = "0xABCDEF0123456789abcdef0123456789ABCDEF0123456789abcdef0123456789";

    #[test]
    fn keys_read_from_the_right_and_lower_case_evm_hashes() {
        let k = ActivityKey::new("eip155:1", HASH, 3).unwrap();
        assert_eq!(k.to_string(), format!("eip155:1:{}:3", HASH.to_lowercase()));
        assert_eq!(ActivityKey::parse(&k.to_string()), Some(k.clone()));
        assert_eq!(k.chain(), "eip155:1");
        // A non-canonical spelling names nothing.
        assert_eq!(ActivityKey::parse(&format!("eip155:1:{HASH}:3")), None);
        assert_eq!(ActivityKey::parse("eip155:1:abc"), None);
        assert_eq!(ActivityKey::parse("eip155:1:abc:-1"), None);
        assert_eq!(
            ActivityKey::new("eip155", "ab", 0).unwrap_err().field,
            "chain"
        );
        assert_eq!(
            ActivityKey::new("eip155:1", "a b", 0).unwrap_err().field,
            "txHash"
        );
        let sol = ActivityKey::new("solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", "5VfyDx", 0).unwrap();
        assert_eq!(ActivityKey::parse(&sol.to_string()), Some(sol));
        // A transaction's own coin value: `native` in place of the index.
        let coin = ActivityKey::native("eip155:1", HASH).unwrap();
        assert_eq!(
            coin.to_string(),
            format!("eip155:1:{}:native", HASH.to_lowercase())
        );
        assert_eq!(coin.index(), None);
        assert_eq!(ActivityKey::parse(&coin.to_string()), Some(coin.clone()));
        assert_ne!(Some(coin), ActivityKey::parse(&k.to_string()));
        assert_eq!(ActivityKey::parse("eip155:1:abc:Native"), None);
    }
}

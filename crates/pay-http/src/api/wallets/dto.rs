//! Request and response shapes of the settlement wallet routes.

use pay_domain::chains::WalletView;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The merchant's account-level extended public key. An extended private key is refused
/// (`private_key_refused`) and never stored or logged.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PutEvmWalletRequest {
    /// A BIP32 extended public key, e.g. the account key at `m/44'/60'/0'`: 111 base58
    /// characters whose base58check checksum, version bytes and curve point must verify.
    #[schema(
        min_length = 111,
        max_length = 111,
        pattern = "^[1-9A-HJ-NP-Za-km-z]{111}$",
        example = "xpub6Ce9NcJvTk36xtLSrJLZqE7wtgA5deCeYs7rSQtreh4cj6ByPtrg9sD7V2FNFLPnf8heNP3FGkeV9qwfzvZNSd54JoNXVsXFYSYwHsnJxqP"
    )]
    pub xpub: String,
}

/// The merchant's EVM settlement wallet: deposit addresses are its children `0/<i>`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EvmWalletDto {
    #[schema(example = "evm")]
    pub family: &'static str,
    pub xpub: String,
    /// BIP32 fingerprint of the key (first 4 bytes of HASH160 of its public key).
    #[schema(example = "3442193e")]
    pub fingerprint: String,
    #[schema(example = "0/*")]
    pub derivation: &'static str,
    /// Children `0/0`, `0/1`, `0/2` (EIP-55): check them against the wallet.
    pub first_addresses: Vec<String>,
    /// Children `0/0 .. 0/(nextIndex-1)` have been handed out as deposit addresses.
    pub next_index: u32,
    #[schema(example = "2026-11-27T04:00:00Z")]
    pub created_at: String,
    #[schema(example = "2026-11-27T04:00:00Z")]
    pub updated_at: String,
}

impl From<WalletView> for EvmWalletDto {
    fn from(v: WalletView) -> Self {
        EvmWalletDto {
            family: "evm",
            xpub: v.wallet.xpub,
            fingerprint: v.wallet.fingerprint,
            derivation: pay_domain::chains::xpub::DERIVATION,
            first_addresses: v.first_addresses,
            next_index: v.wallet.next_index,
            created_at: v.wallet.created_at.to_rfc3339(),
            updated_at: v.wallet.updated_at.to_rfc3339(),
        }
    }
}

//! The chain processor's context: the merchant's extended public key (its checks and the
//! addresses it derives), deposit address allocation, and the pure rules the chain watcher
//! applies (confirmations, where a reorg forked, EIP-681 payment requests). The JSON-RPC side
//! lives in the `pay-chain` adapter; this context holds no I/O.

pub mod config;
mod error;
pub mod health;
mod model;
pub mod ports;
pub mod rules;
mod service;
pub mod xpub;

pub use config::{parse_chains, Chain, ChainAsset, ChainAssetKind, PriceRule};
pub use error::WalletError;
pub use health::{chain_health, ChainHealth, ChainMonitor};
pub use model::{
    AddressRequest, ChainWatch, DepositAddress, StoredWallet, WalletView, FIRST_ADDRESSES,
};
pub use service::{derive_address, ChainService};
pub use xpub::{Xpub, XpubRefusal};

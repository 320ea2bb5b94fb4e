//! The EVM side of the chain processor: a JSON-RPC client over plain HTTP (`eth_chainId`,
//! blocks, logs, balances, `eth_call`), the start-up check of each configured chain, the
//! onchain `Processor` (deposit addresses from the merchants' keys) and its `PriceSource`
//! (fixed pars and price feeds), and, for tests, a harness that runs a local `anvil` node from
//! its npm package.

pub mod prices;
pub mod processor;
pub mod rpc;
pub mod watcher;

#[cfg(feature = "testing")]
pub mod testing;

pub use prices::ChainPrices;
pub use processor::OnchainProcessor;
pub use rpc::{check_chain_ids, RpcClient, RpcError};
pub use watcher::Watcher;

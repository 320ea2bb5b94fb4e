//! The sandbox processor adapter (`PAY_PROCESSOR=sandbox`, the default, like a gateway's test
//! mode): deterministic deposit channels with chain-shaped addresses that no wallet will pay, and
//! a fixed or operator-supplied USD price table. Nothing here touches a network or a chain.

pub mod address;
pub mod prices;
pub mod processor;

pub use address::deposit_address;
pub use prices::{PriceTableError, SandboxPrices};
pub use processor::{channel_id, SandboxProcessor};

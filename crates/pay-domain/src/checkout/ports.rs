//! What checkout needs from outside storage: prices for quotes and the payment processor.

use crate::kernel::error::PortResult;

/// Prices for quotes.
pub trait PriceSource: Send + Sync {
    /// The price of one unit of `asset` (an asset identifier) in `unit` (an ISO 4217 code such
    /// as `USD`, or an asset identifier); `None` when the source does not know the pair.
    fn price(&self, asset: &str, unit: &str) -> PortResult<Option<crate::kernel::amount::Decimal>>;

    /// Whether the source prices `asset` in `unit` at all (its table lists the pair), without
    /// reading the price itself: the assets a link offers. A listed pair whose price cannot be
    /// read now (a stale feed) gives no quote (`PriceUnavailable`), never a guess.
    fn lists(&self, asset: &str, unit: &str) -> PortResult<bool> {
        Ok(self.price(asset, unit)?.is_some())
    }
}

/// A deposit channel a processor opened for a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DepositChannel {
    pub channel_id: String,
    pub composite_channel_id: String,
    pub deposit_address: String,
    pub source_chain: String,
}

/// The chain transfer that moved a completed session's settlement into its destination, as
/// the processor reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettlementTransfer {
    /// CAIP-2 chain id (`eip155:8453`).
    pub chain: String,
    pub tx_hash: String,
    /// The log (EVM) or output (UTXO) index of the transfer within the transaction.
    pub index: u32,
    /// Where the funds came from (the processor's settlement wallet).
    pub from_address: String,
}

/// The payment processor: which assets it takes, its fee, and deposit channels. What happens on
/// a channel (deposits, settlement, failure) comes back through the use cases.
pub trait Processor: Send + Sync {
    fn name(&self) -> &'static str;
    /// How many confirmations a transfer in this pay asset needs to be final (the chain
    /// processor's chain); `None` where payments are not counted in confirmations.
    fn confirmations(&self, _asset_identifier: &str) -> Option<u32> {
        None
    }
    /// The fee, percent of the quote's target.
    fn fee_percent(&self) -> crate::kernel::amount::Decimal;
    /// Whether payers can pay with this asset.
    fn supports(&self, asset: &crate::kernel::assets::DestinationAsset) -> bool;
    /// Whether a payer may pay in another asset than the one the link settles in (the
    /// processor swaps); a processor that settles directly takes the settlement asset only.
    fn swaps(&self) -> bool {
        true
    }
    /// Where the new `session`'s settlement goes when it settles in `asset`: the merchant's
    /// wallet ([`Processor::merchant_wallet`]) unless the processor gives each session an
    /// address of the merchant's own (then the same address when asked again). `None` blocks
    /// the start.
    fn session_destination(
        &self,
        company: crate::kernel::ids::CompanyId,
        session: uuid::Uuid,
        asset: &crate::kernel::assets::DestinationAsset,
    ) -> PortResult<Option<String>> {
        let _ = session;
        self.merchant_wallet(company, asset)
    }
    /// The merchant's settlement wallet for `asset` (where settled funds go); `None` when the
    /// merchant has none there, which blocks payment starts
    /// (`start_blocked_missing_company_wallet`).
    fn merchant_wallet(
        &self,
        company: crate::kernel::ids::CompanyId,
        asset: &crate::kernel::assets::DestinationAsset,
    ) -> PortResult<Option<String>>;
    /// Opens a deposit channel for `amount` of `asset`. MUST be idempotent per `session`:
    /// asking again returns the same channel.
    fn open_channel(
        &self,
        session: uuid::Uuid,
        asset: &crate::kernel::assets::DestinationAsset,
        amount: crate::kernel::amount::Decimal,
    ) -> PortResult<DepositChannel>;
    /// The transfer that settled the completed `session`: `amount` of `asset` to
    /// `destination`. MUST name the same transfer (chain, hash, index) each time it is asked
    /// for the same session. `None` when the payer's own transfers went straight into the
    /// merchant's wallet (no settlement transfer of the processor's).
    fn settlement_transfer(
        &self,
        session: uuid::Uuid,
        asset: &crate::kernel::assets::DestinationAsset,
        amount: crate::kernel::amount::Decimal,
        destination: &str,
    ) -> PortResult<Option<SettlementTransfer>>;
}

//! The chain `Processor` (`PAY_PROCESSOR=onchain`): non-custodial, no swap, no fee. A session
//! settling in a chain asset gets the next child address of its company's extended public key
//! as both its destination and its deposit address; the funds land in the merchant's wallet.

use std::sync::Arc;

use pay_domain::chains::ports::WalletStore;
use pay_domain::chains::{derive_address, AddressRequest, Chain};
use pay_domain::checkout::ports::{DepositChannel, Processor, SettlementTransfer};
use pay_domain::checkout::quote::QUOTE_TTL;
use pay_domain::checkout::DEPOSIT_WINDOW;
use pay_domain::kernel::amount::Decimal;
use pay_domain::kernel::assets::DestinationAsset;
use pay_domain::kernel::ids::CompanyId;
use pay_domain::kernel::ports::Clock;
use pay_domain::{Fault, PortResult};

/// How long after its start a session's address is watched beyond its quote and deposit
/// windows (a quote refreshed or accepted late), before the chain's `lateWatchSecs`.
pub const WATCH_MARGIN: time::Duration = time::Duration::hours(1);

/// The onchain processor over the configured chains and the merchants' keys.
#[derive(Clone)]
pub struct OnchainProcessor {
    chains: Arc<Vec<Chain>>,
    wallets: Arc<dyn WalletStore>,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for OnchainProcessor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OnchainProcessor")
            .field("chains", &self.chains.len())
            .finish_non_exhaustive()
    }
}

impl OnchainProcessor {
    pub fn new(
        chains: Arc<Vec<Chain>>,
        wallets: Arc<dyn WalletStore>,
        clock: Arc<dyn Clock>,
    ) -> OnchainProcessor {
        OnchainProcessor {
            chains,
            wallets,
            clock,
        }
    }

    /// The chain of a catalogue asset, when one of the configured chains lists it.
    fn chain_of(&self, asset: &DestinationAsset) -> Option<&Chain> {
        self.chains.iter().find(|c| {
            c.chain_code == asset.chain_code && c.asset(&asset.asset_identifier).is_some()
        })
    }
}

impl Processor for OnchainProcessor {
    fn name(&self) -> &'static str {
        "onchain"
    }

    /// The `confirmations` of the chain that lists the asset.
    fn confirmations(&self, asset_identifier: &str) -> Option<u32> {
        self.chains
            .iter()
            .find(|c| c.asset(asset_identifier).is_some())
            .map(|c| c.confirmations)
    }

    /// None of ours: the payer pays the merchant's own address directly.
    fn fee_percent(&self) -> Decimal {
        Decimal::ZERO
    }

    /// The assets of the configured chains.
    fn supports(&self, asset: &DestinationAsset) -> bool {
        self.chain_of(asset).is_some()
    }

    /// No swap: a payer pays in the asset the link settles in.
    fn swaps(&self) -> bool {
        false
    }

    /// The company's extended public key, when it set one (its addresses are the wallet).
    fn merchant_wallet(
        &self,
        company: CompanyId,
        asset: &DestinationAsset,
    ) -> PortResult<Option<String>> {
        if self.chain_of(asset).is_none() {
            return Ok(None);
        }
        Ok(self.wallets.wallet(company)?.map(|w| w.xpub))
    }

    /// The next child `0/<i>` of the company's key, allocated for `session` (the same one when
    /// asked again), watched until the quote and deposit windows and the chain's late watch
    /// have passed; `None` without a key or on an asset of no configured chain.
    fn session_destination(
        &self,
        company: CompanyId,
        session: uuid::Uuid,
        asset: &DestinationAsset,
    ) -> PortResult<Option<String>> {
        let Some(chain) = self.chain_of(asset) else {
            return Ok(None);
        };
        let at = self.clock.now();
        let late = time::Duration::seconds(i64::try_from(chain.late_watch_secs).unwrap_or(0));
        let request = AddressRequest {
            company_id: company,
            session_id: session,
            chain_code: chain.chain_code.clone(),
            asset_identifier: asset.asset_identifier.clone(),
            at,
            watch_until: at.plus(QUOTE_TTL + DEPOSIT_WINDOW + WATCH_MARGIN + late),
        };
        Ok(self
            .wallets
            .assign_address(&request, &derive_address)?
            .map(|a| a.eip55()))
    }

    /// The session's address: channel `<chainCode>:<i>` on its chain.
    fn open_channel(
        &self,
        session: uuid::Uuid,
        _asset: &DestinationAsset,
        amount: Decimal,
    ) -> PortResult<DepositChannel> {
        if amount.is_negative() || amount.is_zero() {
            return Err(Fault::new(format!(
                "a deposit channel needs a positive amount, not {amount}"
            )));
        }
        let address = self
            .wallets
            .session_address(session)?
            .ok_or_else(|| Fault::new("a chain session has no deposit address"))?;
        let channel_id = format!("{}:{}", address.chain_code, address.index);
        Ok(DepositChannel {
            composite_channel_id: channel_id.clone(),
            channel_id,
            deposit_address: address.eip55(),
            source_chain: address.chain_code,
        })
    }

    /// None: the payer's transfers went straight into the merchant's wallet, and the chain
    /// watcher records each of them as incoming wallet activity once final (with the session
    /// it paid; see `watcher::movements`), so the completed session adds none of its own.
    fn settlement_transfer(
        &self,
        _session: uuid::Uuid,
        _asset: &DestinationAsset,
        _amount: Decimal,
        _destination: &str,
    ) -> PortResult<Option<SettlementTransfer>> {
        Ok(None)
    }
}

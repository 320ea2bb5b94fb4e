//! The payer's refund address: an address of the chain the payer paid on, given once. The
//! first accepted submission wins; a later one (another address or the same) is refused and
//! changes and emits nothing, so whoever else holds the payer's page URL cannot redirect the
//! refund.

use super::Plan;
use crate::checkout::error::CheckoutResult;
use crate::checkout::machine::SessionEvent;
use crate::checkout::CheckoutService;
use crate::checkout::PaymentSession;
use crate::checkout::RefundAddressAlreadySet;
use crate::checkout::TimelineFacts;
use crate::kernel::address::AddressFormat;
use crate::kernel::error::FieldError;
use crate::kernel::ids::{LinkUid, PaymentSessionId};

impl CheckoutService {
    /// The payer gives the address a refund goes to (a `refund_pending` session, once).
    pub fn submit_refund_address(
        &self,
        uid: &LinkUid,
        session: PaymentSessionId,
        address: &str,
    ) -> CheckoutResult<PaymentSession> {
        let address = address.trim();
        let link = self.checkout_link(uid)?;
        let s = self.session_of(&link, session)?;
        if s.settlement.refund_address.is_some() {
            return Err(RefundAddressAlreadySet.into());
        }
        self.check_refund_address(&s, address)?;
        self.move_session(&link, s, "payer_checkout", None, &|cur| {
            // Re-decided on every attempt: of two racing submissions, the second sees the first.
            if cur.settlement.refund_address.is_some() {
                return Err(RefundAddressAlreadySet.into());
            }
            let mut after = cur.clone();
            after.settlement.refund_address = Some(address.to_owned());
            Ok(Some(Plan {
                event: SessionEvent::RefundAddressReceived,
                after,
                facts: TimelineFacts::RefundAddress {
                    address: address.to_owned(),
                },
                claim: false,
            }))
        })
    }

    /// `address` must be an address of the chain of the asset the payer paid with (the refund
    /// goes back on that chain); the message names the chain and its format.
    fn check_refund_address(&self, s: &PaymentSession, address: &str) -> Result<(), FieldError> {
        let format = AddressFormat::of_asset(&s.selected_sell_asset);
        format.check(address).map_err(|why| {
            let chain = self
                .k
                .assets
                .get(&s.selected_sell_asset)
                .map(|a| a.chain_name.clone())
                .or_else(|| s.source_chain.clone())
                .unwrap_or_else(|| {
                    let id = &s.selected_sell_asset;
                    id.split('/').next().unwrap_or(id).to_owned()
                });
            FieldError::new(
                "address",
                format!(
                    "address must be an address on {chain} ({}); {why}",
                    format.describe()
                ),
            )
        })
    }
}

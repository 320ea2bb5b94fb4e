//! What the chain watcher reports: a transfer seen on a session's deposit address, and the
//! moment every transfer the session received is final. The same moves as the sandbox's
//! deposit and settlement, keyed by the transfer (`eip155:<chainId>:<txHash>:<logIndex>`), so
//! reading a block again (a restart, a second instance) decides nothing twice.

use super::*;

/// The trigger of the moves the chain watcher reports (timeline and webhooks).
pub const CHAIN_TRIGGER: &str = "chain_watcher";

impl CheckoutService {
    fn session_and_link(
        &self,
        session: PaymentSessionId,
    ) -> CheckoutResult<(PaymentLink, PaymentSession)> {
        Ok(self
            .store
            .session_with_link(session)?
            .ok_or_else(session_not_found)?)
    }

    /// A transfer of `amount` to the session's address, seen in a block (`is_final`: with its
    /// confirmations): the session is `processing` and its received amount grows (transfers
    /// add up). On a session that already ended (expired, cancelled, failed) it is a late
    /// payment, recorded once final only (a reorg cannot leave a false one); before that the
    /// session is answered as it is. Idempotent by `key`.
    pub fn chain_transfer_seen(
        &self,
        session: PaymentSessionId,
        amount: Decimal,
        key: &str,
        is_final: bool,
    ) -> CheckoutResult<PaymentSession> {
        let (link, s) = self.session_and_link(session)?;
        let ended = matches!(
            s.status,
            SessionStatus::Expired | SessionStatus::Cancelled | SessionStatus::Failed
        );
        if ended && !is_final {
            return Ok(s);
        }
        self.deposit(&link, s, amount, true, key, CHAIN_TRIGGER)
    }

    /// The transfers a `processing` session was confirming left the chain (a reorg) before
    /// their confirmations: the session waits again (`pending`, or `underpaid` with what it
    /// had before them), its received amount back to that; a `status_changed` says so. Any
    /// other session is answered as it is (a final transfer never moves again).
    pub fn chain_transfers_left(
        &self,
        session: PaymentSessionId,
    ) -> CheckoutResult<PaymentSession> {
        let (link, s) = self.session_and_link(session)?;
        self.move_session(&link, s, CHAIN_TRIGGER, None, &|cur| {
            if cur.status != SessionStatus::Processing {
                return Ok(None);
            }
            // What an earlier settlement left short is what the session had before.
            let before = match cur.settlement.short_by {
                Some(short) => Some(
                    cur.required_sell_amount
                        .checked_sub(short)
                        .ok_or_else(arithmetic)?,
                ),
                None => None,
            };
            let mut after = cur.clone();
            after.settlement.received_amount = before.filter(|b| !b.is_zero());
            Ok(Some(Plan {
                event: SessionEvent::DepositsLeft {
                    underpaid: before.is_some(),
                },
                after,
                facts: TimelineFacts::DepositsLeft {
                    reason: DepositsLeftReason::DepositsLeftChain,
                },
                claim: false,
            }))
        })
    }

    /// Every transfer the session received has its confirmations (`key`: the last one to get
    /// them): a `processing` session settles, `complete` or `underpaid` by the merchant's
    /// tolerance. Any other session is answered as it is.
    pub fn chain_transfers_final(
        &self,
        session: PaymentSessionId,
        key: &str,
    ) -> CheckoutResult<PaymentSession> {
        let (link, s) = self.session_and_link(session)?;
        if s.status != SessionStatus::Processing {
            return Ok(s);
        }
        self.settle(&link, s, &format!("{key}:settled"), CHAIN_TRIGGER)
    }
}

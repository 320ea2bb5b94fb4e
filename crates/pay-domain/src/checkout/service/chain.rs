//! What the chain watcher reports: a transfer seen on a session's deposit address, and the
//! moment every transfer the session received is final. The same moves as the sandbox's
//! deposit and settlement, keyed by the transfer (`eip155:<chainId>:<txHash>:<logIndex>`), so
//! reading a block again (a restart, a second instance) decides nothing twice.

use super::*;
use crate::checkout::ChainTransfer;

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
    /// had before them), its received amount back to that, its transfers the final ones
    /// (`confirmations >= required`); a `status_changed` says so. Any other session is
    /// answered as it is (a final transfer never moves again).
    pub fn chain_transfers_left(
        &self,
        session: PaymentSessionId,
        required: u64,
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
            after
                .settlement
                .transfers
                .retain(|t| t.confirmations >= required);
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

    /// The transfers to the session's address that the watcher sees in the blocks it read
    /// this round (the new ones and those not final at the last round), with their
    /// confirmations (`required` at most): `settlement.transfers` becomes the final ones it
    /// kept plus these, oldest first, so a transfer that left the chain leaves the list. No
    /// event and no timeline entry: the counts are read from the session, the moves carry
    /// their own. Written only when the list changed.
    pub fn chain_transfers_observed(
        &self,
        session: PaymentSessionId,
        seen: &[ChainTransfer],
        required: u64,
    ) -> CheckoutResult<PaymentSession> {
        let (link, mut cur) = self.session_and_link(session)?;
        let same = |a: &ChainTransfer, b: &ChainTransfer| {
            a.tx_hash == b.tx_hash && a.log_index == b.log_index && a.block_number == b.block_number
        };
        for _ in 0..WRITE_ATTEMPTS {
            let mut list: Vec<ChainTransfer> = cur
                .settlement
                .transfers
                .iter()
                .filter(|t| t.confirmations >= required && !seen.iter().any(|n| same(n, t)))
                .cloned()
                .collect();
            list.extend(seen.iter().cloned());
            list.sort_by_key(|t| (t.block_number, t.log_index));
            if list == cur.settlement.transfers {
                return Ok(cur);
            }
            let mut after = cur.clone();
            after.settlement.transfers = list;
            after.version = cur.version + 1;
            after.updated_at = self.links.link_now(&link)?;
            let write = LinkEventWrite {
                link_id: link.id,
                change: SessionChange::Update {
                    session: after.clone(),
                    expected_version: cur.version,
                },
                processor_event_id: None,
                claim_link: None,
                timeline: Vec::new(),
                webhook_events: 0,
                events: Vec::new(),
            };
            match self.store.write_link_event(&write, &|_| Vec::new())? {
                WriteOutcome::Applied(_) => return Ok(after),
                WriteOutcome::Stale => cur = self.reread(cur.id)?,
                other => {
                    return Err(Fault::new(format!(
                        "a write without a processor event or a claim answered {other:?}"
                    ))
                    .into())
                }
            }
        }
        Err(Fault::new("session kept changing under us").into())
    }
}

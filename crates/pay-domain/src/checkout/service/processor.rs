//! What the processor reports (deposits, settlement, late deposits) and the merchant's resolution of an underpaid session.

use super::*;

impl CheckoutService {
    /// A deposit seen on the session's channel; settles at once unless `hold`. A deposit on a
    /// session that already ended is recorded as a late payment.
    pub fn deposit(
        &self,
        link: &PaymentLink,
        s: PaymentSession,
        amount: Decimal,
        hold: bool,
        event_id: &str,
        trigger: &str,
    ) -> CheckoutResult<PaymentSession> {
        if amount.is_negative() || amount.is_zero() {
            return Err(FieldError::new("amount", "a deposit is positive").into());
        }
        if matches!(
            s.status,
            SessionStatus::Expired | SessionStatus::Cancelled | SessionStatus::Failed
        ) {
            return self.late_deposit(link, s, amount, event_id, trigger);
        }
        let seen = self.move_session(
            link,
            s,
            trigger,
            Some(&format!("{event_id}:seen")),
            &|cur| {
                let total = received_of(cur)
                    .checked_add(amount)
                    .ok_or_else(arithmetic)?;
                let mut after = cur.clone();
                after.settlement.received_amount = Some(total);
                after.settlement.asset = Some(cur.selected_sell_asset.clone());
                Ok(Some(Plan {
                    event: SessionEvent::DepositSeen,
                    after,
                    facts: TimelineFacts::Deposit { amount },
                    claim: false,
                }))
            },
        )?;
        if hold || seen.status != SessionStatus::Processing {
            return Ok(seen);
        }
        self.settle(link, seen, &format!("{event_id}:settled"), trigger)
    }

    /// Settles the deposits received: complete, or underpaid beyond the tolerance. On a
    /// one-time link another payer already completed, the deposit is to be refunded.
    pub fn settle(
        &self,
        link: &PaymentLink,
        s: PaymentSession,
        event_id: &str,
        trigger: &str,
    ) -> CheckoutResult<PaymentSession> {
        let settings = self.link_settings(link)?;
        let one_time = link.is_anonymous();
        let result = self.move_session(link, s.clone(), trigger, Some(event_id), &|cur| {
            let received = received_of(cur);
            let required = cur.required_sell_amount;
            let ok = tolerance::session_settles(cur, received, &settings)?;
            let mut after = cur.clone();
            let mut short_by = None;
            if ok {
                if received > required {
                    let over = received.checked_sub(required).ok_or_else(arithmetic)?;
                    after.settlement.overpaid_by = Some(over);
                } else if received < required {
                    let short = required.checked_sub(received).ok_or_else(arithmetic)?;
                    after.settlement.short_within_tolerance = Some(short);
                }
                after.settlement.short_by = None;
            } else {
                let short = required.checked_sub(received).ok_or_else(arithmetic)?;
                after.settlement.short_by = Some(short);
                short_by = Some(short);
            }
            Ok(Some(Plan {
                event: SessionEvent::Settled { short: !ok },
                after,
                facts: TimelineFacts::Settled {
                    received_amount: received,
                    short_by,
                },
                claim: ok && one_time,
            }))
        });
        match result {
            Err(CheckoutError::AlreadyPaid(_)) => {
                // Another payer completed this one-time link first: this deposit goes back.
                self.move_session(link, s, trigger, Some(event_id), &|cur| {
                    let mut after = cur.clone();
                    after.settlement.refund_reason = Some(RefundReason::LinkAlreadyPaid);
                    Ok(Some(Plan {
                        event: SessionEvent::RequestRefund,
                        after,
                        facts: TimelineFacts::RefundRequested {
                            reason: RefundReason::LinkAlreadyPaid,
                        },
                        claim: false,
                    }))
                })
            }
            other => other,
        }
    }

    pub(super) fn late_deposit(
        &self,
        link: &PaymentLink,
        s: PaymentSession,
        amount: Decimal,
        event_id: &str,
        trigger: &str,
    ) -> CheckoutResult<PaymentSession> {
        self.move_session(link, s, trigger, Some(event_id), &|cur| {
            let late = cur
                .settlement
                .late_amount
                .unwrap_or(Decimal::ZERO)
                .checked_add(amount)
                .ok_or_else(arithmetic)?;
            let mut after = cur.clone();
            after.settlement.late_amount = Some(late);
            after.settlement.late = Some(true);
            Ok(Some(Plan {
                event: SessionEvent::LateDeposit,
                after,
                facts: TimelineFacts::LateDeposit {
                    late_amount: amount,
                },
                claim: false,
            }))
        })
    }

    /// The merchant resolves the link's underpaid session by hand.
    pub fn resolve_underpayment(
        &self,
        p: &Principal,
        uid: &LinkUid,
        resolution: Resolution,
    ) -> CheckoutResult<PaymentSession> {
        p.authorize(Scope::PaymentLinksWrite)?;
        let link = self.links.readable_link::<CheckoutError>(p, uid)?;
        let s = self
            .store
            .latest_session(link.id)?
            .ok_or_else(session_not_found)?;
        let (event, record) = match resolution {
            Resolution::Complete => (
                SessionEvent::ManualResolution,
                ResolutionRecord::CompletedByMerchant,
            ),
            Resolution::Refund => (
                SessionEvent::RequestRefund,
                ResolutionRecord::RefundedByMerchant,
            ),
        };
        self.move_session(&link, s, "merchant_api", None, &|cur| {
            let mut after = cur.clone();
            after.settlement.resolution = Some(record);
            Ok(Some(Plan {
                event,
                after,
                facts: TimelineFacts::Resolved { resolution: record },
                claim: event == SessionEvent::ManualResolution && link.is_anonymous(),
            }))
        })
    }
}

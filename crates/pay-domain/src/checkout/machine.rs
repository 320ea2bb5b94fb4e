//! Payment sessions: one payer's attempt to pay a link. The contract's statuses and the one
//! transition function that moves between them; each move is one timeline event and, where the
//! spec names one, one webhook. (The underpayment tolerance is `tolerance`.)

use std::fmt;

use crate::checkout::SessionTransition;
use crate::webhooks::PaymentEvent;

/// Where a session is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SessionStatus {
    /// The payer reviews a quote; no deposit channel yet.
    Quote,
    /// The deposit channel is open.
    Pending,
    /// A deposit was seen and is being settled.
    Processing,
    /// Paid.
    Complete,
    /// Paid short beyond the tolerance; the difference is requested.
    Underpaid,
    /// A refund was decided; waiting for the payer's address or the transfer.
    RefundPending,
    Refunded,
    Expired,
    Cancelled,
    Failed,
}

impl SessionStatus {
    pub const ALL: [SessionStatus; 10] = [
        SessionStatus::Quote,
        SessionStatus::Pending,
        SessionStatus::Processing,
        SessionStatus::Complete,
        SessionStatus::Underpaid,
        SessionStatus::RefundPending,
        SessionStatus::Refunded,
        SessionStatus::Expired,
        SessionStatus::Cancelled,
        SessionStatus::Failed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SessionStatus::Quote => "quote",
            SessionStatus::Pending => "pending",
            SessionStatus::Processing => "processing",
            SessionStatus::Complete => "complete",
            SessionStatus::Underpaid => "underpaid",
            SessionStatus::RefundPending => "refund_pending",
            SessionStatus::Refunded => "refunded",
            SessionStatus::Expired => "expired",
            SessionStatus::Cancelled => "cancelled",
            SessionStatus::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<SessionStatus> {
        SessionStatus::ALL.into_iter().find(|x| x.as_str() == s)
    }

    /// No move leaves these.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            SessionStatus::Complete
                | SessionStatus::Refunded
                | SessionStatus::Expired
                | SessionStatus::Cancelled
                | SessionStatus::Failed
        )
    }

    /// Still waiting for the payer (what pausing, archiving or expiring the link ends).
    pub fn is_unfinished(self) -> bool {
        matches!(self, SessionStatus::Quote | SessionStatus::Pending)
    }
}

impl fmt::Display for SessionStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What happened to a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SessionEvent {
    /// The payer accepted the quote; the deposit channel opens.
    Accept,
    /// The payer cancelled.
    CancelByPayer,
    /// The quote expired before the payer accepted it.
    QuoteExpired,
    /// The open deposit request expired without a deposit.
    RequestExpired,
    /// The link expired while the session waited for the payer.
    LinkExpired,
    /// The link was paused or archived while the session waited for the payer.
    LinkInactive,
    /// A deposit was seen on the channel.
    DepositSeen,
    /// The deposit settled; `short` when it fell short beyond the tolerance.
    Settled { short: bool },
    /// The processor gave up on the payment.
    Fail,
    /// A refund was decided (an underpayment the payer will not top up); the payer's address
    /// is requested.
    RequestRefund,
    /// The payer's refund address arrived (no move; recorded on the timeline).
    RefundAddressReceived,
    /// The refund was sent.
    Refunded,
    /// The merchant resolved an underpayment by hand (accepting the amount received).
    ManualResolution,
    /// A deposit arrived after the session ended (expired, cancelled or failed): recorded in
    /// `settlement`, no move.
    LateDeposit,
    /// The deposits being confirmed left the chain (a reorg) before their confirmations: back
    /// to waiting, `underpaid` when the session was short before them.
    DepositsLeft { underpaid: bool },
}

impl SessionEvent {
    pub const ALL: [SessionEvent; 17] = [
        SessionEvent::Accept,
        SessionEvent::CancelByPayer,
        SessionEvent::QuoteExpired,
        SessionEvent::RequestExpired,
        SessionEvent::LinkExpired,
        SessionEvent::LinkInactive,
        SessionEvent::DepositSeen,
        SessionEvent::Settled { short: false },
        SessionEvent::Settled { short: true },
        SessionEvent::Fail,
        SessionEvent::RequestRefund,
        SessionEvent::RefundAddressReceived,
        SessionEvent::Refunded,
        SessionEvent::ManualResolution,
        SessionEvent::LateDeposit,
        SessionEvent::DepositsLeft { underpaid: false },
        SessionEvent::DepositsLeft { underpaid: true },
    ];

    /// The webhook a move by this event sends (besides `status_changed` on every status move).
    pub fn webhook(self) -> Option<PaymentEvent> {
        match self {
            SessionEvent::Accept => Some(PaymentEvent::ChannelCreated),
            SessionEvent::CancelByPayer => Some(PaymentEvent::PaymentCancelledByPayer),
            SessionEvent::QuoteExpired => Some(PaymentEvent::QuoteExpired),
            SessionEvent::RequestExpired => Some(PaymentEvent::PaymentRequestExpired),
            SessionEvent::LinkExpired => Some(PaymentEvent::PaymentLinkExpired),
            SessionEvent::LinkInactive => Some(PaymentEvent::PaymentLinkInactive),
            SessionEvent::Settled { short: true } => {
                Some(PaymentEvent::UnderpaymentDifferenceRequested)
            }
            SessionEvent::Settled { short: false } => Some(PaymentEvent::SettlementUpdated),
            SessionEvent::RequestRefund => Some(PaymentEvent::RefundAddressRequested),
            SessionEvent::RefundAddressReceived => Some(PaymentEvent::RefundAddressReceived),
            SessionEvent::ManualResolution => Some(PaymentEvent::ManualResolutionCompleted),
            SessionEvent::LateDeposit => Some(PaymentEvent::SettlementUpdated),
            SessionEvent::DepositSeen
            | SessionEvent::Fail
            | SessionEvent::Refunded
            | SessionEvent::DepositsLeft { .. } => None,
        }
    }
}

/// A refused session move.
fn refused(from: SessionStatus, event: SessionEvent) -> SessionTransition {
    SessionTransition {
        from: from.as_str(),
        event: format!("{event:?}"),
    }
}

/// The one transition function.
pub fn transition(
    from: SessionStatus,
    event: SessionEvent,
) -> Result<SessionStatus, SessionTransition> {
    use SessionEvent as E;
    use SessionStatus as S;
    let to = match (from, event) {
        (S::Quote, E::Accept) => S::Pending,
        (S::Quote | S::Pending, E::CancelByPayer) => S::Cancelled,
        (S::Quote, E::QuoteExpired) => S::Expired,
        (S::Pending, E::RequestExpired) => S::Expired,
        (S::Quote | S::Pending, E::LinkExpired) => S::Expired,
        (S::Quote | S::Pending, E::LinkInactive) => S::Cancelled,
        // A top-up of an underpaid session is a new deposit too.
        (S::Pending | S::Underpaid, E::DepositSeen) => S::Processing,
        // Another transfer while the first is being confirmed: they add up.
        (S::Processing, E::DepositSeen) => S::Processing,
        (S::Processing, E::DepositsLeft { underpaid: false }) => S::Pending,
        (S::Processing, E::DepositsLeft { underpaid: true }) => S::Underpaid,
        (S::Processing, E::Settled { short: false }) => S::Complete,
        (S::Processing, E::Settled { short: true }) => S::Underpaid,
        (S::Pending | S::Processing, E::Fail) => S::Failed,
        // Processing: the deposit cannot be kept (a one-time link another payer already paid).
        (S::Processing | S::Underpaid, E::RequestRefund) => S::RefundPending,
        (S::RefundPending, E::RefundAddressReceived) => S::RefundPending,
        (S::RefundPending, E::Refunded) => S::Refunded,
        (S::Underpaid, E::ManualResolution) => S::Complete,
        (S::Expired, E::LateDeposit) => S::Expired,
        (S::Cancelled, E::LateDeposit) => S::Cancelled,
        (S::Failed, E::LateDeposit) => S::Failed,
        _ => return Err(refused(from, event)),
    };
    Ok(to)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_move_of_the_table() {
        use SessionEvent as E;
        use SessionStatus as S;
        let allowed: &[(S, E, S)] = &[
            (S::Quote, E::Accept, S::Pending),
            (S::Quote, E::CancelByPayer, S::Cancelled),
            (S::Pending, E::CancelByPayer, S::Cancelled),
            (S::Quote, E::QuoteExpired, S::Expired),
            (S::Pending, E::RequestExpired, S::Expired),
            (S::Quote, E::LinkExpired, S::Expired),
            (S::Pending, E::LinkExpired, S::Expired),
            (S::Quote, E::LinkInactive, S::Cancelled),
            (S::Pending, E::LinkInactive, S::Cancelled),
            (S::Pending, E::DepositSeen, S::Processing),
            (S::Underpaid, E::DepositSeen, S::Processing),
            (S::Processing, E::DepositSeen, S::Processing),
            (
                S::Processing,
                E::DepositsLeft { underpaid: false },
                S::Pending,
            ),
            (
                S::Processing,
                E::DepositsLeft { underpaid: true },
                S::Underpaid,
            ),
            (S::Processing, E::Settled { short: false }, S::Complete),
            (S::Processing, E::Settled { short: true }, S::Underpaid),
            (S::Pending, E::Fail, S::Failed),
            (S::Processing, E::Fail, S::Failed),
            (S::Underpaid, E::RequestRefund, S::RefundPending),
            (S::Processing, E::RequestRefund, S::RefundPending),
            (S::RefundPending, E::RefundAddressReceived, S::RefundPending),
            (S::RefundPending, E::Refunded, S::Refunded),
            (S::Underpaid, E::ManualResolution, S::Complete),
            (S::Expired, E::LateDeposit, S::Expired),
            (S::Cancelled, E::LateDeposit, S::Cancelled),
            (S::Failed, E::LateDeposit, S::Failed),
        ];
        let mut moves = 0;
        for from in S::ALL {
            for event in E::ALL {
                let got = transition(from, event);
                match allowed.iter().find(|(f, e, _)| *f == from && *e == event) {
                    Some((_, _, to)) => {
                        assert_eq!(got, Ok(*to), "{from} {event:?}");
                        moves += 1;
                    }
                    None => assert!(
                        matches!(got, Err(SessionTransition { .. })),
                        "{from} {event:?} must be refused, got {got:?}"
                    ),
                }
            }
            if from.is_terminal() {
                // Nothing leaves a terminal status; only a late deposit is taken, and only by
                // a session that ended unpaid (it is recorded, the status stays).
                for e in E::ALL {
                    if let Ok(to) = transition(from, e) {
                        assert!(
                            to == from
                                && e == E::LateDeposit
                                && from != S::Complete
                                && from != S::Refunded,
                            "{from} is terminal, yet {e:?} moves it to {to}"
                        );
                    }
                }
            }
        }
        assert_eq!(moves, allowed.len());
    }

    #[test]
    fn names_and_kinds() {
        for s in SessionStatus::ALL {
            assert_eq!(SessionStatus::parse(s.as_str()), Some(s));
        }
        assert!(SessionStatus::Quote.is_unfinished() && SessionStatus::Pending.is_unfinished());
        assert!(!SessionStatus::Processing.is_unfinished());
        assert_eq!(
            SessionEvent::Accept.webhook(),
            Some(PaymentEvent::ChannelCreated)
        );
        assert_eq!(
            SessionEvent::LinkInactive.webhook(),
            Some(PaymentEvent::PaymentLinkInactive)
        );
        assert_eq!(SessionEvent::DepositSeen.webhook(), None);
    }
}

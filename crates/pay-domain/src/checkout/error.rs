//! What the checkout refuses.

use crate::kernel::error::{Fault, FieldError, NotFound, RateLimited};
use crate::links::LinkNotActive;
use crate::tenancy::Denied;

/// A refused payment-session move.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a {from} session cannot take {event}")]
pub struct SessionTransition {
    pub from: &'static str,
    pub event: String,
}

/// The merchant has no settlement wallet for the link's asset: payments cannot start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the merchant cannot receive {asset} at the moment; payments to this link cannot start")]
pub struct StartBlocked {
    pub asset: String,
}

/// No fresh price of the pay asset in the invoice unit (a stale or unreachable price feed): no
/// quote is made rather than a guessed one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no current price of {asset} in {unit}; try again later")]
pub struct PriceUnavailable {
    pub asset: String,
    pub unit: String,
}

/// A one-time link another payer already paid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("this one-time payment link is already paid")]
pub struct LinkAlreadyPaid;

/// The link already holds a payer's money: a session whose deposit is being confirmed
/// (`processing`) or that fell short (`underpaid`: the payer sends the rest to that session),
/// or, on a link that takes one payment, the completed one. No new session starts then, so a
/// payer is never asked for the full amount again; the merchant's resolution (kept or
/// refunded) frees the link. The session's id stays out of the message: whoever holds the
/// link is not necessarily its payer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PaymentUnderWay {
    pub session: crate::kernel::ids::PaymentSessionId,
    pub status: crate::checkout::machine::SessionStatus,
}

impl PaymentUnderWay {
    /// The link took its one payment (else a payment waits to be finished or resolved).
    pub fn is_paid(&self) -> bool {
        self.status == crate::checkout::machine::SessionStatus::Complete
    }
}

impl std::fmt::Display for PaymentUnderWay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::checkout::machine::SessionStatus as S;
        f.write_str(match self.status {
            S::Complete => "this payment link takes one payment and is already paid",
            S::Underpaid => {
                "part of a payment through this link already arrived: the payer sends the rest to \
                 that payment's deposit address, or the merchant resolves it; a new payment \
                 starts only after that"
            }
            _ => {
                "a payment through this link is being confirmed; a new payment starts only if it \
                 does not complete"
            }
        })
    }
}

impl std::error::Error for PaymentUnderWay {}

/// The session already has its refund address: the first one given stays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a refund address was already given for this payment; it cannot be changed")]
pub struct RefundAddressAlreadySet;

crate::context_error! {
    /// What a checkout use case (the payer's flow, processor events, the merchant's view and
    /// resolution, expiry work) can return.
    pub enum CheckoutError {
        Invalid(FieldError),
        Denied(Denied),
        NotFound(NotFound),
        Transition(SessionTransition),
        NotActive(LinkNotActive),
        AlreadyPaid(LinkAlreadyPaid),
        UnderWay(PaymentUnderWay),
        StartBlocked(StartBlocked),
        PriceUnavailable(PriceUnavailable),
        RefundAddressSet(RefundAddressAlreadySet),
        RateLimited(RateLimited),
        Fault(Fault),
    }
}

pub(crate) type CheckoutResult<T> = Result<T, CheckoutError>;

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

/// A one-time link another payer already paid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("this one-time payment link is already paid")]
pub struct LinkAlreadyPaid;

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
        StartBlocked(StartBlocked),
        RefundAddressSet(RefundAddressAlreadySet),
        RateLimited(RateLimited),
        Fault(Fault),
    }
}

pub(crate) type CheckoutResult<T> = Result<T, CheckoutError>;

//! What the links context refuses.

use crate::kernel::assets::AssetRefusal;
use crate::kernel::error::{Fault, FieldError, NotFound, RateLimited, UnknownField};
use crate::links::LinkStatus;
use crate::tenancy::Denied;

/// A refused status change of a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("cannot change status from {from} to {to}")]
pub struct InvalidTransition {
    pub from: LinkStatus,
    pub to: LinkStatus,
}

/// The link is paused, archived or expired: it takes no new payment or request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the payment link is {state}; it takes no new payments")]
pub struct LinkNotActive {
    pub state: crate::links::LinkState,
}

/// An unknown payment link, or one of another company or grant (its id, malformed or not,
/// tells nothing more).
pub const LINK_NOT_FOUND: NotFound = NotFound {
    kind: "Payment link",
};

crate::context_error! {
    /// What a links use case (create, list, read, move, anonymous links, the gateway form)
    /// can return.
    pub enum LinkError {
        Invalid(FieldError),
        UnknownField(UnknownField),
        Asset(AssetRefusal),
        Denied(Denied),
        NotFound(NotFound),
        Transition(InvalidTransition),
        RateLimited(RateLimited),
        Idempotency(crate::kernel::idempotency::IdempotencyConflict),
        Fault(Fault),
    }
}

//! What the subscriptions context refuses.

use crate::customers::PortalRefused;
use crate::kernel::assets::AssetRefusal;
use crate::kernel::error::{Fault, FieldError, NotFound};
use crate::subscriptions::SubscriptionStatus;
use crate::tenancy::Denied;

/// A refused status change of a subscription.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("cannot change subscription status from {from} to {to}")]
pub struct InvalidSubscriptionTransition {
    pub from: SubscriptionStatus,
    pub to: SubscriptionStatus,
}

crate::context_error! {
    /// What a subscriptions use case (create, list, read, move, portal moves) can return.
    pub enum SubscriptionError {
        Invalid(FieldError),
        Asset(AssetRefusal),
        Denied(Denied),
        NotFound(NotFound),
        Transition(InvalidSubscriptionTransition),
        Portal(PortalRefused),
        Idempotency(crate::kernel::idempotency::IdempotencyConflict),
        Fault(Fault),
    }
}

impl From<crate::links::LinkError> for SubscriptionError {
    /// A cycle link refused: its input was checked already, so only these can come back.
    fn from(e: crate::links::LinkError) -> Self {
        use crate::links::LinkError as L;
        match e {
            L::Invalid(f) => f.into(),
            L::Asset(a) => a.into(),
            L::Fault(f) => f.into(),
            other => Fault::new(format!("cycle link refused: {other}")).into(),
        }
    }
}

impl From<crate::customers::CustomerError> for SubscriptionError {
    fn from(e: crate::customers::CustomerError) -> Self {
        use crate::customers::CustomerError as C;
        match e {
            C::Invalid(f) => f.into(),
            C::Denied(d) => d.into(),
            C::NotFound(n) => n.into(),
            C::Portal(p) => p.into(),
            C::Idempotency(c) => c.into(),
            C::Fault(f) => f.into(),
        }
    }
}

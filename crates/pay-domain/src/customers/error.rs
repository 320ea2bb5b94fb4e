//! What the customers context refuses.

use crate::kernel::error::{Fault, FieldError, NotFound};
use crate::tenancy::Denied;

/// A customer portal URL that is expired, too far ahead, malformed or not signed by us for
/// this company and customer. Which check failed is not told (the log has nothing either).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("This customer portal link is invalid or has expired")]
pub struct PortalRefused;

crate::context_error! {
    /// What a customers use case (upsert, list, read, portal URL, portal access) can return.
    pub enum CustomerError {
        Invalid(FieldError),
        Denied(Denied),
        NotFound(NotFound),
        Portal(PortalRefused),
        Idempotency(crate::kernel::idempotency::IdempotencyConflict),
        Fault(Fault),
    }
}

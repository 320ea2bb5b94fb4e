//! What the request e-mail refuses. The mail outbox's own steps fail only with a `Fault`.

use crate::kernel::error::{Fault, FieldError, NotFound, RateLimited};
use crate::links::LinkNotActive;
use crate::tenancy::Denied;

/// `send-request-email` without an e-mail in the body or on the link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("no e-mail: pass `email` or set the link's customerEmail")]
pub struct MissingEmail;

crate::context_error! {
    /// What `send_request_email` can return.
    pub enum MailError {
        Invalid(FieldError),
        Denied(Denied),
        NotFound(NotFound),
        NotActive(LinkNotActive),
        MissingEmail(MissingEmail),
        RateLimited(RateLimited),
        Idempotency(crate::kernel::idempotency::IdempotencyConflict),
        Fault(Fault),
    }
}

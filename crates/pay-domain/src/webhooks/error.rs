//! What a merchant's webhook use case refuses. The outbox's own steps (emit, claim, record)
//! fail only with a `Fault`.

use crate::kernel::error::{Fault, FieldError, NotFound};
use crate::kernel::idempotency::IdempotencyConflict;
use crate::tenancy::Denied;

crate::context_error! {
    /// What a merchant's webhook use case (callbacks, secrets, the delivery log, test events,
    /// resends) can return.
    pub enum WebhookError {
        Invalid(FieldError),
        Denied(Denied),
        NotFound(NotFound),
        Idempotency(IdempotencyConflict),
        Fault(Fault),
    }
}

pub(crate) type WebhookResult<T> = Result<T, WebhookError>;

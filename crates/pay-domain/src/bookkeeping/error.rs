//! What the bookkeeping context refuses.

use crate::kernel::error::{Fault, FieldError, NotFound};
use crate::tenancy::Denied;

/// An evidence file refused for what it is or where it is linked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvidenceRefusal {
    /// Larger than the limit (the API's 413).
    #[error("the file is larger than {max_bytes} bytes")]
    TooLarge { max_bytes: usize },
    /// Not a PDF, PNG, JPEG or WebP by its bytes (the API's 415).
    #[error("the file is not a PDF, PNG, JPEG or WebP (by its content)")]
    UnsupportedType,
    /// No stored file of the company has this id (the API's 404, naming `field`).
    #[error("evidence file {file_id} not found")]
    NotFound { field: String, file_id: String },
    /// The file is linked to another expense (the API's 409); `field` names it in the body.
    #[error("evidence file {file_id} is linked to another expense")]
    LinkedElsewhere { field: String, file_id: String },
}

crate::context_error! {
    /// What a bookkeeping use case (record, list, read, save an expense, evidence files) can
    /// return.
    pub enum BookkeepingError {
        Invalid(FieldError),
        Denied(Denied),
        NotFound(NotFound),
        Evidence(EvidenceRefusal),
        Idempotency(crate::kernel::idempotency::IdempotencyConflict),
        Fault(Fault),
    }
}

//! What the bookkeeping context refuses.

use crate::kernel::error::{Fault, FieldError, NotFound};
use crate::tenancy::Denied;

crate::context_error! {
    /// What a bookkeeping use case (record, list, read, save an expense) can return.
    pub enum BookkeepingError {
        Invalid(FieldError),
        Denied(Denied),
        NotFound(NotFound),
        Fault(Fault),
    }
}

//! What the test clock refuses. Sandbox events are checkout moves: they return
//! `CheckoutError`.

use crate::kernel::error::{Fault, FieldError, NotFound};
use crate::tenancy::Denied;

crate::context_error! {
    /// What reading or moving a company's test clock can return.
    pub enum SandboxError {
        Invalid(FieldError),
        Denied(Denied),
        NotFound(NotFound),
        Fault(Fault),
    }
}

//! What the wallet use cases refuse.

use crate::kernel::error::{Fault, FieldError, NotFound};
use crate::tenancy::Denied;

use super::xpub::XpubRefusal;

crate::context_error! {
    /// What putting, reading or deleting the merchant's EVM wallet can return.
    pub enum WalletError {
        /// The `xpub` field: a private key (`private_key_refused`) or not a public key
        /// (`validation_failed`).
        Xpub(XpubRefusal),
        Invalid(FieldError),
        NotFound(NotFound),
        Denied(Denied),
        Fault(Fault),
    }
}

//! What the installations context refuses.

use crate::kernel::error::{Fault, FieldError};

/// `admin create-native-platform` for an identifier that exists: templates are immutable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("this native platform exists already; templates never change")]
pub struct PlatformExists;

crate::context_error! {
    /// What an installations use case can return. An unknown platform named by a
    /// registration is `Invalid` on `platform` (400).
    pub enum InstallationError {
        Invalid(FieldError),
        PlatformExists(PlatformExists),
        Fault(Fault),
    }
}

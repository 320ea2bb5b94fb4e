//! What the installations context refuses.

use crate::kernel::error::{Fault, FieldError};
use crate::oauth::ResourceRefusal;

/// `admin create-native-platform` for an identifier that exists: templates are immutable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("this native platform exists already; templates never change")]
pub struct PlatformExists;

/// A registration that names another platform or site than the installation registered
/// under its `registrationId`: both are fixed once registered (409).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("this registrationId is registered with another {field}; platform and siteUrl never change (generate a new registrationId for another site)")]
pub struct RegistrationConflict {
    /// `platform` or `siteUrl`.
    pub field: &'static str,
}

crate::context_error! {
    /// What an installations use case can return. An unknown platform named by a
    /// registration is `Invalid` on `platform` (400); a refused DPoP proof (another key, a
    /// replay, a key change without the registered key's `DPoP-Previous`) is `Resource`
    /// (the spec's 401).
    pub enum InstallationError {
        Invalid(FieldError),
        PlatformExists(PlatformExists),
        Conflict(RegistrationConflict),
        Resource(ResourceRefusal),
        Fault(Fault),
    }
}

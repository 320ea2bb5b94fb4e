//! What tenancy refuses: credentials, permissions, sign-ins and key management.

use crate::kernel::error::{Fault, FieldError, NotFound, RateLimited};

/// A caller that may not go on. Every context that takes a `Principal` can return it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Denied {
    /// No credential, or half a key pair.
    #[error("Unauthorized")]
    Unauthenticated,
    /// A wrong, disabled or insufficient credential (an OAuth grant without the scope too).
    #[error("Invalid pay API credentials")]
    InvalidCredentials,
    /// A signed-in user who cannot access the team or lacks the permission.
    #[error("Forbidden")]
    Forbidden,
}

/// Wrong e-mail or password (the same message for both).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("Invalid e-mail or password")]
pub struct InvalidLogin;

/// Key management with an unknown `partnerId`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("API key not found")]
pub struct ApiKeyNotFound;

crate::context_error! {
    /// What a tenancy use case (sign-in, authentication, teams, keys, the test clock's
    /// company read) can return.
    pub enum TenancyError {
        Invalid(FieldError),
        Denied(Denied),
        InvalidLogin(InvalidLogin),
        ApiKeyNotFound(ApiKeyNotFound),
        NotFound(NotFound),
        RateLimited(RateLimited),
        Fault(Fault),
    }
}

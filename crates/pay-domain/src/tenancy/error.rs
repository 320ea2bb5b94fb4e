//! What tenancy refuses: credentials, permissions, sign-ins and key management.

use crate::kernel::error::{Fault, FieldError, NotFound, RateLimited};
use crate::tenancy::Scope;

/// A caller that may not go on. Every context that takes a `Principal` can return it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Denied {
    /// No credential, or half a key pair.
    #[error("Unauthorized")]
    Unauthenticated,
    /// A wrong or disabled credential.
    #[error("Invalid pay API credentials")]
    InvalidCredentials,
    /// An OAuth grant without the route's scope: the spec's same 401, answered with the
    /// challenge of the token's scheme (`error="insufficient_scope"`, RFC 6750 section 3.1).
    #[error("Invalid pay API credentials")]
    MissingScope {
        scope: Scope,
        /// The token is DPoP-bound (so it was presented with the DPoP scheme).
        dpop_bound: bool,
    },
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

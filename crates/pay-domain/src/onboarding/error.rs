//! What the onboarding context refuses.

use crate::kernel::error::{Fault, FieldError, NotFound, RateLimited};
use crate::kernel::idempotency::IdempotencyConflict;
use crate::tenancy::{Denied, InvalidLogin};

/// A claim of a draft that cannot be claimed (any more).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ClaimRefused {
    #[error("this onboarding link was already used")]
    Claimed,
    #[error("this onboarding link expired")]
    Expired,
}

crate::context_error! {
    /// What an onboarding use case can return: a field at fault (400), a missing or wrong
    /// onboarding secret (401), an `idempotencyKey` reused with another body (409), an unknown
    /// claim link (404), a claimed or expired draft, a wrong sign-in on the claim page.
    pub enum OnboardingError {
        Invalid(FieldError),
        Denied(Denied),
        InvalidLogin(InvalidLogin),
        Idempotency(IdempotencyConflict),
        NotFound(NotFound),
        Claim(ClaimRefused),
        RateLimited(RateLimited),
        Fault(Fault),
    }
}

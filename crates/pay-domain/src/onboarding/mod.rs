//! Partner onboarding: an operator creates a partner (`pay-server admin create-partner`), whose
//! onboarding secret creates drafts (`POST /api/partner/v1/onboarding/company`): the company a
//! merchant is to own, and optionally an OAuth authorization request the partner's application
//! gets when the merchant claims it. The merchant opens the draft's claim URL, signs up or in,
//! and the company is created with them as owner, at most once per draft; with `oauth` the
//! application is granted at once and the browser goes to its redirect URI with a code.

mod error;
mod model;
pub mod ports;
mod service;

pub use error::{ClaimRefused, OnboardingError};
pub use model::{
    ClaimView, Claimed, Draft, DraftOAuth, DraftRequest, DraftStatus, NewDraft, NewDraftOAuth,
    Partner, StoredDraft, StoredPartner, CLAIM_TOKEN_PREFIX, DRAFT_TTL, MAX_IDEMPOTENCY_KEY_LEN,
    ONBOARDING_SECRET_PREFIX,
};
pub use service::OnboardingService;

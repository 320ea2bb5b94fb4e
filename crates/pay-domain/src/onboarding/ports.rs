//! What onboarding needs from storage: partners, their drafts, and the claim that creates a
//! draft's company. Each method says what an implementation MUST guarantee.

use crate::kernel::error::PortResult;
use crate::kernel::ids::{DraftId, OnboardingPartnerId, UserId};
use crate::kernel::secret::SecretDigest;
use crate::kernel::timestamp::Timestamp;
use crate::onboarding::model::{Partner, StoredDraft, StoredPartner};
use crate::tenancy::{Company, PaySettings, UserRecord};

/// The company a claim creates, with its owner (a new user, or an existing one by id).
#[derive(Debug, Clone)]
pub struct ClaimedTenant {
    pub new_user: Option<UserRecord>,
    pub owner: UserId,
    pub company: Company,
    pub settings: PaySettings,
}

/// Partners and drafts.
pub trait OnboardingStore {
    /// Inserts; `id` and `secret_digest` MUST be unique.
    fn insert_partner(&self, partner: &StoredPartner) -> PortResult<()>;
    /// The partner whose onboarding secret has this digest.
    fn partner_by_secret(&self, digest: &SecretDigest) -> PortResult<Option<Partner>>;
    /// Inserts a draft; `false`, and nothing written, when the partner has a draft with this
    /// `idempotency_key` already (unique over partner and key): of any number of concurrent
    /// calls with one partner and key, exactly one returns true.
    fn insert_draft(&self, draft: &StoredDraft) -> PortResult<bool>;
    /// The partner's draft with this `idempotency_key`.
    fn draft_by_key(
        &self,
        partner: OnboardingPartnerId,
        key: &str,
    ) -> PortResult<Option<StoredDraft>>;
    /// The draft whose claim token has this digest, with its partner.
    fn draft_by_claim(&self, digest: &SecretDigest) -> PortResult<Option<(StoredDraft, Partner)>>;
    /// Claims the draft in ONE transaction: sets its `claimed_at = at` and `company_id` where
    /// `claimed_at` is still null and `expires_at > at` (one compare-and-set), then creates
    /// the new user (when given), the company, its settings and the owner's membership. When
    /// the compare-and-set changes no row nothing is written and the answer is false. Of any
    /// number of concurrent claims of one draft, at most one returns true: one company.
    fn claim_draft(
        &self,
        draft: DraftId,
        at: Timestamp,
        tenant: &ClaimedTenant,
    ) -> PortResult<bool>;
}

/// Every port of the onboarding context.
pub trait OnboardingPorts: OnboardingStore + Send + Sync {}

impl<T: OnboardingStore + Send + Sync> OnboardingPorts for T {}

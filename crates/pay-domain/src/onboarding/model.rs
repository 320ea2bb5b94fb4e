//! Partners, drafts and their claim: what a partner sends, what is stored, what the claim
//! page shows and what a claim gives.

use time::Duration;

use crate::kernel::error::FieldError;
use crate::kernel::ids::{CompanyId, DraftId, OnboardingPartnerId};
use crate::kernel::secret::{SealedSecret, SecretDigest};
use crate::kernel::timestamp::Timestamp;
use crate::kernel::validate;
use crate::oauth::{ConsentView, IssuedCode};

/// The onboarding secret's prefix (`Authorization: Bearer obs_...`).
pub const ONBOARDING_SECRET_PREFIX: &str = "obs_";
/// The claim token's prefix (the last segment of a claim URL).
pub const CLAIM_TOKEN_PREFIX: &str = "obc_";
/// How long a draft can be claimed after its creation (service clock).
pub const DRAFT_TTL: Duration = Duration::days(7);
/// Longest `idempotencyKey`.
pub const MAX_IDEMPOTENCY_KEY_LEN: usize = 255;
/// Longest partner and company name.
pub const MAX_NAME_LEN: usize = 200;

/// An onboarding partner (agency, platform): server configuration, made by the operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partner {
    pub id: OnboardingPartnerId,
    pub name: String,
    pub created_at: Timestamp,
}

/// A partner as stored: its onboarding secret as a digest only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredPartner {
    pub partner: Partner,
    pub secret_digest: SecretDigest,
}

/// The draft call's body as the edge read it (`idempotencyKey`, `company`, `oauth`).
#[derive(Debug, Clone, Default)]
pub struct NewDraft {
    pub idempotency_key: String,
    pub company_name: String,
    pub company_website: Option<String>,
    pub oauth: Option<NewDraftOAuth>,
}

/// The optional `oauth` object as sent.
#[derive(Debug, Clone, Default)]
pub struct NewDraftOAuth {
    pub client_id: String,
    pub redirect_uri: String,
    pub scope: String,
    pub state: String,
    pub code_challenge: String,
    pub code_challenge_method: String,
}

/// What a draft asks for, checked: two calls with one `idempotencyKey` are the same request
/// when these are equal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DraftRequest {
    pub company_name: String,
    pub company_website: Option<String>,
    pub oauth: Option<DraftOAuth>,
}

/// The authorization request the partner's application gets when the draft is claimed (PKCE
/// method S256, the only one accepted, is not stored).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DraftOAuth {
    pub client_id: String,
    pub redirect_uri: String,
    /// Space-separated, as sent.
    pub scope: String,
    pub state: String,
    pub code_challenge: String,
}

/// Where a draft stands now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DraftStatus {
    /// Waiting for the merchant.
    Open,
    /// The merchant claimed it: the company exists.
    Claimed,
    /// Not claimed within `DRAFT_TTL`.
    Expired,
}

impl DraftStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            DraftStatus::Open => "open",
            DraftStatus::Claimed => "claimed",
            DraftStatus::Expired => "expired",
        }
    }
}

/// A partner's draft.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Draft {
    pub id: DraftId,
    pub partner_id: OnboardingPartnerId,
    pub idempotency_key: String,
    pub request: DraftRequest,
    pub created_at: Timestamp,
    pub expires_at: Timestamp,
    pub claimed_at: Option<Timestamp>,
    /// The company the claim created.
    pub company_id: Option<CompanyId>,
}

impl Draft {
    /// Claimed (whenever), else expired from `expires_at` on, else open.
    pub fn status(&self, now: Timestamp) -> DraftStatus {
        if self.claimed_at.is_some() {
            DraftStatus::Claimed
        } else if now >= self.expires_at {
            DraftStatus::Expired
        } else {
            DraftStatus::Open
        }
    }
}

/// A draft as stored: its claim token as a digest (to find it) and sealed (so a retry of the
/// draft call answers the same claim URL).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredDraft {
    pub draft: Draft,
    pub claim_digest: SecretDigest,
    pub claim_sealed: SealedSecret,
}

/// What the claim page shows.
#[derive(Debug, Clone)]
pub struct ClaimView {
    pub draft: Draft,
    pub status: DraftStatus,
    pub partner_name: String,
    /// The application to be connected, with its scopes, when the draft has `oauth`.
    pub app: Option<ConsentView>,
}

/// A successful claim.
#[derive(Debug, Clone)]
pub struct Claimed {
    pub company_id: CompanyId,
    pub company_name: String,
    /// With `oauth`: the code to send the browser back with (`redirect_uri?code&state`).
    pub code: Option<IssuedCode>,
}

/// A partner's name (the operator's command): 1 to 200 characters.
pub(crate) fn check_partner_name(name: &str) -> Result<(), FieldError> {
    validate::text("name", name, MAX_NAME_LEN, false)
}

/// 1 to 255 printable ASCII characters, not only spaces.
pub(crate) fn check_idempotency_key(key: &str) -> Result<(), FieldError> {
    let ok = !key.trim().is_empty()
        && key.len() <= MAX_IDEMPOTENCY_KEY_LEN
        && key.bytes().all(|b| (0x20..=0x7e).contains(&b));
    if ok {
        Ok(())
    } else {
        Err(FieldError::new(
            "idempotencyKey",
            format!(
                "idempotencyKey must be 1 to {MAX_IDEMPOTENCY_KEY_LEN} printable ASCII characters"
            ),
        ))
    }
}

/// The company's fields: a name, and a website that is an absolute http(s) URL.
pub(crate) fn check_company(name: &str, website: Option<&str>) -> Result<(), FieldError> {
    validate::text("company.name", name, MAX_NAME_LEN, false)?;
    if let Some(w) = website {
        validate::http_url("company.website", w)?;
    }
    Ok(())
}

/// A secret of ours: the prefix and 43 alphanumerics.
pub(crate) fn shaped(value: &str, prefix: &str) -> bool {
    value.len() == prefix.len() + crate::kernel::service::SECRET_LEN
        && value.starts_with(prefix)
        && value[prefix.len()..]
            .bytes()
            .all(|b| b.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_names_and_shapes() {
        assert!(check_idempotency_key("order-1").is_ok());
        assert!(check_idempotency_key(" ").is_err());
        assert!(check_idempotency_key("é").is_err());
        assert!(check_idempotency_key(&"k".repeat(256)).is_err());
        assert!(check_company("Acme", Some("https://acme.example")).is_ok());
        assert_eq!(
            check_company("Acme", Some("ftp://acme.example"))
                .unwrap_err()
                .field,
            "company.website"
        );
        assert_eq!(check_company(" ", None).unwrap_err().field, "company.name");
        assert!(shaped(
            &format!("obc_{}", "a".repeat(43)),
            CLAIM_TOKEN_PREFIX
        ));
        assert!(!shaped(
            &format!("obc_{}", "a".repeat(42)),
            CLAIM_TOKEN_PREFIX
        ));
        assert!(!shaped(
            &format!("obs_{}", "a".repeat(43)),
            CLAIM_TOKEN_PREFIX
        ));
        assert!(!shaped(
            &format!("obc_{}-", "a".repeat(42)),
            CLAIM_TOKEN_PREFIX
        ));
    }
}

//! Token-request recovery (spec, "Native installation key rotation and lifetime"; docs/oauth.md
//! and docs/security.md, "Idempotency keys"): a native installation's token request may carry
//! an `Idempotency-Key`; when its response is lost, the exact request retried with the same
//! key gets the same tokens, for as long as they are the family's live successor. The answer
//! is stored sealed (encrypted with the server's secret key, bound to the client, the key's
//! digest and the request's digest) and erased as soon as the successor is used, revoked or
//! expires; the record itself stays a day as a tombstone, so the key keeps refusing another
//! request.

use crate::kernel::error::PortResult;
use crate::kernel::ids::{ApplicationId, CompanyId, FamilyId, GrantId};
use crate::kernel::secret::{SealedSecret, SecretDigest};
use crate::kernel::timestamp::Timestamp;
use crate::oauth::{Family, Grant, StoredToken};

/// A keyed token request: whose (the client's application), its key and its content, as
/// digests (lower-case hex SHA-256).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRequestKey {
    pub application_id: ApplicationId,
    pub key_digest: String,
    pub request_digest: String,
}

impl TokenRequestKey {
    /// Associated data of the sealed answer: it opens only for this client, key and request.
    pub fn aad(&self) -> String {
        format!(
            "oauth_token_requests:{}:{}:{}",
            self.application_id, self.key_digest, self.request_digest
        )
    }
}

/// What a claim of a keyed token request found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenClaim {
    /// The key is ours now (a new record, or a dead claim of the same request taken over),
    /// marked by this token until the issuance answers it.
    Claimed { token: String },
    /// The same request was answered; its answer may still be held (read it with
    /// `token_answer`, which sees whether it was erased meanwhile).
    Answered,
    /// The key holds another request.
    Reused,
    /// The same request is still running (its claim's lease has not ended).
    InFlight,
}

/// The answer an issuance stores with its tokens, completing the claim `token` of `key`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenAnswer {
    pub key: TokenRequestKey,
    /// The claim's token: a claim taken over by another request no longer completes.
    pub token: String,
    pub company_id: CompanyId,
    pub grant_id: GrantId,
    pub family_id: FamilyId,
    pub access_digest: SecretDigest,
    /// The successor: rotating it erases the answer.
    pub refresh_digest: SecretDigest,
    /// The token response, sealed with `key.aad()`.
    pub sealed: SealedSecret,
    /// The answer is erased at this instant at the latest (the access token's expiry).
    pub until: Timestamp,
}

/// An answered record as one consistent read finds it: the answer (`None` once erased) with
/// the tokens it issued, their family and grant as they stand now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldAnswer {
    pub request_digest: String,
    pub company_id: CompanyId,
    pub grant_id: GrantId,
    pub sealed: Option<SealedSecret>,
    pub until: Timestamp,
    pub access: StoredToken,
    pub refresh: StoredToken,
    pub family: Family,
    pub grant: Grant,
}

/// The records of keyed token requests. The answers are written by `OAuthStore::insert_tokens`
/// and `rotate_refresh` (in the issuance's transaction) and erased (`sealed` set to none, the
/// record kept) by `rotate_refresh` of their successor, `revoke_family` of their family,
/// `revoke_access_token` of their access token and `save_authorization_with_key` (every answer
/// of the application), each in its own transaction.
pub trait TokenRecoveryStore {
    /// Atomically (of concurrent claims of one key, exactly one is `Claimed`), over the record
    /// of `(key.application_id, key.key_digest)`: none -> inserted in flight with `token`,
    /// `lease_until` and `now` as its creation, `Claimed`; another `request_digest` ->
    /// `Reused`; answered (held or erased) -> `Answered`; in flight with `lease_until > now`
    /// -> `InFlight`; in flight past its lease -> taken over by compare-and-set on its old
    /// token (`Claimed`, or `InFlight` when another took it first).
    fn claim_token_request(
        &self,
        key: &TokenRequestKey,
        token: &str,
        now: Timestamp,
        lease_until: Timestamp,
    ) -> PortResult<TokenClaim>;
    /// Deletes the in-flight record of `key` holding `token` (its request was refused before
    /// any effect), so that a retry may run.
    fn release_token_request(&self, key: &TokenRequestKey, token: &str) -> PortResult<()>;
    /// The answered record of `(application, key_digest)` with its tokens, family and grant,
    /// read in ONE statement (a consistent snapshot: an erasure is seen together with the
    /// change that caused it). `None` when there is no answered record or its tokens are gone.
    fn token_answer(
        &self,
        application: ApplicationId,
        key_digest: &str,
    ) -> PortResult<Option<HeldAnswer>>;
    /// Erases the answer of `(application, key_digest)`, keeping the record; false when there
    /// was none to erase.
    fn erase_token_answer(&self, application: ApplicationId, key_digest: &str) -> PortResult<bool>;
    /// Erases every answer whose `until` is before `now`, and deletes the records created
    /// before `created_before`. Returns how many records changed or went.
    fn prune_token_requests(&self, now: Timestamp, created_before: Timestamp) -> PortResult<u64>;
}

/// A record as a claim finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundRequest {
    pub request_digest: String,
    /// An issuance answered it (its answer may have been erased since).
    pub answered: bool,
    pub lease_until: Timestamp,
}

/// What a claim does next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenClaimStep {
    /// No record: insert one in flight.
    Insert,
    /// The same request's claim died (its lease ended): take it over.
    TakeOver,
    /// Decided without a write.
    Decided(TokenClaim),
}

/// The one rule of every store's `claim_token_request`.
pub fn token_claim_step(
    found: Option<&FoundRequest>,
    key: &TokenRequestKey,
    now: Timestamp,
) -> TokenClaimStep {
    match found {
        None => TokenClaimStep::Insert,
        Some(f) if f.request_digest != key.request_digest => {
            TokenClaimStep::Decided(TokenClaim::Reused)
        }
        Some(f) if f.answered => TokenClaimStep::Decided(TokenClaim::Answered),
        Some(f) if f.lease_until > now => TokenClaimStep::Decided(TokenClaim::InFlight),
        Some(_) => TokenClaimStep::TakeOver,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claim_steps() {
        let key = TokenRequestKey {
            application_id: ApplicationId(uuid::Uuid::nil()),
            key_digest: "k".into(),
            request_digest: "r".into(),
        };
        let now = Timestamp::from_unix_millis(1_000_000).unwrap();
        let found = |digest: &str, answered, lease: i64| FoundRequest {
            request_digest: digest.into(),
            answered,
            lease_until: Timestamp::from_unix_millis(lease).unwrap(),
        };
        let step = |f: Option<FoundRequest>| token_claim_step(f.as_ref(), &key, now);
        assert_eq!(step(None), TokenClaimStep::Insert);
        assert_eq!(
            step(Some(found("other", true, 0))),
            TokenClaimStep::Decided(TokenClaim::Reused)
        );
        assert_eq!(
            step(Some(found("other", false, 2_000_000))),
            TokenClaimStep::Decided(TokenClaim::Reused)
        );
        assert_eq!(
            step(Some(found("r", true, 0))),
            TokenClaimStep::Decided(TokenClaim::Answered)
        );
        assert_eq!(
            step(Some(found("r", false, 1_000_001))),
            TokenClaimStep::Decided(TokenClaim::InFlight)
        );
        assert_eq!(
            step(Some(found("r", false, 1_000_000))),
            TokenClaimStep::TakeOver
        );
        assert!(key.aad().contains(":k:r"));
    }
}

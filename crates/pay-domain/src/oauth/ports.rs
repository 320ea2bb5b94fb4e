//! What OAuth needs from storage: applications, grants with their token families, one-time
//! codes, rotating refresh tokens, access tokens, and the DPoP `jti` replay store. Each method
//! says what an implementation MUST guarantee; all fail only with `Fault`.

use std::future::Future;
use std::pin::Pin;

use crate::kernel::error::PortResult;
use crate::kernel::ids::{ApplicationId, ClientId, CompanyId, FamilyId, GrantId};
use crate::kernel::secret::SecretDigest;
use crate::kernel::timestamp::Timestamp;
use crate::oauth::recovery::{TokenAnswer, TokenRecoveryStore};
use crate::oauth::{
    ConnectedApp, Family, Grant, Held, KeySwap, StoredApplication, StoredCode, StoredToken,
};

/// Applications, grants, codes and tokens.
pub trait OAuthStore {
    /// Inserts; `id` and `client_id` MUST be unique.
    fn insert_application(&self, app: &StoredApplication) -> PortResult<()>;
    /// Looks an application up by its public client id.
    fn application(&self, client_id: &ClientId) -> PortResult<Option<StoredApplication>>;

    /// Records an approval in ONE transaction: the grant of `(grant.company_id,
    /// grant.application_id)` is created from `grant`, or, when that company and application
    /// already have one, that one keeps its id and `created_at` and takes `grant`'s user,
    /// scopes, `bound_jkt` and `updated_at`, with `revoked_at` cleared. Then `family` (its `grant_id` set to
    /// the grant in force) and `code` are inserted. Returns the grant in force. There is at
    /// most one grant per company and application, even when two approvals run at once.
    fn save_authorization(
        &self,
        grant: &Grant,
        family: &Family,
        code: &StoredCode,
    ) -> PortResult<Grant>;
    /// Consent that accepts a native installation's pending key, in ONE transaction: first
    /// the application's key moves from `swap.from_jkt` accepted and `swap.to_jkt` pending to
    /// `swap.to_jkt` accepted and none pending, by compare-and-set on both; when that changes
    /// no row, nothing is written and the answer is `None`. Then every family of every grant
    /// of the application that is not revoked yet gets `revoked_at = grant.updated_at` (the
    /// old key's access and refresh tokens die with them, and every stored token answer of the
    /// application is erased), and the rest is exactly
    /// `save_authorization`. Of two concurrent calls for one swap, at most one is `Some`.
    fn save_authorization_with_key(
        &self,
        grant: &Grant,
        family: &Family,
        code: &StoredCode,
        swap: &KeySwap,
    ) -> PortResult<Option<Grant>>;
    /// Sets a native application's pending key (`None` clears it) where its accepted key is
    /// still `accepted_jkt`, in one compare-and-set; false when the accepted key is another
    /// (or the application has none).
    fn set_pending_key(
        &self,
        application: ApplicationId,
        accepted_jkt: &str,
        pending_jkt: Option<&str>,
    ) -> PortResult<bool>;
    /// The grant of a company and application.
    fn grant(&self, company: CompanyId, application: ApplicationId) -> PortResult<Option<Grant>>;
    /// Every grant of `company` (revoked ones too), newest first (`created_at`, then id,
    /// descending), each with its application's name and client id, the newest `created_at`
    /// of the grant's refresh tokens as its last use (`None` when it has none), and, when
    /// the application belongs to an official native installation, that installation's
    /// platform, site URL and site name.
    fn company_grants(&self, company: CompanyId) -> PortResult<Vec<ConnectedApp>>;
    /// A code by digest, with its family and grant (used or expired ones too).
    fn code(&self, digest: &SecretDigest) -> PortResult<Option<Held<StoredCode>>>;
    /// Redeems the code: sets `used_at = at` in ONE atomic statement, only where it is still
    /// null (`UPDATE ... WHERE used_at IS NULL`). True for exactly one of any number of
    /// concurrent calls; false when it was already used or does not exist.
    fn claim_code(&self, digest: &SecretDigest, at: Timestamp) -> PortResult<bool>;

    /// Inserts a family's first access and refresh tokens in ONE transaction (both or
    /// neither). Digests MUST be unique per kind. With `answer`, the same transaction answers
    /// its claim (`TokenRecoveryStore`): the in-flight record of `answer.key` holding
    /// `answer.token` takes the answer's fields; when no such record is in flight, nothing is
    /// written and the call fails (a `Fault`).
    fn insert_tokens(
        &self,
        access: &StoredToken,
        refresh: &StoredToken,
        answer: Option<&TokenAnswer>,
    ) -> PortResult<()>;
    /// A refresh token by digest, with its family and grant (spent and revoked ones too).
    fn refresh_token(&self, digest: &SecretDigest) -> PortResult<Option<Held<StoredToken>>>;
    /// Rotates a refresh token in ONE transaction: inserts `access` and `refresh` (the new
    /// refresh token stored before the old is spent), then sets the old one's `spent_at = at`
    /// only where `spent_at` and `revoked_at` are still null. When that update changes no row
    /// everything is rolled back and the answer is false. Of any number of concurrent calls
    /// with one old token, exactly one returns true. The same transaction erases the stored
    /// token answers whose successor is `old` (it was used), and with `answer` answers its
    /// claim as `insert_tokens` does (a lost claim rolls everything back and fails).
    fn rotate_refresh(
        &self,
        old: &SecretDigest,
        access: &StoredToken,
        refresh: &StoredToken,
        at: Timestamp,
        answer: Option<&TokenAnswer>,
    ) -> PortResult<bool>;
    /// An access token by digest, with its family and grant (expired and revoked ones too).
    fn access_token(&self, digest: &SecretDigest) -> PortResult<Option<Held<StoredToken>>>;

    /// Revokes a whole family: sets its `revoked_at = at` where still null. Every token of the
    /// family reads as revoked from then on, including tokens inserted after this call; the
    /// family's stored token answers are erased in the same transaction. False when the family
    /// does not exist or was already revoked.
    fn revoke_family(&self, family: FamilyId, at: Timestamp) -> PortResult<bool>;
    /// Revokes a grant (a native installation's disconnect): sets its `revoked_at = at` where
    /// still null, and in the same transaction `revoked_at = at` on every family of the grant
    /// not revoked yet, and erases the stored token answers of the grant. Every code and token
    /// of the grant reads as revoked from then on; a later approval of the same company and
    /// application clears the grant (`save_authorization`), not its old families. False when the
    /// grant does not exist or was already revoked.
    fn revoke_grant(&self, grant: GrantId, at: Timestamp) -> PortResult<bool>;
    /// A security reset's OAuth part, in ONE transaction: every grant of `company` not revoked
    /// yet gets `revoked_at = at`, every family of every grant of the company not revoked yet
    /// too (so a later approval, which clears the grant's `revoked_at`, brings none of the
    /// old tokens back), and the stored token answers of those grants are erased. Returns
    /// every grant of the company (revoked now or before), saying which this call revoked
    /// and which belong to an official native installation (an application with a template).
    fn revoke_company_grants(
        &self,
        company: CompanyId,
        at: Timestamp,
    ) -> PortResult<Vec<CompanyGrant>>;
    /// Revokes one access token (RFC 7009) where not yet revoked, erasing the stored token
    /// answer that issued it in the same transaction; false otherwise.
    fn revoke_access_token(&self, digest: &SecretDigest, at: Timestamp) -> PortResult<bool>;
    /// Deletes codes and tokens that expired before `before` (none is read after it: an
    /// expired code, access or refresh token is refused whatever else it says), and refresh
    /// tokens spent before `spent_before` (kept until then only to detect their reuse).
    /// Returns how many rows went.
    fn prune_oauth(&self, before: Timestamp, spent_before: Timestamp) -> PortResult<u64>;
}

/// A grant as `OAuthStore::revoke_company_grants` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompanyGrant {
    pub id: GrantId,
    /// This call revoked it (false: it was revoked before).
    pub revoked_now: bool,
    /// Its application is an official native installation's.
    pub native: bool,
}

/// The DPoP `jti` replay store (RFC 9449 section 11.1).
pub trait DpopReplayStore {
    /// Records a proof's `(htu, jti_digest)` (`jti_digest`: lower-case hex SHA-256 of the
    /// `jti`), kept until `keep_until`. True when it was not recorded yet; false for a replay.
    /// The check and the write are ONE atomic step on a unique key over `(htu, jti_digest)`:
    /// of any number of concurrent calls with one pair, exactly one returns true. A pair
    /// recorded earlier is a replay until it is pruned, whatever its `keep_until`.
    fn record_jti(&self, htu: &str, jti_digest: &str, keep_until: Timestamp) -> PortResult<bool>;
    /// Forgets the pairs kept until before `before`. Returns how many went.
    fn prune_jtis(&self, before: Timestamp) -> PortResult<u64>;
    /// A DPoP request's token and `jti` at once (one round trip where the backend allows):
    /// `OAuthStore::access_token` of `digest`, and, only when that token exists and is bound
    /// to `proof.jkt`, `record_jti` of the proof (`Some(true)` new, `Some(false)` a replay).
    /// `None` when nothing was recorded: no such token, or not bound to that key (a proof
    /// that no live binding vouches for never writes to the store). The record keeps every
    /// rule of `record_jti`: one atomic step on the `(htu, jti_digest)` key.
    fn access_token_recording_jti(
        &self,
        digest: &SecretDigest,
        proof: &JtiRecord<'_>,
    ) -> PortResult<(Option<Held<StoredToken>>, Option<bool>)>;
    /// `access_token_recording_jti` without holding the caller's thread while the record
    /// commits, for a token this process already holds in memory bound to `proof.jkt`: the
    /// record is handed over before this returns (so records are decided in the order of the
    /// calls, with every rule of `record_jti`), and the returned future resolves once it is
    /// committed. `None` (nothing recorded, nothing read) when the store has no such copy or no
    /// such path: the caller then uses `access_token_recording_jti` on a thread that may block.
    /// The call itself MUST NOT wait on the disk, the network or other requests (a store may
    /// decide the record on the caller's thread when that takes microseconds of memory and
    /// page-cache work under a lock held as long, and return a ready future). Stores without a
    /// copy keep this default.
    fn start_recording_jti(
        &self,
        digest: &SecretDigest,
        proof: &JtiRecord<'_>,
    ) -> Option<PendingJti> {
        let _ = (digest, proof);
        None
    }
}

/// How a record started by `DpopReplayStore::start_recording_jti` ended, once committed.
#[derive(Debug, Clone)]
pub enum HeldRecord {
    /// Nothing that the copy is made of changed since it was read: the token (with family and
    /// grant) and whether the record was new (`false`: a replay).
    Current(Box<Held<StoredToken>>, bool),
    /// The record was made (`true` new, `false` a replay), but a token, family or grant changed
    /// since the copy was read (the copy is dropped): the token must be read again.
    Stale(bool),
}

/// A `jti` record under way, resolved after its commit (a future of the store's own making: the
/// domain awaits it and does no I/O).
pub type PendingJti = Pin<Box<dyn Future<Output = PortResult<HeldRecord>> + Send>>;

/// What `DpopReplayStore::access_token_recording_jti` records of a verified proof.
#[derive(Debug, Clone, Copy)]
pub struct JtiRecord<'a> {
    /// The proof key's thumbprint: recorded only for a token bound to it.
    pub jkt: &'a str,
    /// The normalised `htu`.
    pub htu: &'a str,
    /// Lower-case hex SHA-256 of the `jti`.
    pub jti_digest: &'a str,
    /// The end of the proof's window.
    pub keep_until: Timestamp,
}

/// Every store port of OAuth, as one object (a blanket impl covers any type with all three).
pub trait OAuthPorts: OAuthStore + DpopReplayStore + TokenRecoveryStore + Send + Sync {}

impl<T> OAuthPorts for T where T: OAuthStore + DpopReplayStore + TokenRecoveryStore + Send + Sync {}

//! Port traits: what the domain needs from the outside world. Adapters implement them; each
//! method says what an implementation MUST guarantee. All are blocking: callers on an async
//! runtime run them on a blocking pool.

use crate::error::DomainResult;
use crate::ids::{CompanyId, KeyId, LinkUid, PartnerId, UserId};
use crate::integration::{Integration, StoredIntegration};
use crate::link::{LinkStatus, PaymentLink};
use crate::secret::SecretDigest;
use crate::settings::PaySettings;
use crate::tenancy::{Company, Membership, Role, UserRecord};
use crate::timestamp::Timestamp;
use crate::webhook::{
    AfterAttempt, AttemptOutcome, CallbackKind, CompanyCallback, Delivery, DeliveryFilter,
    LinkWebhook, SealedSecret,
};

/// The service clock. Business time (expiry, schedules) comes from here so tests and the
/// sandbox test clock can move it.
pub trait Clock: Send + Sync {
    fn now(&self) -> Timestamp;
}

/// The sandbox test clock: moves the service clock forward (never back).
pub trait ClockControl: Send + Sync {
    /// Moves the clock `by` forward and returns the new now.
    fn advance(&self, by: time::Duration) -> Timestamp;
}

/// Randomness, digests and password hashing.
pub trait Crypto: Send + Sync {
    /// `len` characters from `[A-Za-z0-9]`, from a cryptographically secure generator.
    fn random_alphanumeric(&self, len: usize) -> String;
    /// A fresh time-ordered UUID (v7).
    fn new_uuid(&self) -> uuid::Uuid;
    /// Lower-case hex SHA-256 of a high-entropy secret.
    fn digest(&self, secret: &str) -> SecretDigest;
    /// Whether `secret` digests to `digest`, compared in constant time.
    fn digest_matches(&self, secret: &str, digest: &SecretDigest) -> bool;
    /// A salted, slow password hash (PHC string).
    fn hash_password(&self, password: &str) -> DomainResult<String>;
    /// Verifies a password. With `None` (unknown user) it MUST spend the same effort as a real
    /// verification and return false, so response time does not reveal which e-mails exist.
    fn verify_password(&self, password: &str, phc: Option<&str>) -> bool;
}

/// A new team: its company, settings and first key, and its owner (a new user, or an existing
/// one by id).
#[derive(Debug, Clone)]
pub struct NewTenant {
    pub new_user: Option<UserRecord>,
    pub owner: UserId,
    pub company: Company,
    pub settings: PaySettings,
    pub integration: StoredIntegration,
}

/// Users, companies and memberships.
pub trait TenancyStore {
    /// Creates everything in `NewTenant` in ONE transaction: all of it or none. A user with the
    /// same e-mail MUST make it fail without writing anything.
    fn create_tenant(&self, tenant: &NewTenant) -> DomainResult<()>;
    /// Adds `user` to `company` with `role` in ONE transaction, creating the user first when
    /// `new_user` is given. Adding an existing member MUST fail without writing anything.
    fn add_member(
        &self,
        new_user: Option<&UserRecord>,
        user: UserId,
        company: CompanyId,
        role: Role,
        at: Timestamp,
    ) -> DomainResult<()>;
    /// Looks a user up by normalised e-mail.
    fn user_by_email(&self, email: &str) -> DomainResult<Option<UserRecord>>;
    /// Whether no user exists yet (first start of an empty database).
    fn is_empty(&self) -> DomainResult<bool>;
    /// The user's companies, oldest membership first.
    fn memberships(&self, user: UserId) -> DomainResult<Vec<Membership>>;
    /// The user's role in one company, or `None` when not a member.
    fn role(&self, user: UserId, company: CompanyId) -> DomainResult<Option<Role>>;
    /// A company and its settings, read together (one round trip where possible).
    fn company_with_settings(
        &self,
        company: CompanyId,
    ) -> DomainResult<Option<(Company, PaySettings)>>;
}

/// A signed-in browser session as stored (token and CSRF token as digests only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSession {
    pub id: crate::ids::SessionId,
    pub token_digest: SecretDigest,
    pub csrf_digest: SecretDigest,
    pub user_id: UserId,
    /// The company that payment routes act on for this session.
    pub company_id: CompanyId,
    pub created_at: Timestamp,
    pub expires_at: Timestamp,
}

/// Browser sessions and the login throttle.
pub trait SessionStore {
    fn insert_session(&self, session: &StoredSession) -> DomainResult<()>;
    /// Finds a session by token digest (expired ones included; the caller checks).
    fn session_by_token(&self, token_digest: &SecretDigest) -> DomainResult<Option<StoredSession>>;
    fn delete_session(&self, token_digest: &SecretDigest) -> DomainResult<()>;
    /// Records one failed login for a throttle key (a digest, never the raw e-mail).
    fn record_login_failure(&self, key: &str, at: Timestamp) -> DomainResult<()>;
    /// Failed logins for `key` at or after `since`.
    fn login_failures_since(&self, key: &str, since: Timestamp) -> DomainResult<u64>;
    fn clear_login_failures(&self, key: &str) -> DomainResult<()>;
}

/// API-key integrations.
pub trait IntegrationStore {
    /// Inserts; `key_id`, `form_key_id` and `partner_id` MUST be unique.
    fn insert_integration(&self, integration: &StoredIntegration) -> DomainResult<()>;
    /// The company's integrations, newest first.
    fn integrations(&self, company: CompanyId) -> DomainResult<Vec<Integration>>;
    /// Looks up by public key id, across companies (authentication).
    fn integration_by_key_id(&self, key_id: &KeyId) -> DomainResult<Option<StoredIntegration>>;
    /// Sets `enabled` on the company's integration; `None` when it has no such integration.
    fn set_integration_enabled(
        &self,
        company: CompanyId,
        partner: PartnerId,
        enabled: bool,
    ) -> DomainResult<Option<Integration>>;
    /// Deletes the company's integration; false when it has no such integration.
    fn delete_integration(&self, company: CompanyId, partner: PartnerId) -> DomainResult<bool>;
    /// Records a use of the key.
    fn touch_integration(&self, partner: PartnerId, at: Timestamp) -> DomainResult<()>;
}

/// Which links a list returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkFilter {
    /// `Some`: only links created by this OAuth grant.
    pub grant_id: Option<uuid::Uuid>,
}

/// Payment links.
pub trait PaymentLinkStore {
    /// Inserts; `uid` MUST be unique across companies.
    fn insert_link(&self, link: &PaymentLink) -> DomainResult<()>;
    /// Up to `limit` newest non-anonymous links of the company (newest first, ties by id).
    fn links(
        &self,
        company: CompanyId,
        filter: LinkFilter,
        limit: usize,
    ) -> DomainResult<Vec<PaymentLink>>;
    /// The company's link with this uid; `None` for another company's.
    fn link(&self, company: CompanyId, uid: &LinkUid) -> DomainResult<Option<PaymentLink>>;
    /// Compare-and-set: moves the link only if its status is still `from`; false otherwise.
    fn set_link_status(
        &self,
        company: CompanyId,
        uid: &LinkUid,
        from: LinkStatus,
        to: LinkStatus,
        at: Timestamp,
    ) -> DomainResult<bool>;
}

/// Merchant settings.
pub trait SettingsStore {
    fn save_settings(
        &self,
        company: CompanyId,
        settings: &PaySettings,
        at: Timestamp,
    ) -> DomainResult<()>;
}

/// Encryption of secrets at rest (AEAD). The associated data binds a sealed value to the row
/// it belongs to (`aad`: table and row id) and to the key that sealed it (the sealer adds the
/// key id and the version of its format): opening with other associated data, or after the
/// stored key id was changed, MUST fail.
pub trait SecretSealer: Send + Sync {
    fn seal(&self, secret: &crate::secret::Secret, aad: &str) -> DomainResult<SealedSecret>;
    /// Fails for an unknown key id, tampered bytes or other associated data.
    fn open(&self, sealed: &SealedSecret, aad: &str) -> DomainResult<crate::secret::Secret>;
    /// Whether `sealed` is in the form `seal` writes now (the current key, the current format).
    /// A value that is not still opens while its key is configured; its row is sealed again on
    /// its next write.
    fn is_current(&self, sealed: &SealedSecret) -> bool;
}

/// Webhook signatures.
pub trait WebhookSigner: Send + Sync {
    /// `t=<t>,v1=<hex>` with one `v1=` per secret, in order: hex HMAC-SHA256 keyed with the
    /// secret's bytes over `{t}.{body}`.
    fn signature_header(&self, secrets: &[crate::secret::Secret], t: i64, body: &[u8]) -> String;
}

/// One attempt, as the delivery log keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptRecord {
    pub delivery_id: uuid::Uuid,
    /// 1-based.
    pub number: u32,
    pub at: Timestamp,
    pub outcome: AttemptOutcome,
}

/// The webhook outbox and callback configuration.
pub trait WebhookStore {
    fn company_callback(
        &self,
        company: CompanyId,
        kind: CallbackKind,
    ) -> DomainResult<Option<CompanyCallback>>;
    /// Compare-and-set: writes `callback` only if the stored row of its (company, kind) has
    /// version `callback.version - 1` (for version 1: only if there is no row). Returns false,
    /// writing nothing, when another save came first.
    fn save_company_callback(&self, callback: &CompanyCallback) -> DomainResult<bool>;
    /// Inserts deliveries in ONE transaction.
    fn insert_deliveries(&self, deliveries: &[Delivery]) -> DomainResult<()>;
    /// Atomically claims up to `limit` deliveries that are pending or retrying with
    /// `next_attempt_at <= now`, oldest due first, and moves their `next_attempt_at` to
    /// `lease_until`, so no other claimer (another thread or instance) gets them before the
    /// lease ends. Concurrent claimers MUST NOT receive the same delivery (PostgreSQL:
    /// `FOR UPDATE SKIP LOCKED`; SQLite: one writer).
    fn claim_due_deliveries(
        &self,
        now: Timestamp,
        lease_until: Timestamp,
        limit: usize,
    ) -> DomainResult<Vec<Delivery>>;
    /// Records an attempt and the delivery's new state in ONE transaction: `attempts` becomes
    /// `attempt.number`, and status, `next_attempt_at`, `last_attempt_at`,
    /// `last_response_status` and `last_error` follow.
    fn record_attempt(&self, attempt: &AttemptRecord, after: &AfterAttempt) -> DomainResult<()>;
    /// Records a batch of attempts, each as `record_attempt` would, in as few transactions as
    /// the adapter can (the dispatcher records a whole round at once). Returns, per item,
    /// whether it was recorded; an attempt whose delivery moved on (a stale claim) is skipped
    /// with `false`. The default records them one by one.
    fn record_attempts(&self, batch: &[(AttemptRecord, AfterAttempt)]) -> DomainResult<Vec<bool>> {
        batch
            .iter()
            .map(|(attempt, after)| self.record_attempt(attempt, after).map(|()| true))
            .collect()
    }
    /// Points deliveries at the URL their next attempt goes to (their owner's callback changed
    /// since they were queued): sets `url` of each listed delivery that is still pending or
    /// retrying, in ONE transaction.
    fn retarget_deliveries(&self, moves: &[(uuid::Uuid, String)]) -> DomainResult<()>;
    /// The company's deliveries matching the filter, newest first, at most `filter.limit`.
    fn deliveries(
        &self,
        company: CompanyId,
        filter: &DeliveryFilter,
    ) -> DomainResult<Vec<Delivery>>;
    /// One delivery of the company.
    fn delivery(&self, company: CompanyId, id: uuid::Uuid) -> DomainResult<Option<Delivery>>;
    /// The attempts of one delivery of the company, oldest first.
    fn attempts(&self, company: CompanyId, id: uuid::Uuid) -> DomainResult<Vec<AttemptRecord>>;
    /// Emits one event of a link in ONE transaction: increments the link's event sequence
    /// (1, 2, ... per link), builds the deliveries for that sequence number with `build`, and
    /// inserts them. Returns what was inserted. Concurrent calls for one link MUST get
    /// distinct, increasing numbers.
    fn enqueue_link_event(
        &self,
        link: crate::ids::PaymentLinkId,
        build: &dyn Fn(u64) -> Vec<Delivery>,
    ) -> DomainResult<Vec<Delivery>>;
}

/// Anonymous links and a per-address rate limit.
pub trait AnonymousLinkStore {
    /// Inserts an anonymous link and its callback (when it has one) in ONE transaction.
    fn insert_anonymous_link(
        &self,
        link: &PaymentLink,
        webhook: Option<&LinkWebhook>,
    ) -> DomainResult<()>;
    /// The callback of an anonymous link.
    fn link_webhook(&self, link_uid: &str) -> DomainResult<Option<LinkWebhook>>;
    /// Counts one request in a rate-limit bucket (a digest, never a raw address).
    fn record_rate_hit(&self, bucket: &str, at: Timestamp) -> DomainResult<()>;
    /// Hits in the bucket at or after `since`.
    fn rate_hits_since(&self, bucket: &str, since: Timestamp) -> DomainResult<u64>;
}

/// Prices for quotes.
pub trait PriceSource: Send + Sync {
    /// The price of one unit of `asset` (an asset identifier) in `unit` (an ISO 4217 code such
    /// as `USD`, or an asset identifier); `None` when the source does not know the pair.
    fn price(&self, asset: &str, unit: &str) -> DomainResult<Option<crate::amount::Decimal>>;
}

/// A deposit channel a processor opened for a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DepositChannel {
    pub channel_id: String,
    pub composite_channel_id: String,
    pub deposit_address: String,
    pub source_chain: String,
}

/// The payment processor: which assets it takes, its fee, and deposit channels. What happens on
/// a channel (deposits, settlement, failure) comes back through the use cases.
pub trait Processor: Send + Sync {
    fn name(&self) -> &'static str;
    /// The fee, percent of the quote's target.
    fn fee_percent(&self) -> crate::amount::Decimal;
    /// Whether payers can pay with this asset.
    fn supports(&self, asset: &crate::assets::DestinationAsset) -> bool;
    /// The merchant's settlement wallet for `asset` (where settled funds go); `None` when the
    /// merchant has none there, which blocks payment starts
    /// (`start_blocked_missing_company_wallet`).
    fn merchant_wallet(
        &self,
        company: crate::ids::CompanyId,
        asset: &crate::assets::DestinationAsset,
    ) -> DomainResult<Option<String>>;
    /// Opens a deposit channel for `amount` of `asset`. MUST be idempotent per `session`:
    /// asking again returns the same channel.
    fn open_channel(
        &self,
        session: uuid::Uuid,
        asset: &crate::assets::DestinationAsset,
        amount: crate::amount::Decimal,
    ) -> DomainResult<DepositChannel>;
}

/// Readiness and housekeeping.
pub trait HealthCheck {
    /// A round trip to the database.
    fn ping(&self) -> DomainResult<()>;
    /// Deletes rows that no rule reads any more: sessions that expired before
    /// `sessions_before`, login failures before `failures_before`, rate-limit hits before
    /// `hits_before`. Returns how many rows went.
    fn prune(
        &self,
        sessions_before: Timestamp,
        failures_before: Timestamp,
        hits_before: Timestamp,
    ) -> DomainResult<u64>;
}

/// Everything the service needs from storage, as one object.
pub trait PayStore:
    TenancyStore
    + SessionStore
    + IntegrationStore
    + PaymentLinkStore
    + SettingsStore
    + WebhookStore
    + AnonymousLinkStore
    + crate::checkout::CheckoutStore
    + crate::gateway::FormKeyStore
    + crate::mail::MailStore
    + HealthCheck
    + Send
    + Sync
{
}

impl<T> PayStore for T where
    T: TenancyStore
        + SessionStore
        + IntegrationStore
        + PaymentLinkStore
        + SettingsStore
        + WebhookStore
        + AnonymousLinkStore
        + crate::checkout::CheckoutStore
        + crate::gateway::FormKeyStore
        + crate::mail::MailStore
        + HealthCheck
        + Send
        + Sync
{
}

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

/// Real time (the process clock). Security windows and leases read it as it is; what a company
/// owns and schedules reads it plus that company's sandbox test clock offset
/// (`crate::testclock`). Tests control it.
pub trait Clock: Send + Sync {
    fn now(&self) -> Timestamp;
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
    /// Moves the company's sandbox test clock forward: adds `by_ms` (> 0) to its
    /// `test_clock_offset_ms` in ONE atomic statement (concurrent moves add up), unless the
    /// offset would then pass `max_offset_ms`. Returns the new offset, or `None` when nothing
    /// was written (no such company, or past the maximum). Later reads MUST see the new offset
    /// (a cached company read of this store is dropped).
    fn advance_test_clock(
        &self,
        company: CompanyId,
        by_ms: i64,
        max_offset_ms: i64,
    ) -> DomainResult<Option<i64>>;
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

/// Browser sessions.
pub trait SessionStore {
    fn insert_session(&self, session: &StoredSession) -> DomainResult<()>;
    /// Finds a session by token digest (expired ones included; the caller checks).
    fn session_by_token(&self, token_digest: &SecretDigest) -> DomainResult<Option<StoredSession>>;
    fn delete_session(&self, token_digest: &SecretDigest) -> DomainResult<()>;
}

/// Rate limits: sliding windows of hits per bucket, on real time.
pub trait RateLimitStore {
    /// Counts one hit in `bucket` (a digest, never a raw address or e-mail) at `at` if fewer
    /// than `limit` of the bucket's hits lie at or after `at - window`. Returns whether it was counted (false: refused, nothing written). The
    /// count and the decision MUST be atomic: concurrent hits of one bucket never pass
    /// `limit` together (a lock per bucket, or a single writer).
    fn hit(
        &self,
        bucket: &str,
        at: Timestamp,
        window: time::Duration,
        limit: u64,
    ) -> DomainResult<bool>;
    /// Forgets the bucket's hits (a successful login clears its failures).
    fn clear_hits(&self, bucket: &str) -> DomainResult<()>;
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
    /// Atomically claims up to `limit` deliveries that are pending or retrying, due on their
    /// company's clock (`next_attempt_at <= now + that company's test-clock offset`) and not
    /// leased (a lease runs on real time: a moved clock MUST NOT end it), oldest due first, and
    /// leases them until `lease_until` (shown as their `next_attempt_at` meanwhile), so no other
    /// claimer (another thread or instance) gets them before the lease ends; recording an
    /// attempt ends the lease. Concurrent claimers MUST NOT receive the same delivery
    /// (PostgreSQL: `FOR UPDATE SKIP LOCKED`; SQLite: one writer). `now` is real time.
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

/// Anonymous links.
pub trait AnonymousLinkStore {
    /// Inserts an anonymous link and its callback (when it has one) in ONE transaction.
    fn insert_anonymous_link(
        &self,
        link: &PaymentLink,
        webhook: Option<&LinkWebhook>,
    ) -> DomainResult<()>;
    /// The callback of an anonymous link.
    fn link_webhook(&self, link_uid: &str) -> DomainResult<Option<LinkWebhook>>;
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
    /// `sessions_before` and rate-limit hits before `hits_before`. Returns how many rows went.
    fn prune(&self, sessions_before: Timestamp, hits_before: Timestamp) -> DomainResult<u64>;
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
    + RateLimitStore
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
        + RateLimitStore
        + crate::checkout::CheckoutStore
        + crate::gateway::FormKeyStore
        + crate::mail::MailStore
        + HealthCheck
        + Send
        + Sync
{
}

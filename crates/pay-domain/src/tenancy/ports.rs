//! What tenancy needs from storage: users, companies and memberships, signed-in sessions and
//! API keys. Each method says what an implementation MUST guarantee.

use crate::kernel::error::PortResult;
use crate::kernel::events::EventRecord;
use crate::kernel::ids::{CompanyId, KeyId, PartnerId, UserId};
use crate::kernel::secret::SecretDigest;
use crate::kernel::timestamp::Timestamp;
use crate::tenancy::keys::{Integration, StoredIntegration};
use crate::tenancy::{Company, Membership, PaySettings, Role, TeamMember, UserRecord};

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
    fn create_tenant(&self, tenant: &NewTenant) -> PortResult<()>;
    /// Adds `user` to `company` with `role` in ONE transaction, creating the user first when
    /// `new_user` is given. Adding an existing member MUST fail without writing anything.
    fn add_member(
        &self,
        new_user: Option<&UserRecord>,
        user: UserId,
        company: CompanyId,
        role: Role,
        at: Timestamp,
    ) -> PortResult<()>;
    /// Looks a user up by normalised e-mail.
    fn user_by_email(&self, email: &str) -> PortResult<Option<UserRecord>>;
    /// Whether no user exists yet (first start of an empty database).
    fn is_empty(&self) -> PortResult<bool>;
    /// The user's companies, oldest membership first.
    fn memberships(&self, user: UserId) -> PortResult<Vec<Membership>>;
    /// The company's members with their e-mail and role, oldest membership first (then by
    /// e-mail).
    fn members(&self, company: CompanyId) -> PortResult<Vec<TeamMember>>;
    /// The user's role in one company, or `None` when not a member.
    fn role(&self, user: UserId, company: CompanyId) -> PortResult<Option<Role>>;
    /// Moves the company's sandbox test clock forward: adds `by_ms` (> 0) to its
    /// `test_clock_offset_ms` in ONE atomic statement (concurrent moves add up), unless the
    /// offset would then pass `max_offset_ms`. Returns the new offset, or `None` when nothing
    /// was written (no such company, or past the maximum). `event` (the move's
    /// `DomainEvent::ClockMoved`) is inserted into the event outbox in the same transaction, and
    /// only when the offset was written. Later reads MUST see the new offset (a cached company
    /// read of this store is dropped).
    fn advance_test_clock(
        &self,
        company: CompanyId,
        by_ms: i64,
        max_offset_ms: i64,
        event: Option<&EventRecord>,
    ) -> PortResult<Option<i64>>;
    /// Sets (or with `None` clears) the company's verified payment-link domain. A domain
    /// belongs to one company at most (unique): `Taken` when another has it, writing nothing.
    /// Later reads MUST see the change (a cached company read of this store is dropped).
    fn set_payment_link_domain(
        &self,
        company: CompanyId,
        domain: Option<&str>,
    ) -> PortResult<DomainWrite>;
    /// Sets (or with `None` clears) the company's website; `false` when there is no such
    /// company. Later reads MUST see the change.
    fn set_company_website(&self, company: CompanyId, website: Option<&str>) -> PortResult<bool>;
    /// A company and its settings, read together (one round trip where possible).
    fn company_with_settings(
        &self,
        company: CompanyId,
    ) -> PortResult<Option<(Company, PaySettings)>>;
}

/// What `set_payment_link_domain` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DomainWrite {
    Written,
    /// No such company.
    NoCompany,
    /// Another company has this domain.
    Taken,
}

/// A signed-in browser session as stored (token and CSRF token as digests only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSignIn {
    pub id: crate::kernel::ids::SignInId,
    pub token_digest: SecretDigest,
    pub csrf_digest: SecretDigest,
    pub user_id: UserId,
    /// The company that payment routes act on for this session.
    pub company_id: CompanyId,
    pub created_at: Timestamp,
    pub expires_at: Timestamp,
}

/// Browser sessions.
pub trait SignInStore {
    fn insert_sign_in(&self, session: &StoredSignIn) -> PortResult<()>;
    /// Finds a session by token digest (expired ones included; the caller checks).
    fn sign_in_by_token(&self, token_digest: &SecretDigest) -> PortResult<Option<StoredSignIn>>;
    fn delete_sign_in(&self, token_digest: &SecretDigest) -> PortResult<()>;
    /// Deletes, in one transaction, every sign-in of every user who is a member of `company`
    /// (whichever company each sign-in acts on: a security reset). Returns how many went.
    fn delete_member_sign_ins(&self, company: CompanyId) -> PortResult<u64>;
}

/// API-key integrations.
pub trait IntegrationStore {
    /// Inserts; `key_id`, `form_key_id` and `partner_id` MUST be unique.
    fn insert_integration(&self, integration: &StoredIntegration) -> PortResult<()>;
    /// The company's integrations, newest first.
    fn integrations(&self, company: CompanyId) -> PortResult<Vec<Integration>>;
    /// Looks up by public key id, across companies (authentication).
    fn integration_by_key_id(&self, key_id: &KeyId) -> PortResult<Option<StoredIntegration>>;
    /// Sets `enabled` on the company's integration; `None` when it has no such integration.
    fn set_integration_enabled(
        &self,
        company: CompanyId,
        partner: PartnerId,
        enabled: bool,
    ) -> PortResult<Option<Integration>>;
    /// Deletes the company's integration; false when it has no such integration.
    fn delete_integration(&self, company: CompanyId, partner: PartnerId) -> PortResult<bool>;
    /// Records a use of the key.
    fn touch_integration(&self, partner: PartnerId, at: Timestamp) -> PortResult<()>;
}

/// Every store port of tenancy, as one object (a blanket impl covers any type with all three).
pub trait TenancyPorts: TenancyStore + SignInStore + IntegrationStore + Send + Sync {}

impl<T> TenancyPorts for T where T: TenancyStore + SignInStore + IntegrationStore + Send + Sync {}

//! What customers need from outside: contacts in storage, and the portal signing keys.

use crate::customers::portal::PortalKey;
use crate::customers::{Contact, ContactKind, ContactQuery, ContactRef, GivenFields, Upserted};
use crate::kernel::error::PortResult;
use crate::kernel::ids::{CompanyId, ContactId};
use crate::kernel::keyed::Seal;
use crate::kernel::timestamp::Timestamp;
use crate::tenancy::Scope;

/// Contacts (customers and vendors in one table).
pub trait ContactStore {
    /// Inserts `contact`, or, when the company already has a contact whose e-mail has the same
    /// key (trimmed, lower-case: `Contact::email_key`), updates that one instead: it gains
    /// `contact.kind`'s role (`ContactKind::with`: a customer given as a vendor becomes both),
    /// only the `given` fields take `contact`'s values, `updated_at` becomes
    /// `contact.updated_at`, and id, uid, e-mail and `created_at` stay. MUST be atomic: two
    /// concurrent upserts of one e-mail make one contact (one `Created`, one `Updated`), with
    /// both roles when they gave different ones. `uid` MUST be unique across companies.
    ///
    /// In the SAME transaction, the completion `seal` makes of what the upsert did (a keyed
    /// create, `kernel::keyed`) marks its idempotency record answered; `None` with nothing
    /// written when that claim was taken over (no unanswered record holds its token).
    fn upsert_contact_sealed(
        &self,
        contact: &Contact,
        given: GivenFields,
        seal: Seal<'_, Upserted>,
    ) -> PortResult<Option<Upserted>>;
    /// `upsert_contact_sealed` without a key.
    fn upsert_contact(&self, contact: &Contact, given: GivenFields) -> PortResult<Upserted> {
        self.upsert_contact_sealed(contact, given, &|_| Ok(None))?
            .ok_or_else(|| crate::kernel::error::Fault::new("an unkeyed upsert lost a claim"))
    }
    /// Up to `limit` newest contacts of the company that have the role `kind` (a `Both`
    /// contact has each; newest first, ties by id).
    fn contacts(
        &self,
        company: CompanyId,
        kind: ContactKind,
        limit: usize,
    ) -> PortResult<Vec<Contact>>;
    /// The company's contact with this id or uid; `None` for another company's.
    fn contact(&self, company: CompanyId, by: &ContactRef) -> PortResult<Option<Contact>>;
    /// Up to `limit` of the company's contacts matching `query` (see `ContactQuery`), newest
    /// first, each with its known wallet addresses (oldest first).
    fn search_contacts(
        &self,
        company: CompanyId,
        query: &ContactQuery,
        limit: usize,
    ) -> PortResult<Vec<crate::customers::ContactWithWallets>>;
    /// Adds `address` (compared by `address_key`) to the known wallets of the company's
    /// contact; knowing it already changes nothing. MUST be idempotent under concurrent
    /// calls (one row per contact and address key).
    fn add_contact_wallet(
        &self,
        company: CompanyId,
        contact: ContactId,
        address: &str,
        address_key: &str,
        at: Timestamp,
    ) -> PortResult<()>;
    /// The company's contacts that know a wallet with this address key, newest first.
    fn contacts_with_wallet(
        &self,
        company: CompanyId,
        address_key: &str,
    ) -> PortResult<Vec<Contact>>;
    /// Sets the contact's name (the portal's edit); false when the company has no such contact.
    fn rename_contact(
        &self,
        company: CompanyId,
        id: ContactId,
        name: Option<&str>,
        at: Timestamp,
    ) -> PortResult<bool>;
}

/// The portal URL signing keys: a key of their own (never a webhook signing secret), with
/// rotation. Signing uses `current`; verification accepts `current` and each of `previous`.
pub trait PortalKeys: Send + Sync {
    fn current(&self) -> PortalKey;
    /// Keys of earlier rotations still accepted (URLs live 24 h: keep one a day at least).
    fn previous(&self) -> Vec<PortalKey>;
}

/// What an OAuth grant approves now, for the portal URLs it minted (a URL never does more
/// than its minter may do when it is opened).
pub trait GrantScopes {
    /// The scopes the company's grant `grant` approves now; `None` when it is revoked, unknown
    /// or another company's.
    fn approved_scopes(
        &self,
        company: CompanyId,
        grant: uuid::Uuid,
    ) -> PortResult<Option<Vec<Scope>>>;
}

/// Every store port of customers, as one object.
pub trait CustomerPorts: ContactStore + GrantScopes + Send + Sync {}

impl<T> CustomerPorts for T where T: ContactStore + GrantScopes + Send + Sync {}

//! What customers need from outside: contacts in storage, and the portal signing keys.

use crate::customers::portal::PortalKey;
use crate::customers::{Contact, ContactKind, ContactRef, GivenFields, Upserted};
use crate::kernel::error::PortResult;
use crate::kernel::ids::{CompanyId, ContactId};
use crate::kernel::timestamp::Timestamp;

/// Contacts (customers and vendors in one table).
pub trait ContactStore {
    /// Inserts `contact`, or, when the company already has a contact of the same kind whose
    /// e-mail has the same key (trimmed, lower-case: `Contact::email_key`), updates that one
    /// instead: only the `given` fields take `contact`'s values, `updated_at` becomes
    /// `contact.updated_at`, and id, uid, e-mail and `created_at` stay. MUST be atomic: two
    /// concurrent upserts of one e-mail make one contact (one `Created`, one `Updated`).
    /// `uid` MUST be unique across companies.
    fn upsert_contact(&self, contact: &Contact, given: GivenFields) -> PortResult<Upserted>;
    /// Up to `limit` newest contacts of the company and kind (newest first, ties by id).
    fn contacts(
        &self,
        company: CompanyId,
        kind: ContactKind,
        limit: usize,
    ) -> PortResult<Vec<Contact>>;
    /// The company's contact with this id or uid; `None` for another company's.
    fn contact(&self, company: CompanyId, by: &ContactRef) -> PortResult<Option<Contact>>;
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

/// Every store port of customers, as one object.
pub trait CustomerPorts: ContactStore + Send + Sync {}

impl<T> CustomerPorts for T where T: ContactStore + Send + Sync {}

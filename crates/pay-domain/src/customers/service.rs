//! Customer use cases: upsert by e-mail, list, read, the signed portal URL, and portal access
//! (verified before any portal data is read).

use std::sync::Arc;

use crate::customers::portal::{self, PortalParams, PortalRights};
use crate::customers::ports::{CustomerPorts, PortalKeys};
use crate::customers::{
    wallet_key, Contact, ContactKind, ContactQuery, ContactRef, ContactUpsert, ContactWithWallets,
    CustomerError, PortalRefused, UpsertContactInput, Upserted, LIST_LIMIT, MAX_NAME_CHARS,
    SEARCH_LIMIT,
};
use crate::kernel::error::{Fault, NotFound, PortResult};
use crate::kernel::ids::{CompanyId, ContactId, ContactUid};
use crate::kernel::keyed::{self, Answer, KeyedCall, Seal};
use crate::kernel::service::Kernel;
use crate::kernel::timestamp::Timestamp;
use crate::kernel::validate;
use crate::tenancy::{Credential, Principal, Scope, TenancyService};

/// A portal URL just issued (the portal route's answer): never stored.
#[derive(Debug, Clone, PartialEq)]
pub struct PortalLink {
    pub company_id: CompanyId,
    pub contact: Contact,
    /// `customer.companyAccountId`: the company's account id (its id).
    pub company_account_id: String,
    /// `customer.urls.customerPortal`.
    pub url: String,
    pub expires_at: Timestamp,
}

/// A verified portal visit: only `CustomerService::open_portal` makes one, after the signature
/// and the window were checked. What it names is the one customer the URL was signed for.
#[derive(Debug, Clone, PartialEq)]
pub struct PortalAccess {
    pub(crate) company_id: CompanyId,
    pub(crate) contact: Contact,
    pub(crate) expires: i64,
    pub(crate) form_token: String,
    /// What the URL may do: its minter's rights, within what a grant approves now.
    pub(crate) rights: PortalRights,
}

impl PortalAccess {
    pub fn company_id(&self) -> CompanyId {
        self.company_id
    }

    pub fn contact(&self) -> &Contact {
        &self.contact
    }

    /// When the URL expires (unix seconds).
    pub fn expires(&self) -> i64 {
        self.expires
    }

    /// What this visit may see and do of the customer's subscriptions.
    pub fn rights(&self) -> PortalRights {
        self.rights
    }

    /// A visit as `open_portal` makes it, for renderers' tests only (feature `testing`).
    #[cfg(feature = "testing")]
    pub fn for_tests(company_id: CompanyId, contact: Contact, expires: i64, token: &str) -> Self {
        PortalAccess {
            company_id,
            contact,
            expires,
            form_token: token.to_owned(),
            rights: PortalRights::COMPANY,
        }
    }

    /// The same visit with other rights (renderers' tests only).
    #[cfg(feature = "testing")]
    pub fn with_rights(self, rights: PortalRights) -> Self {
        PortalAccess { rights, ..self }
    }

    /// The token the page's state-changing forms carry (`portal::form_token`), bound to the
    /// signed URL of this visit.
    pub fn form_token(&self) -> &str {
        &self.form_token
    }
}

/// Contacts and the customer portal, over the customers ports only.
#[derive(Clone)]
pub struct CustomerService {
    k: Kernel,
    tenancy: TenancyService,
    store: Arc<dyn CustomerPorts>,
    keys: Arc<dyn PortalKeys>,
}

impl std::fmt::Debug for CustomerService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CustomerService").finish_non_exhaustive()
    }
}

/// An unknown customer, another company's, or a reference that names none.
pub const CUSTOMER_NOT_FOUND: NotFound = NotFound { kind: "Customer" };
const NOT_FOUND: NotFound = CUSTOMER_NOT_FOUND;

impl CustomerService {
    /// The company's customers over the contact store; `keys` sign the customer portal URLs.
    pub fn new(
        k: Kernel,
        tenancy: TenancyService,
        store: Arc<dyn CustomerPorts>,
        keys: Arc<dyn PortalKeys>,
    ) -> CustomerService {
        CustomerService {
            k,
            tenancy,
            store,
            keys,
        }
    }

    /// Creates the company's customer with this e-mail, or updates the given fields of the one
    /// it has (`Created` is the API's 201, `Updated` its 200).
    pub fn upsert_customer(
        &self,
        p: &Principal,
        input: UpsertContactInput,
    ) -> Result<Upserted, CustomerError> {
        let answer = self.upsert_customer_keyed(p, input, None)?;
        answer
            .fresh()
            .ok_or_else(|| Fault::new("an unkeyed call replayed").into())
    }

    /// `upsert_customer` with an `Idempotency-Key` (`kernel::keyed`): the upsert and its
    /// answer (created or updated, as the store decided) commit together; a byte-identical
    /// retry gets that answer, even after the contact changed.
    pub fn upsert_customer_keyed(
        &self,
        p: &Principal,
        input: UpsertContactInput,
        call: Option<KeyedCall<'_, Upserted>>,
    ) -> Result<Answer<Upserted>, CustomerError> {
        p.authorize(Scope::CustomersWrite)?;
        self.k
            .keyed(&p.idempotency_credential(), "customers", call, |sealing| {
                let upsert = input.check()?;
                let now = self.tenancy.company_now(p.company_id)?;
                let given = upsert.given();
                let seal = |u: &Upserted| keyed::completion(sealing, u);
                self.upsert_sealed(
                    p.company_id,
                    ContactKind::Customer,
                    upsert,
                    given,
                    now,
                    &seal,
                )?
                .ok_or_else(|| keyed::claim_lost().into())
            })
    }

    /// The upsert for another use case of the company (a new subscription's customer): no
    /// scope of its own, the caller authorised its own operation.
    pub(crate) fn upsert_for(
        &self,
        company: CompanyId,
        upsert: ContactUpsert,
        now: Timestamp,
    ) -> PortResult<Upserted> {
        let given = upsert.given();
        self.upsert_as(company, ContactKind::Customer, upsert, given, now)
    }

    /// A vendor made inline by another use case of the company (an expense's counterparty):
    /// upserted by e-mail, so the company's customer with that e-mail becomes both. Only a
    /// caller that may manage customers (`pay:customers:write`) changes the fields of a
    /// contact that exists: for any other, the existing contact only gains the vendor role
    /// (a new one is made with the fields given).
    pub(crate) fn upsert_vendor_for(
        &self,
        p: &Principal,
        upsert: ContactUpsert,
        now: Timestamp,
    ) -> PortResult<Contact> {
        let given = if p.authorize(Scope::CustomersWrite).is_ok() {
            upsert.given()
        } else {
            crate::customers::GivenFields::default()
        };
        Ok(self
            .upsert_as(p.company_id, ContactKind::Vendor, upsert, given, now)?
            .into_contact())
    }

    fn upsert_as(
        &self,
        company: CompanyId,
        role: ContactKind,
        upsert: ContactUpsert,
        given: crate::customers::GivenFields,
        now: Timestamp,
    ) -> PortResult<Upserted> {
        self.upsert_sealed(company, role, upsert, given, now, &|_| Ok(None))?
            .ok_or_else(|| Fault::new("an unkeyed upsert lost a claim"))
    }

    /// The upsert, with the completion `seal` makes of what it did written in its
    /// transaction; `None` when the claim was taken over (nothing written).
    fn upsert_sealed(
        &self,
        company: CompanyId,
        role: ContactKind,
        upsert: ContactUpsert,
        given: crate::customers::GivenFields,
        now: Timestamp,
        seal: Seal<'_, Upserted>,
    ) -> PortResult<Option<Upserted>> {
        let contact = Contact {
            id: ContactId(self.k.crypto.new_uuid()),
            uid: self
                .k
                .new_public_id(ContactUid::RANDOM_LEN, ContactUid::from_random)?,
            company_id: company,
            kind: role,
            email: upsert.email,
            name: upsert.name,
            client_id: upsert.client_id,
            metadata: upsert.metadata.unwrap_or_default(),
            created_at: now,
            updated_at: now,
        };
        self.store.upsert_contact_sealed(&contact, given, seal)
    }

    /// Up to 200 newest customers of the company.
    pub fn list_customers(&self, p: &Principal) -> Result<Vec<Contact>, CustomerError> {
        p.authorize(Scope::CustomersRead)?;
        Ok(self
            .store
            .contacts(p.company_id, ContactKind::Customer, LIST_LIMIT)?)
    }

    /// One customer by id or uid; another company's is `NotFound`.
    pub fn get_customer(
        &self,
        p: &Principal,
        by: impl Into<ContactRef>,
    ) -> Result<Contact, CustomerError> {
        p.authorize(Scope::CustomersRead)?;
        self.customer_of(p.company_id, &by.into())
    }

    fn customer_of(&self, company: CompanyId, by: &ContactRef) -> Result<Contact, CustomerError> {
        match self.store.contact(company, by)? {
            Some(c) if c.kind.has(ContactKind::Customer) => Ok(c),
            _ => Err(NOT_FOUND.into()),
        }
    }

    /// Searches the company's contacts (customers, vendors, both) by part of the name, e-mail
    /// or clientId, or by a known wallet address: the one list links, subscriptions and
    /// expenses pick from. Scope `pay:customers:read` or `pay:bookkeeping:read`.
    pub fn search_contacts(
        &self,
        p: &Principal,
        text: &str,
        role: Option<&str>,
    ) -> Result<Vec<ContactWithWallets>, CustomerError> {
        p.authorize(Scope::CustomersRead)
            .or_else(|_| p.authorize(Scope::BookkeepingRead))?;
        let query = ContactQuery::parse(text, role)?;
        Ok(self
            .store
            .search_contacts(p.company_id, &query, SEARCH_LIMIT)?)
    }

    /// The company's contact (any role) by id or uid; `None` for another company's.
    pub(crate) fn contact_by_ref(
        &self,
        company: CompanyId,
        id_or_uid: &str,
    ) -> PortResult<Option<Contact>> {
        match ContactRef::parse(id_or_uid) {
            Some(by) => self.store.contact(company, &by),
            None => Ok(None),
        }
    }

    /// The company's contact with this id.
    pub(crate) fn contact_of(
        &self,
        company: CompanyId,
        id: ContactId,
    ) -> PortResult<Option<Contact>> {
        self.store.contact(company, &ContactRef::Id(id))
    }

    /// Remembers `address` as a known wallet of the company's contact.
    pub(crate) fn remember_wallet(
        &self,
        company: CompanyId,
        contact: ContactId,
        address: &str,
        at: Timestamp,
    ) -> PortResult<()> {
        self.store
            .add_contact_wallet(company, contact, address, &wallet_key(address), at)
    }

    /// The company's contacts that know this wallet address.
    pub(crate) fn contacts_with_wallet(
        &self,
        company: CompanyId,
        address: &str,
    ) -> PortResult<Vec<Contact>> {
        self.store
            .contacts_with_wallet(company, &wallet_key(address))
    }

    /// Issues a portal URL for one of the company's customers (by id or uid), valid 24 hours
    /// on the company's clock, signed with the current portal key. Needs
    /// `pay:customers:write` (the URL renames the customer). The URL does no more than its
    /// minter may (`PortalRights`): an OAuth grant's reaches only that grant's subscriptions,
    /// shows them with `pay:subscriptions:read` and changes them with
    /// `pay:subscriptions:write`.
    pub fn portal_link(
        &self,
        p: &Principal,
        by: impl Into<ContactRef>,
    ) -> Result<PortalLink, CustomerError> {
        p.authorize(Scope::CustomersWrite)?;
        let contact = self.customer_of(p.company_id, &by.into())?;
        let now = self.tenancy.company_now(p.company_id)?;
        let expires = portal::expiry_for(now);
        let rights = match &p.credential {
            Credential::OAuthGrant {
                grant_id, scopes, ..
            } => PortalRights::of_grant(*grant_id, scopes),
            Credential::ApiKey { .. } | Credential::SignIn { .. } => PortalRights::COMPANY,
        };
        let key = portal::rights_key(&self.keys.current(), &rights);
        let signature = portal::sign(&key, p.company_id, &contact.uid, expires);
        // On the company's verified payment-link domain, else the public payment site.
        let url = portal::portal_url(
            &self.tenancy.pay_base(p.company_id)?,
            p.company_id,
            &contact.uid,
            expires,
            &rights,
            &signature,
        );
        let expires_at = Timestamp::from_unix_millis(expires * 1000)
            .ok_or_else(|| Fault::new("portal expiry out of range"))?;
        Ok(PortalLink {
            company_id: p.company_id,
            company_account_id: p.company_id.to_string(),
            contact,
            url,
            expires_at,
        })
    }

    /// Opens a portal visit. The signature is checked first, with no read at all; then the
    /// window on the company's clock (a read of that company's clock only); only then the
    /// customer. Any refusal is `PortalRefused`, whichever check failed.
    pub fn open_portal(&self, params: &PortalParams) -> Result<PortalAccess, CustomerError> {
        self.open(params, None)
    }

    /// Opens a portal visit for a state-changing form: as `open_portal`, and the form's token
    /// must be the one bound to this signed URL (`portal::form_token`), checked with the
    /// signature, before anything is read.
    pub fn open_portal_form(
        &self,
        params: &PortalParams,
        token: &str,
    ) -> Result<PortalAccess, CustomerError> {
        self.open(params, Some(token))
    }

    fn open(
        &self,
        params: &PortalParams,
        token: Option<&str>,
    ) -> Result<PortalAccess, CustomerError> {
        let current = self.keys.current();
        let mut keys = vec![current.clone()];
        keys.extend(self.keys.previous());
        let signed = portal::verify_signature(&keys, params)?;
        if let Some(token) = token {
            portal::verify_form_token(&keys, params, token)?;
        }
        let now = self.tenancy.company_now(signed.company)?;
        portal::check_expiry(signed.expires, now)?;
        // A grant's URL holds no more than the grant approves now: nothing once it is revoked
        // or no longer approves `pay:customers:write` (what minting needed).
        let rights = match signed.rights.grant {
            None => signed.rights,
            Some(grant) => match self.store.approved_scopes(signed.company, grant)? {
                Some(scopes) if scopes.contains(&Scope::CustomersWrite) => {
                    signed.rights.within(&scopes)
                }
                _ => return Err(PortalRefused.into()),
            },
        };
        let contact = self
            .store
            .contact(signed.company, &ContactRef::Uid(signed.customer))?
            .filter(|c| c.kind.has(ContactKind::Customer))
            .ok_or(PortalRefused)?;
        Ok(PortalAccess {
            company_id: signed.company,
            contact,
            expires: signed.expires,
            form_token: portal::form_token(&current, params),
            rights,
        })
    }

    /// The portal's name edit (`clientId` stays read-only there). An empty name clears it.
    pub fn rename_in_portal(
        &self,
        access: &PortalAccess,
        name: &str,
    ) -> Result<Contact, CustomerError> {
        let name = name.trim();
        if !name.is_empty() {
            validate::text("name", name, MAX_NAME_CHARS, false)?;
        }
        let name = (!name.is_empty()).then_some(name);
        let now = self.tenancy.company_now(access.company_id)?;
        if !self
            .store
            .rename_contact(access.company_id, access.contact.id, name, now)?
        {
            return Err(PortalRefused.into());
        }
        Ok(Contact {
            name: name.map(str::to_owned),
            updated_at: now,
            ..access.contact.clone()
        })
    }
}

//! The in-memory store: contacts.

use super::{unique_violation, MemStore};
use crate::customers::ports::ContactStore;
use crate::customers::{
    Contact, ContactKind, ContactQuery, ContactRef, ContactWithWallets, GivenFields, Upserted,
};
use crate::kernel::error::{Fault, PortResult};
use crate::kernel::ids::*;
use crate::kernel::keyed::Seal;
use crate::kernel::timestamp::Timestamp;

impl ContactStore for MemStore {
    fn upsert_contact_sealed(
        &self,
        c: &Contact,
        given: GivenFields,
        seal: Seal<'_, Upserted>,
    ) -> PortResult<Option<Upserted>> {
        self.count_call("upsert_contact");
        // One lock: the upsert and its answer are one transaction (decided on a copy, kept
        // only when the answer is written).
        let mut t = self.write();
        if !t.companies.iter().any(|(x, _)| x.id == c.company_id) {
            return Err(Fault::new("foreign key: company"));
        }
        let key = c.email_key();
        let found = t
            .contacts
            .iter()
            .position(|x| x.company_id == c.company_id && x.email_key() == key);
        let upserted = match found {
            Some(i) => {
                let mut row = t.contacts[i].clone();
                row.kind = row.kind.with(c.kind);
                if given.name {
                    row.name = c.name.clone();
                }
                if given.client_id {
                    row.client_id = c.client_id.clone();
                }
                if given.metadata {
                    row.metadata = c.metadata.clone();
                }
                row.updated_at = c.updated_at;
                Upserted::Updated(row)
            }
            None => {
                if t.contacts.iter().any(|x| x.id == c.id || x.uid == c.uid) {
                    return Err(unique_violation("contacts.uid"));
                }
                Upserted::Created(c.clone())
            }
        };
        let completion = seal(&upserted)?;
        if !super::webhooks::complete(&mut t, completion.as_ref()) {
            return Ok(None);
        }
        match found {
            Some(i) => t.contacts[i] = upserted.contact().clone(),
            None => t.contacts.push(c.clone()),
        }
        Ok(Some(upserted))
    }

    fn contacts(
        &self,
        company: CompanyId,
        kind: ContactKind,
        limit: usize,
    ) -> PortResult<Vec<Contact>> {
        self.count_call("contacts");
        let mut v: Vec<Contact> = self
            .tables()
            .contacts
            .iter()
            .filter(|c| c.company_id == company && c.kind.has(kind))
            .cloned()
            .collect();
        v.sort_by_key(|c| std::cmp::Reverse((c.created_at, c.id)));
        v.truncate(limit);
        Ok(v)
    }

    fn contact(&self, company: CompanyId, by: &ContactRef) -> PortResult<Option<Contact>> {
        self.count_call("contact");
        Ok(self
            .tables()
            .contacts
            .iter()
            .find(|c| {
                c.company_id == company
                    && match by {
                        ContactRef::Id(id) => c.id == *id,
                        ContactRef::Uid(uid) => &c.uid == uid,
                    }
            })
            .cloned())
    }

    fn search_contacts(
        &self,
        company: CompanyId,
        query: &ContactQuery,
        limit: usize,
    ) -> PortResult<Vec<ContactWithWallets>> {
        self.count_call("search_contacts");
        let t = self.tables();
        let text = query.lowered();
        let key = crate::customers::wallet_key(&query.text);
        let wallets_of = |id: ContactId| -> Vec<String> {
            t.contact_wallets
                .iter()
                .filter(|w| w.0 == company && w.1 == id)
                .map(|w| w.2.clone())
                .collect()
        };
        let mut v: Vec<Contact> = t
            .contacts
            .iter()
            .filter(|c| c.company_id == company)
            .filter(|c| query.role.is_none_or(|r| c.kind.has(r)))
            .filter(|c| {
                let part = |s: Option<&str>| s.is_some_and(|s| s.to_lowercase().contains(&text));
                part(Some(&c.email))
                    || part(c.name.as_deref())
                    || part(c.client_id.as_deref())
                    || t.contact_wallets
                        .iter()
                        .any(|w| w.0 == company && w.1 == c.id && w.3 == key)
            })
            .cloned()
            .collect();
        v.sort_by_key(|c| std::cmp::Reverse((c.created_at, c.id)));
        v.truncate(limit);
        Ok(v.into_iter()
            .map(|contact| ContactWithWallets {
                wallets: wallets_of(contact.id),
                contact,
            })
            .collect())
    }

    fn add_contact_wallet(
        &self,
        company: CompanyId,
        contact: ContactId,
        address: &str,
        address_key: &str,
        _at: Timestamp,
    ) -> PortResult<()> {
        self.count_call("add_contact_wallet");
        let mut t = self.write();
        if !t
            .contacts
            .iter()
            .any(|c| c.company_id == company && c.id == contact)
        {
            return Err(Fault::new("foreign key: contact"));
        }
        if !t
            .contact_wallets
            .iter()
            .any(|w| w.1 == contact && w.3 == address_key)
        {
            t.contact_wallets
                .push((company, contact, address.to_owned(), address_key.to_owned()));
        }
        Ok(())
    }

    fn contacts_with_wallet(
        &self,
        company: CompanyId,
        address_key: &str,
    ) -> PortResult<Vec<Contact>> {
        self.count_call("contacts_with_wallet");
        let t = self.tables();
        let mut v: Vec<Contact> = t
            .contacts
            .iter()
            .filter(|c| {
                c.company_id == company
                    && t.contact_wallets
                        .iter()
                        .any(|w| w.0 == company && w.1 == c.id && w.3 == address_key)
            })
            .cloned()
            .collect();
        v.sort_by_key(|c| std::cmp::Reverse((c.created_at, c.id)));
        Ok(v)
    }

    fn rename_contact(
        &self,
        company: CompanyId,
        id: ContactId,
        name: Option<&str>,
        at: Timestamp,
    ) -> PortResult<bool> {
        self.count_call("rename_contact");
        let mut t = self.write();
        let Some(c) = t
            .contacts
            .iter_mut()
            .find(|c| c.company_id == company && c.id == id)
        else {
            return Ok(false);
        };
        c.name = name.map(str::to_owned);
        c.updated_at = at;
        Ok(true)
    }
}

impl crate::customers::ports::GrantScopes for MemStore {
    fn approved_scopes(
        &self,
        company: CompanyId,
        grant: uuid::Uuid,
    ) -> PortResult<Option<Vec<crate::tenancy::Scope>>> {
        self.count_call("approved_scopes");
        Ok(self
            .tables()
            .oauth
            .grants
            .iter()
            .find(|g| g.id.0 == grant && g.company_id == company && g.revoked_at.is_none())
            .map(|g| g.scopes.clone()))
    }
}

//! The in-memory store: contacts.

use super::{unique_violation, MemStore};
use crate::customers::ports::ContactStore;
use crate::customers::{Contact, ContactKind, ContactRef, GivenFields, Upserted};
use crate::kernel::error::{Fault, PortResult};
use crate::kernel::ids::*;
use crate::kernel::timestamp::Timestamp;

impl ContactStore for MemStore {
    fn upsert_contact(&self, c: &Contact, given: GivenFields) -> PortResult<Upserted> {
        self.count_call("upsert_contact");
        let mut t = self.tables();
        if !t.companies.iter().any(|(x, _)| x.id == c.company_id) {
            return Err(Fault::new("foreign key: company"));
        }
        let key = c.email_key();
        if let Some(row) = t
            .contacts
            .iter_mut()
            .find(|x| x.company_id == c.company_id && x.kind == c.kind && x.email_key() == key)
        {
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
            return Ok(Upserted::Updated(row.clone()));
        }
        if t.contacts.iter().any(|x| x.id == c.id || x.uid == c.uid) {
            return Err(unique_violation("contacts.uid"));
        }
        t.contacts.push(c.clone());
        Ok(Upserted::Created(c.clone()))
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
            .filter(|c| c.company_id == company && c.kind == kind)
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

    fn rename_contact(
        &self,
        company: CompanyId,
        id: ContactId,
        name: Option<&str>,
        at: Timestamp,
    ) -> PortResult<bool> {
        self.count_call("rename_contact");
        let mut t = self.tables();
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
